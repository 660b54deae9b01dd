package jsonlimit_test

import (
	"encoding/json"
	"reflect"
	"runtime/metrics"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/jsonlimit"
)

// allocs reads the bytes this process has allocated.
func allocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// FuzzCheck holds the checker to encoding/json and to its resource bound:
// it never panics; a document it passes is valid JSON that decodes into
// the type without an error; a document encoding/json finds invalid is
// refused; every refusal is a client error with a short message; and it
// allocates at most 16 bytes per input byte (plus a constant), however the
// document nests.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"documents": [{"id": "a", "title": "t", "text": "x", "metadata": {"a": [[[1]]]}}]}`,
		`{"documents": [{"id": "a", "metadata": {"a": ` + strings.Repeat("[", 2000) + `}}]}`,
		`{"documents": [{"id": "a", "metadata": ` + strings.Repeat(`{"a":`, 2000) + `}}]}`,
		`{"documents": [{"n": ` + strings.Repeat("[", 2000) + `}]}`,
		`{"documents": [{"id": " sp"}, {"id": "sp "}]}`, `{"documents": [{"id": "col\ud800"}, {"id": "col\ufffd"}]}`,
		"{\"documents\": [{\"id\": \"bad\xff\"}]}", `{"documents": [{"metadata": {"n": 1e999}}]}`,
		`{"documents": [{"id": 5}]}`, `{"documents": [{"id": "\t"}]}`, `{"inner": {"ids": ["\ud83d\ude00", "\"\ud800"]}}`,
		`{"documents": [{"metadata": {"a": 1, "a": 2}}]}`, `{"documents": null}`, `[]`, `{} {}`, `{"documents": [`, ``,
		`{"documents": [{"seed": -1, "weight": 1e39, "on": "yes"}]}`, `{"\u0064ocuments": []}`, `{"documents": [{"metadata": {"k\u0031": 1, "k1": 2}}]}`,
	} {
		f.Add([]byte(s))
	}
	batchType := reflect.TypeOf(batch{})
	f.Fuzz(func(t *testing.T, body []byte) {
		// The least of two runs: the fuzzing engine allocates beside them.
		var err error
		least := ^uint64(0)
		for range 2 {
			before := allocs()
			err = jsonlimit.Check(body, batchType, rules)
			least = min(least, allocs()-before)
		}
		if least > 16*uint64(len(body))+256<<10 {
			t.Fatalf("a %d-byte document allocated %d bytes", len(body), least)
		}
		if err != nil {
			e, ok := errs.As(err)
			if !ok || (e.Code != errs.Invalid && e.Code != errs.TooLarge) || e.Message == "" ||
				utf8.RuneCountInString(e.Message) > 400 || utf8.RuneCountInString(e.Field) > 70 {
				t.Fatalf("refusal %#v is not a short client error", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("passed a document encoding/json finds invalid: %q", body)
		}
		var b batch
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatalf("passed a document that does not decode: %v", err)
		}
	})
}
