package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/server"
)

var retrieveSeeds = []string{
	`{"query": "Who directed Inception?"}`,
	`{"query": "q", "k": 10, "n": 50, "shapley": "montecarlo", "samples": 20, "seed": 7}`,
	`{"query": "q", "filter": {"ids": ["a", "b"], "any_entities": ["Q42"]}, "persist": true}`,
	`{"query": "q", "stage1": "hybrid", "stage1_alpha": 0.25, "fusion": "rankedFusion"}`,
	`{"query": "q", "k": "ten"}`, `{"query": "q", "bogus": 1}`, `{"query": "q"} {}`, `{"query": `, ``, `[]`, `null`,
	`{"query": "\u0000\ud800", "lambda": 1e309}`, `{"query": "q", "k": -1, "hops": 99}`,
	`{"QUERY": "q"}`, `{"query": "q", "k": 1, "k": 2}`, `{"query": "q", "k": null}`, `{"query": "q", "filter": {"any_entities": [null]}}`,
	`{"query": "q", "filter": {"IDS": ["a"]}}`, `{"query": "\u0000"}`,
	`{"query": "q", "method": "dmar"}`, `{"query": "q", "method": "paper", "graph_recall": 2}`, `{"query": "q", "method": "nope"}`,
	`{"method": 1, "query": "q"}`, `{"query": "q", "Method": "dmar"}`,
}

// The decoder never panics; every rejection is a client error (a code a
// client can act on, never internal); every accepted body is a JSON object
// within the size limit whose request survives a round trip.
func FuzzDecodeRetrieve(f *testing.F) {
	decode := withDefaults(server.DecodeRetrieve)
	fuzzDecode(f, append(retrieveSeeds, issue34Seeds...), decode, func(t *testing.T, body []byte, req server.RetrieveInput) {
		if len(body) > api.MaxBodyBytes || !json.Valid(bytes.TrimSpace(body)) {
			t.Fatalf("accepted a body that is too large or not JSON: %q", body)
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("accepted request does not encode: %v", err)
		}
		back, err := decode(bytes.NewReader(again))
		if err != nil {
			t.Fatalf("re-decoding %s: %v", again, err)
		}
		if !reflect.DeepEqual(normal(back), normal(req)) {
			t.Fatalf("round trip changed the request:\n%+v\n%+v", req, back)
		}
	})
}

// fuzzDecode fuzzes decode from seeds: it never panics, every rejection is
// a client error with a message (checkRejection), and accepted checks what
// it accepts.
func fuzzDecode[T any](f *testing.F, seeds []string, decode func(io.Reader) (T, error), accepted func(t *testing.T, body []byte, req T)) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decode(bytes.NewReader(body))
		if err != nil {
			checkRejection(t, err)
			return
		}
		accepted(t, body, req)
	})
}

// withDefaults is decode over the pipeline's defaults.
func withDefaults[T any](decode func(io.Reader, pipeline.Options) (T, error)) func(io.Reader) (T, error) {
	defaults := pipeline.Defaults()
	return func(r io.Reader) (T, error) { return decode(r, defaults) }
}

// normal makes nil and empty filter lists equal (omitempty drops both).
func normal(r server.RetrieveInput) server.RetrieveInput {
	if len(r.Filter.IDs) == 0 {
		r.Filter.IDs = nil
	}
	if len(r.Filter.AnyEntities) == 0 {
		r.Filter.AnyEntities = nil
	}
	return r
}

