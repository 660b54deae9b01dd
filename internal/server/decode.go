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
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/jsonlimit"
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

// DecodeOptions reads options given as name=value pairs (the CLI's -o,
// api.RawRequest) on top of base as a request's options are read: names,
// ranges and errors as the API's. A malformed pair is an errs.Invalid error.
func DecodeOptions(opts []string, base pipeline.Options) (pipeline.Options, error) {
	if len(opts) == 0 {
		return base, nil
	}
	// The query stands in for the one the options will be used with.
	body, err := api.RawRequest("-", opts)
	if err != nil {
		return base, errs.E(errs.Invalid, "%v", err)
	}
	req, err := DecodeRetrieve(bytes.NewReader(body), base)
	if err != nil {
		return base, err
	}
	return req.Options, nil
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

// Decoding is bounded: a body is read up to its route's limit, then checked
// in one streaming pass (jsonlimit) that stops at the first problem, be it
// an unknown or repeated key, a null, a wrong type, a number out of range,
// nesting past optionRules' or documentRules' depth, or more documents or
// ids than a batch takes; only a body that passes is decoded. A request
// therefore costs time and memory linear in its body, whatever its shape
// (docs/durability.md gives the bound and TestDecodeMemoryIsLinear
// measures it).
var (
	optionRules = jsonlimit.Rules{MaxDepth: jsonlimit.DefaultMaxDepth, MaxFreeDepth: jsonlimit.DefaultMaxFreeDepth}
	maxBatch    = docstore.DefaultLimits().MaxBatch
	// documentRules bounds a batch and its metadata as the store does, and
	// keeps ids exactly: encoding/json would replace invalid UTF-8 and lone
	// surrogate escapes with U+FFFD, turning two different ids into one.
	documentRules = jsonlimit.Rules{MaxDepth: jsonlimit.DefaultMaxDepth, MaxFreeDepth: jsonlimit.DefaultMaxFreeDepth,
		MaxFreeBytes: docstore.DefaultLimits().MaxMetadataBytes,
		MaxItems:     map[string]int{"documents": maxBatch, "ids": maxBatch},
		Exact:        map[string]bool{"documents[].id": true, "ids[]": true}}
)

func decodeStrict(r io.Reader, v any) error {
	return decodeStrictLimit(r, v, api.MaxBodyBytes, optionRules)
}

// decodeStrictLimit is decodeStrict for bodies of up to limit bytes, under rules.
func decodeStrictLimit(r io.Reader, v any, limit int, rules jsonlimit.Rules) error {
	body, err := readBody(r, limit)
	if err != nil {
		return err
	}
	if err := jsonlimit.Check(body, reflect.TypeOf(v).Elem(), rules); err != nil {
		return err
	}
	return decodeChecked(body, v)
}

// decodeWithMethod is decodeStrict for a body that carries the options: a
// method the body names (dmar or paper) first starts *opts over from that
// method, so that the options named beside it override the method's.
func decodeWithMethod(r io.Reader, v any, opts *pipeline.Options) error {
	body, err := readBody(r, api.MaxBodyBytes)
	if err != nil {
		return err
	}
	if err := jsonlimit.Check(body, reflect.TypeOf(v).Elem(), optionRules); err != nil {
		return err
	}
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
	if err := decodeChecked(body, v); err != nil {
		return err
	}
	return checkFilter(*opts)
}

// checkFilter refuses an empty filter list: it would restrict the search to
// no document, and a caller whose list came out empty must not get every
// document instead, nor none without being told.
func checkFilter(o pipeline.Options) error {
	if o.Filter.IDs != nil && len(o.Filter.IDs) == 0 {
		return errs.Field("filter.ids", "is empty, which would match no document; leave filter.ids out to search every document")
	}
	if o.Filter.AnyEntities != nil && len(o.Filter.AnyEntities) == 0 {
		return errs.Field("filter.any_entities", "is empty, which would match no document; leave filter.any_entities out to search every document")
	}
	return nil
}

// readBody reads a request body of at most limit bytes that is not empty.
func readBody(r io.Reader, limit int) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "could not read the request body")
	}
	if len(body) > limit {
		e := &errs.Error{Code: errs.TooLarge, Message: fmt.Sprintf("request body over %d bytes, this route's limit", limit)}
		if f := cutField(body[:limit]); f != "" {
			e.Field = clip(f, maxEcho)
			e.Message += "; it was cut off inside " + e.Field
		}
		return nil, e
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errs.E(errs.Invalid, "request body is empty; send a JSON object")
	}
	return body, nil
}

// decodeChecked decodes a body jsonlimit.Check passed into v (whose keys
// are therefore v's JSON names in exact case): no error is expected.
func decodeChecked(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return jsonError(err)
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

// cutField is the path of the JSON value a body cut short ends inside (e.g.
// query, or documents[3].text), or "" when that is not known: the field that
// made the body too large, or the one the limit fell in.
func cutField(prefix []byte) string {
	type frame struct {
		object bool
		key    string
		index  int
		inKey  bool // an object's next string is a key
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			switch {
			case f.object && f.key != "":
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			case !f.object:
				fmt.Fprintf(&b, "[%d]", f.index)
			}
		}
		return b.String()
	}
	// value notes that a value ended in the innermost container.
	value := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].inKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(prefix))
	for {
		t, err := dec.Token()
		if err != nil {
			// A string cut short leaves its key (or index) open; in an
			// object waiting for a key, the value is not known.
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].inKey {
				stack[n-1].key = ""
			}
			return path()
		}
		n := len(stack)
		switch t := t.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, inKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:n-1]
				value()
			}
		case string:
			if n > 0 && stack[n-1].object && stack[n-1].inKey {
				stack[n-1].key, stack[n-1].inKey = t, false
				continue
			}
			value()
		default:
			value()
		}
	}
}
