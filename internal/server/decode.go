package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

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
// The CLI's local query decodes with it too, so both answer alike.
func DecodeRetrieve(r io.Reader, defaults pipeline.Options) (RetrieveInput, error) {
	req := RetrieveInput{Options: defaults}
	err := decodeStrict(r, &req)
	return req, err
}

// DecodeLink reads a link request strictly.
func DecodeLink(r io.Reader) (api.LinkRequest, error) {
	var req api.LinkRequest
	if err := decodeStrict(r, &req); err != nil {
		return req, err
	}
	if strings.TrimSpace(req.Text) == "" {
		return req, errs.Field("text", "must not be empty")
	}
	if n := len([]rune(req.Text)); n > pipeline.MaxQueryChars {
		return req, &errs.Error{Code: errs.TooLarge, Field: "text", Message: fmt.Sprintf("text: %d characters, the limit is %d", n, pipeline.MaxQueryChars)}
	}
	return req, nil
}

func decodeStrict(r io.Reader, v any) error {
	body, err := io.ReadAll(io.LimitReader(r, api.MaxBodyBytes+1))
	if err != nil {
		return errs.Wrap(errs.Invalid, err, "could not read the request body")
	}
	if len(body) > api.MaxBodyBytes {
		return &errs.Error{Code: errs.TooLarge, Message: fmt.Sprintf("request body over %d bytes", api.MaxBodyBytes)}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errs.E(errs.Invalid, "request body is empty; send a JSON object")
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
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return errs.Field(name, "unknown option")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errs.E(errs.Invalid, "malformed JSON: unexpected end of input")
	}
	return errs.E(errs.Invalid, "malformed JSON: %v", err)
}
