package server_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/api"
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
	for _, s := range retrieveSeeds {
		f.Add([]byte(s))
	}
	defaults := pipeline.Defaults()
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := server.DecodeRetrieve(bytes.NewReader(body), defaults)
		if err != nil {
			e, ok := errs.As(err)
			if !ok || (e.Code != errs.Invalid && e.Code != errs.TooLarge) {
				t.Fatalf("rejection %v (code %s) is not a client error", err, errs.CodeOf(err))
			}
			if e.Message == "" {
				t.Fatal("a rejection without a message")
			}
			return
		}
		if len(body) > api.MaxBodyBytes || !json.Valid(bytes.TrimSpace(body)) {
			t.Fatalf("accepted a body that is too large or not JSON: %q", body)
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("accepted request does not encode: %v", err)
		}
		back, err := server.DecodeRetrieve(bytes.NewReader(again), defaults)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", again, err)
		}
		if !reflect.DeepEqual(normal(back), normal(req)) {
			t.Fatalf("round trip changed the request:\n%+v\n%+v", req, back)
		}
	})
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