func FuzzDecodeLink(f *testing.F) {
	for _, s := range []string{`{"text": "Inception"}`, `{"text": ""}`, `{"text": "   "}`, `{"text": 5}`, `{"txt": "a"}`,
		`{"text": "a"}x`, `{"text": "` + strings.Repeat("é", 2001) + `"}`, `{"Text": "a"}`, `{"text": "a", "text": "b"}`,
		`{"text": null}`, `{"text": "\u0000"}`, `{"text": "  ` + strings.Repeat("a", 2000) + `  "}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := server.DecodeLink(bytes.NewReader(body))
		if err != nil {
			if c := errs.CodeOf(err); c != errs.Invalid && c != errs.TooLarge {
				t.Fatalf("rejection %v has code %s", err, c)
			}
			return
		}
		// Measured after trimming, like a query.
		if trimmed := strings.TrimSpace(req.Text); trimmed == "" || utf8.RuneCountInString(trimmed) > pipeline.MaxQueryChars {
			t.Fatalf("accepted text %q (%d runes)", req.Text, utf8.RuneCountInString(req.Text))
		}
	})
}

// Issue 34's bodies: nesting that used to cost memory quadratic in its
// depth, ids that were rewritten into one another, numbers out of range.
var issue34Seeds = []string{
	`{"query": "x", "k": ` + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `}`,
	`{"query": "x", "filter": {"ids": ` + strings.Repeat("[", 3000) + `}}`,
	`{"documents": [{"id": "a", "title": "t", "text": "x", "metadata": {"a": ` + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `}}]}`,
	`{"documents": [{"id": "a", "text": "x", "metadata": ` + strings.Repeat(`{"a":`, 3000) + `1` + strings.Repeat("}", 3000) + `}]}`,
	`{"documents": [{"id": " sp", "text": "x"}, {"id": "sp ", "text": "x"}]}`,
	`{"documents": [{"id": "col\ud800", "text": "x"}, {"id": "col\ufffd", "text": "x"}]}`,
	"{\"documents\": [{\"id\": \"bad\xff\", \"text\": \"x\"}, {\"id\": \"bad\xfe\", \"text\": \"x\"}]}",
	`{"documents": [{"id": 7, "text": "x"}]}`, `{"documents": [{"id": "\t", "text": "x"}]}`,
	`{"documents": [{"id": "n", "text": "x", "metadata": {"n": 1e999}}]}`,
	`{"ids": ["col\ud800", "bad` + "\xff" + `", " sp"]}`, `{"ids": [` + strings.Repeat(`"x",`, 300) + `"x"]}`,
}

// checkRejection fails unless err is a client error with a message.
func checkRejection(t *testing.T, err error) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || (e.Code != errs.Invalid && e.Code != errs.TooLarge) || e.Message == "" {
		t.Fatalf("rejection %v (code %s) is not a client error", err, errs.CodeOf(err))
	}
}

// checkExactIDs fails when an accepted id holds U+FFFD that the body did
// not send: an id is kept exactly or refused, never repaired.
func checkExactIDs(t *testing.T, body []byte, ids []string) {
	t.Helper()
	sent := bytes.Contains(body, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(body), []byte(`\ufffd`))
	for _, id := range ids {
		if !utf8.ValidString(id) || strings.ContainsRune(id, utf8.RuneError) && !sent {
			t.Fatalf("id %q was repaired, not kept", id)
		}
	}
}

func FuzzDecodeAnswer(f *testing.F) {
	seeds := append(append([]string{`{"query": "Who directed Inception?", "stream": false}`}, retrieveSeeds...), issue34Seeds...)
	fuzzDecode(f, seeds, withDefaults(server.DecodeAnswer), func(t *testing.T, body []byte, _ server.AnswerInput) {
		if len(body) > api.MaxBodyBytes || !json.Valid(bytes.TrimSpace(body)) {
			t.Fatalf("accepted a body that is too large or not JSON: %q", body)
		}
	})
}

func FuzzDecodePutDocuments(f *testing.F) {
	seeds := append([]string{`{"documents": [{"id": "d1", "title": "Inception", "text": "A film.", "metadata": {"year": 2010, "tags": ["a"]}}]}`,
		`{"documents": []}`, `{}`, `{"documents": [{"id": "a", "body": "x"}]}`}, issue34Seeds...)
	fuzzDecode(f, seeds, server.DecodePutDocuments, func(t *testing.T, body []byte, req api.PutDocumentsRequest) {
		if !json.Valid(bytes.TrimSpace(body)) || len(req.Documents) > docstore.DefaultLimits().MaxBatch {
			t.Fatalf("accepted %q (%d documents)", body, len(req.Documents))
		}
		var ids []string
		for _, d := range req.Documents {
			ids = append(ids, d.ID)
			if len(d.Metadata) > docstore.DefaultLimits().MaxMetadataBytes || len(d.Metadata) > 0 && !json.Valid(d.Metadata) {
				t.Fatalf("accepted metadata %q", d.Metadata)
			}
		}
		checkExactIDs(t, body, ids)
	})
}

func FuzzDecodeDeleteDocuments(f *testing.F) {
	seeds := append([]string{`{"ids": ["a", "b"]}`, `{"ids": []}`, `{"ids": null}`, `{"IDS": ["a"]}`}, issue34Seeds...)
	fuzzDecode(f, seeds, server.DecodeDeleteDocuments, func(t *testing.T, body []byte, req api.DeleteDocumentsRequest) {
		if len(req.IDs) > docstore.DefaultLimits().MaxBatch {
			t.Fatalf("accepted %d ids", len(req.IDs))
		}
		checkExactIDs(t, body, req.IDs)
	})
}
