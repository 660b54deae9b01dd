package jsonlimit_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/jsonlimit"
)

type doc struct {
	ID       string          `json:"id"`
	N        int8            `json:"n"`
	Seed     uint64          `json:"seed"`
	Weight   float32         `json:"weight"`
	On       bool            `json:"on"`
	Tags     []string        `json:"tags"`
	Metadata json.RawMessage `json:"metadata"`
}

type batch struct {
	Documents []doc `json:"documents"`
	Inner     struct {
		IDs []string `json:"ids"`
	} `json:"inner"`
}

var rules = jsonlimit.Rules{MaxDepth: 8, MaxFreeDepth: 3, MaxFreeBytes: 400,
	MaxItems: map[string]int{"documents": 2, "inner.ids": 3},
	Exact:    map[string]bool{"documents[].id": true, "inner.ids[]": true}}

func members(n int) string {
	var out []string
	for i := range n {
		out = append(out, `"k`+strconv.Itoa(i)+`": 1`)
	}
	return strings.Join(out, ", ")
}

func nest(opening, closing string, n int) string {
	return strings.Repeat(opening, n) + strings.Repeat(closing, n)
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name, body string
		code       errs.Code // "" when the body passes
		field      string
		contains   string
	}{
		{"valid", `{"documents": [{"id": "a", "n": -128, "seed": 18446744073709551615, "weight": 1.5, "on": true, "tags": ["x"], "metadata": {"a": [1, {"b": "c"}]}}], "inner": {"ids": ["p", "q"]}}`, "", "", ""},
		{"paired surrogates kept", `{"documents": [{"id": "\ud83d\ude00 \u00e9\ufffd"}]}`, "", "", ""},
		{"metadata at the depth limit", `{"documents": [{"id": "a", "metadata": ` + nest("[", "]", 3) + `}]}`, "", "", ""},
		{"metadata past the depth limit", `{"documents": [{"id": "a", "metadata": {"a": ` + nest("[", "]", 100000) + `}}]}`, errs.Invalid, "documents[0].metadata", "nested deeper than 3 levels"},
		{"free values each within their bytes", `{"documents": [{"metadata": {"a": "` + strings.Repeat("x", 50) + `"}}, {"metadata": {"a": "` + strings.Repeat("x", 50) + `"}}]}`, "", "", ""},
		{"free value over its bytes", `{"documents": [{"metadata": {"a": "` + strings.Repeat("x", 50) + `", "b": 1, "c": [` + strings.Repeat("1,", 100000) + `1]}}]}`, errs.TooLarge, "documents[0].metadata", "over 400 bytes"},
		{"typed value given an array", `{"documents": [{"n": ` + nest("[", "]", 100000) + `}]}`, errs.Invalid, "documents[0].n", "must be int8, got JSON array"},
		{"type error names the index", `{"documents": [{"id": "a"}, {"id": 5}]}`, errs.Invalid, "documents[1].id", "must be string, got JSON number"},
		{"int out of range", `{"documents": [{"n": 128}]}`, errs.Invalid, "documents[0].n", "number 128"},
		{"int given a fraction", `{"documents": [{"n": 1.5}]}`, errs.Invalid, "documents[0].n", "must be int8"},
		{"uint given a negative", `{"documents": [{"seed": -1}]}`, errs.Invalid, "documents[0].seed", "uint64"},
		{"float out of range", `{"documents": [{"weight": 1e39}]}`, errs.Invalid, "documents[0].weight", "float32"},
		{"metadata number out of range", `{"documents": [{"metadata": {"n": 1e999}}]}`, errs.Invalid, "documents[0].metadata.n", "number 1e999 is out of the range"},
		{"bool given a string", `{"documents": [{"on": "yes"}]}`, errs.Invalid, "documents[0].on", "got JSON string"},
		{"too many documents", `{"documents": [{}, {}, {}` + strings.Repeat(`, {}`, 1000) + `]}`, errs.TooLarge, "documents", "over 2 elements"},
		{"too many nested ids", `{"inner": {"ids": ["a", "b", "c", "d"]}}`, errs.TooLarge, "inner.ids", "over 3"},
		{"invalid UTF-8 id", "{\"documents\": [{\"id\": \"bad\xff\"}]}", errs.Invalid, "documents[0].id", "valid UTF-8 (it holds a byte that is not)"},
		{"lone surrogate id", `{"documents": [{"id": "col\ud800"}]}`, errs.Invalid, "documents[0].id", "lone surrogate"},
		{"lone low surrogate id", `{"documents": [{"id": "a"}, {"id": "\udc00x"}]}`, errs.Invalid, "documents[1].id", "lone surrogate"},
		{"high surrogate then a non-surrogate", `{"inner": {"ids": ["\ud800\u0041"]}}`, errs.Invalid, "inner.ids[0]", "lone surrogate"},
		{"escaped quote then a surrogate", `{"inner": {"ids": ["\"\ud800"]}}`, errs.Invalid, "inner.ids[0]", "lone surrogate"},
		{"invalid UTF-8 elsewhere is decoded as encoding/json does", "{\"documents\": [{\"tags\": [\"bad\xff\"]}]}", "", "", ""},
		{"unknown key", `{"documents": [{"ID": "a"}]}`, errs.Invalid, "documents[0].ID", "unknown option"},
		{"repeated key", `{"documents": [{"id": "a", "id": "b"}]}`, errs.Invalid, "documents[0].id", "more than once"},
		{"repeated metadata key", `{"documents": [{"metadata": {"a": 1, "a": 2}}]}`, errs.Invalid, "documents[0].metadata.a", "more than once"},
		{"repeat in a large object", `{"documents": [{"metadata": {` + members(30) + `, "k3": 0, "z": 1}}]}`, errs.Invalid, "documents[0].metadata.k3", "more than once"},
		{"repeat in a large escaped object", `{"documents": [{"metadata": {` + members(30) + `, "\u006b7": 0}}]}`, errs.Invalid, "documents[0].metadata.k7", "more than once"},
		{"a large object without repeats", `{"documents": [{"metadata": {` + members(30) + `}}, {"metadata": {` + members(30) + `}}]}`, "", "", ""},
		{"null", `{"documents": null}`, errs.Invalid, "documents", "null"},
		{"null element", `{"inner": {"ids": ["a", null]}}`, errs.Invalid, "inner.ids[1]", "must not be null"},
		{"root array", `[]`, errs.Invalid, "", "must be a JSON object"},
		{"root string", `"x"`, errs.Invalid, "", "must be a JSON object"},
		{"trailing data", `{} {}`, errs.Invalid, "", "data after the JSON object"},
		{"stray brace", `{}}`, errs.Invalid, "", "data after the JSON object"},
		{"truncated", `{"documents": [{"id": "a"`, errs.Invalid, "", "unexpected end"},
		{"syntax error", `{"documents": [{"id" "a"}]}`, errs.Invalid, "", "malformed JSON at byte"},
		{"empty", ``, errs.Invalid, "", "empty"},
		{"typed and free nesting within the bounds", `{"inner": {"ids": []}, "documents": [{"metadata": [[[]]]}]}`, "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := jsonlimit.Check([]byte(c.body), reflect.TypeOf(batch{}), rules)
			if c.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				var b batch
				if err := json.Unmarshal([]byte(c.body), &b); err != nil {
					t.Fatalf("passed the check but does not decode: %v", err)
				}
				return
			}
			e, ok := errs.As(err)
			if !ok {
				t.Fatalf("error %v is not an *errs.Error", err)
			}
			if e.Code != c.code || e.Field != c.field || !strings.Contains(e.Message, c.contains) {
				t.Fatalf("error %+v, want code %s, field %q, a message containing %q", e, c.code, c.field, c.contains)
			}
			if len(e.Message) > 300 {
				t.Fatalf("a %d-byte message", len(e.Message))
			}
		})
	}
}

