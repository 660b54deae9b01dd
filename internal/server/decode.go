package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// RetrieveInput is a decoded POST /v1/retrieve body: the query and the
// options, the defaults overlaid with those the body names. Its JSON fields
// are api.RetrieveRequest's (a test holds them equal).
type RetrieveInput struct {
	Query string `json:"query"`
	pipeline.Options
}

// DecodeRetrieve reads a retrieve request strictly: unknown fields, wrong
// types, trailing data and oversized bodies are errors naming the problem.
// The CLI's local query decodes with it too, so both answer alike. A method
// the body names (dmar, paper) replaces the defaults' before the other
// options it names apply.
func DecodeRetrieve(r io.Reader, defaults pipeline.Options) (RetrieveInput, error) {
	req := RetrieveInput{Options: defaults}
	if err := decodeWithMethod(r, &req, &req.Options); err != nil {
		return req, err
	}
	return req, checkText("query", req.Query)
}

// DecodeLink reads a link request strictly.
func DecodeLink(r io.Reader) (api.LinkRequest, error) {
	var req api.LinkRequest
	if err := decodeStrict(r, &req); err != nil {
		return req, err
	}
	return req, checkText("text", req.Text)
}

// checkText is the one rule for a query and a link text: surrounding
// whitespace is trimmed before anything is measured; what is left must hold
// a visible character (not only whitespace, control or format characters
// such as NUL or U+200B) and be at most MaxQueryChars characters.
func checkText(field, s string) error {
	s = strings.TrimSpace(s)
	if !strings.ContainsFunc(s, visible) {
		return errs.Field(field, "must not be empty (or only whitespace and control characters)")
	}
	if n := utf8.RuneCountInString(s); n > pipeline.MaxQueryChars {
		return &errs.Error{Code: errs.TooLarge, Field: field, Message: fmt.Sprintf("%s: %d characters, the limit is %d", field, n, pipeline.MaxQueryChars)}
	}
	return nil
}

func visible(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r)
}

func decodeStrict(r io.Reader, v any) error { return decodeStrictLimit(r, v, api.MaxBodyBytes) }

// decodeStrictLimit is decodeStrict for bodies of up to limit bytes.
func decodeStrictLimit(r io.Reader, v any, limit int) error {
	body, err := readBody(r, limit)
	if err != nil {
		return err
	}
	return decodeBody(body, v)
}

// decodeWithMethod is decodeStrict for a body that carries the options: a
// method the body names (dmar or paper) first starts *opts over from that
// method, so that the options named beside it override the method's.
func decodeWithMethod(r io.Reader, v any, opts *pipeline.Options) error {
	body, err := readBody(r, api.MaxBodyBytes)
	if err != nil {
		return err
	}
	// A method of the wrong type or case is left to decodeBody, which names it.
	var m struct {
		Method *string `json:"method"`
	}
	if json.Unmarshal(body, &m) == nil && m.Method != nil {
		o, err := opts.WithMethod(*m.Method)
		if err != nil {
			return err
		}
		*opts = o
	}
	return decodeBody(body, v)
}

// readBody reads a request body of at most limit bytes that is not empty.
func readBody(r io.Reader, limit int) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "could not read the request body")
	}
	if len(body) > limit {
		return nil, &errs.Error{Code: errs.TooLarge, Message: fmt.Sprintf("request body over %d bytes", limit)}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errs.E(errs.Invalid, "request body is empty; send a JSON object")
	}
	return body, nil
}

// decodeBody decodes body into v strictly.
func decodeBody(body []byte, v any) error {
	// encoding/json matches keys case-insensitively, lets a later duplicate
	// win and reads null as "leave it": checkShape refuses all three first.
	// A syntax error it meets is left to Decode, which words it.
	if err := checkShape(body, reflect.TypeOf(v).Elem()); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	// Not dec.More(): it reports false for a stray '}' or ']' after the object.
	if len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return errs.E(errs.Invalid, "request body has data after the JSON object")
	}
	return nil
}

// jsonError turns encoding/json's errors into messages that name the field.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return errs.E(errs.Invalid, "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		// Promoted fields of the embedded Options come back as "Options.k".
		field := strings.TrimPrefix(typ.Field, "Options.")
		if field == "" {
			field = "body"
		}
		return errs.Field(field, "must be %s, got JSON %s", typ.Type.String(), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := clip(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), maxEcho)
		return errs.Field(name, "unknown option")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errs.E(errs.Invalid, "malformed JSON: unexpected end of input")
	}
	return errs.E(errs.Invalid, "malformed JSON: %v", err)
}

// shapeError is a refusal by checkShape; any other error it meets is a
// syntax error, worded by the decoder instead.
type shapeError struct{ err *errs.Error }

func (e shapeError) Error() string { return e.err.Error() }

// checkShape walks the body's first JSON value against t: the body must be
// an object; at every level a key must be one of the struct's JSON names in
// exact case and appear once; no value, nor an array's element, may be null.
func checkShape(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errs.E(errs.Invalid, "request body must be a JSON object")
	}
	err = walkObject(dec, t, "")
	var se shapeError
	if errors.As(err, &se) {
		return se.err
	}
	return nil
}

// walkObject reads an object's members after its '{'. t is the struct it
// decodes to, or nil where any key goes (a map, or a type without fields).
func walkObject(dec *json.Decoder, t reflect.Type, path string) error {
	fields := jsonFields(t)
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		name := clip(key, maxEcho)
		if path != "" {
			name = path + "." + name
		}
		var ft reflect.Type
		if fields != nil {
			var ok bool
			if ft, ok = fields[key]; !ok {
				return shapeError{errs.Field(name, "unknown option (keys are matched in exact case)")}
			}
		} else if t != nil && t.Kind() == reflect.Map {
			ft = t.Elem()
		}
		if seen[key] {
			return shapeError{errs.Field(name, "given more than once")}
		}
		seen[key] = true
		if err := walkValue(dec, ft, name, name); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// walkValue reads one value named by field (where is the same with an index).
func walkValue(dec *json.Decoder, t reflect.Type, field, where string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok := tok.(type) {
	case nil:
		e := errs.Field(field, "must not be null (leave the key out to keep the default)")
		if where != field {
			e.Message = where + ": must not be null"
		}
		return shapeError{e}
	case json.Delim:
		switch tok {
		case '{':
			return walkObject(dec, t, field)
		case '[':
			var et reflect.Type
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				et = t.Elem()
			}
			for i := 0; dec.More(); i++ {
				if err := walkValue(dec, et, field, fmt.Sprintf("%s[%d]", where, i)); err != nil {
					return err
				}
			}
			_, err := dec.Token() // ']'
			return err
		}
	}
	return nil
}

// jsonFields maps a struct's JSON names, embedded structs' included, to their
// types; nil for a type that is not a struct.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
