package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
)

// Decoding is exactly as strict as documented: keys match in exact case,
// a key may appear once, null is not a value, not even inside an array, and
// the body is one JSON object. Each refusal is a 400 naming the field.
func TestStrictDecoding(t *testing.T) {
	h := router(t)
	for _, c := range []struct {
		name, path, body string
		field, contains  string
	}{
		{"upper-case key", "/v1/retrieve", `{"QUERY": "Inception"}`, "QUERY", "unknown option"},
		{"mixed-case option", "/v1/retrieve", `{"query": "Inception", "K": 2}`, "K", "unknown option"},
		{"mixed-case nested key", "/v1/retrieve", `{"query": "Inception", "filter": {"IDs": ["a"]}}`, "filter.IDs", "unknown option"},
		{"mixed-case link key", "/v1/link", `{"Text": "Inception"}`, "Text", "unknown option"},
		{"duplicate key", "/v1/retrieve", `{"query": "Inception", "k": 2, "k": 3}`, "k", "more than once"},
		{"duplicate query", "/v1/retrieve", `{"query": "a", "query": "Inception"}`, "query", "more than once"},
		{"duplicate nested key", "/v1/retrieve", `{"query": "Inception", "filter": {"ids": ["a"], "ids": ["b"]}}`, "filter.ids", "more than once"},
		{"duplicate link key", "/v1/link", `{"text": "a", "text": "Inception"}`, "text", "more than once"},
		{"null option", "/v1/retrieve", `{"query": "Inception", "k": null}`, "k", "null"},
		{"null query", "/v1/retrieve", `{"query": null}`, "query", "null"},
		{"null filter", "/v1/retrieve", `{"query": "Inception", "filter": null}`, "filter", "null"},
		{"null in an array", "/v1/retrieve", `{"query": "Inception", "filter": {"any_entities": ["Q1", null]}}`, "filter.any_entities[1]", "null"},
		{"null text", "/v1/link", `{"text": null}`, "text", "null"},
		{"null body", "/v1/retrieve", `null`, "", "JSON object"},
		{"array body", "/v1/link", `["Inception"]`, "", "JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := do(t, h, "POST", c.path, c.body)
			if w.Code != 400 {
				t.Fatalf("status %d, want 400: %s", w.Code, w.Body)
			}
			var body api.ErrorBody
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("not an error body: %s", w.Body)
			}
			if body.Error.Field != c.field || !strings.Contains(body.Error.Message, c.contains) {
				t.Errorf("error %+v, want field %q and a message containing %q", body.Error, c.field, c.contains)
			}
		})
	}
}

// Both texts are trimmed before they are measured, by the same rule, and a
// text with nothing visible in it (NULs, other control or format characters,
// whitespace) is refused naming the field.
func TestQueryTextRules(t *testing.T) {
	h := router(t)
	padded := strings.Repeat(" ", 50) + strings.Repeat("a", api.MaxQueryChars) + strings.Repeat("\n", 50)
	for _, c := range []struct {
		name, path, body string
		status           int
		field            string
	}{
		{"padded query at the limit", "/v1/retrieve", `{"query": "` + strings.ReplaceAll(padded, "\n", `\n`) + `"}`, 200, ""},
		{"padded text at the limit", "/v1/link", `{"text": "` + strings.ReplaceAll(padded, "\n", `\n`) + `"}`, 200, ""},
		{"query over the limit", "/v1/retrieve", `{"query": "` + strings.Repeat("a", api.MaxQueryChars+1) + `"}`, 413, "query"},
		{"text over the limit", "/v1/link", `{"text": "` + strings.Repeat("a", api.MaxQueryChars+1) + `"}`, 413, "text"},
		{"NUL query", "/v1/retrieve", `{"query": "\u0000\u0000\u0000"}`, 400, "query"},
		{"NUL text", "/v1/link", `{"text": "\u0000\u0000"}`, 400, "text"},
		{"control query", "/v1/retrieve", `{"query": " \u0001\u001f\u007f\u0085 "}`, 400, "query"},
		{"format-only text", "/v1/link", `{"text": "\u200b\u200d\ufeff"}`, 400, "text"},
		{"whitespace query", "/v1/retrieve", `{"query": " \t\n\u00a0\u3000"}`, 400, "query"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := do(t, h, "POST", c.path, c.body)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %.300s", w.Code, c.status, w.Body)
			}
			if c.status == 200 {
				return
			}
			var body api.ErrorBody
			_ = json.Unmarshal(w.Body.Bytes(), &body)
			if body.Error.Field != c.field {
				t.Errorf("error %+v, want field %q", body.Error, c.field)
			}
		})
	}
}