// The overall depth bound holds for typed values too, and a prefix names
// the document a value belongs to.
func TestCheckDepthAndPrefix(t *testing.T) {
	type deep struct {
		A [][][][]int `json:"a"`
	}
	err := jsonlimit.Check([]byte(`{"a": [[[[1]]]]}`), reflect.TypeOf(deep{}), jsonlimit.Rules{MaxDepth: 4})
	if e, ok := errs.As(err); !ok || e.Field != "a[0][0][0]" || !strings.Contains(e.Message, "deeper than 4 levels") {
		t.Fatalf("typed nesting past MaxDepth: %v", err)
	}
	err = jsonlimit.Check([]byte(`{"a": {"b": [1, 1e999]}}`), reflect.TypeOf(map[string]any{}), jsonlimit.Rules{Prefix: "documents[4].metadata"})
	if e, ok := errs.As(err); !ok || e.Field != "documents[4].metadata.a.b[1]" || !strings.Contains(e.Message, "1e999") {
		t.Fatalf("prefixed: %v", err)
	}
	err = jsonlimit.Check([]byte(`[1]`), reflect.TypeOf(map[string]any{}), jsonlimit.Rules{Prefix: "documents[4].metadata"})
	if e, ok := errs.As(err); !ok || e.Field != "documents[4].metadata" || e.Message != "documents[4].metadata: must be a JSON object" {
		t.Fatalf("prefixed root: %v", err)
	}
}

// A long key is clipped where an error names it.
func TestCheckClipsNames(t *testing.T) {
	long := strings.Repeat("k", 10000)
	r := rules
	r.MaxFreeBytes = 0
	err := jsonlimit.Check([]byte(`{"documents": [{"metadata": {"`+long+`": {"`+long+`": 1, "`+long+`": 2}}}]}`), reflect.TypeOf(batch{}), r)
	e, ok := errs.As(err)
	if !ok || len(e.Field) > 70 || len(e.Message) > 400 || !strings.Contains(e.Message, "more than once") {
		t.Fatalf("error %.300v", err)
	}
}
