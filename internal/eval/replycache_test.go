package eval

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/chat"
)

var (
	shaA = strings.Repeat("a", 64)
	shaB = strings.Repeat("b", 64)
)

// countingReader is a chat endpoint that answers "reply N" to its Nth call,
// or fails every call after the first fail.
func countingReader(t *testing.T, failAfter int64) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		k := n.Add(1)
		if failAfter > 0 && k > failAfter {
			w.WriteHeader(500)
			return
		}
		b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"content": "Paris [d1]"}}}})
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestReplyCacheResumesDedupesAndKeysByModel(t *testing.T) {
	srv, calls := countingReader(t, 0)
	path := filepath.Join(t.TempDir(), "replies.jsonl")
	ask := func(model string, qs ...string) {
		t.Helper()
		rc, err := OpenReplyCache(path, model)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		rd := &Reader{BaseURL: srv.URL, Model: "m", Replies: rc}
		for _, q := range qs {
			rec := Record{Metrics: map[string]float64{}}
			readerMetrics(context.Background(), Config{Reader: rd, ReaderK: 3}, Question{Question: q, Answers: []string{"Paris"}}, []answer.Source{{ID: "d1", Title: "Paris", Text: "Paris is the capital of France."}}, &rec)
			if rec.Error != "" || rec.Metrics["em"] != 1 {
				t.Fatalf("%q: %+v", q, rec)
			}
		}
	}
	ask(shaA, "capital of France?", "capital of France?", "largest city of France?")
	if calls.Load() != 2 {
		t.Fatalf("%d calls for two distinct prompts, one asked twice", calls.Load())
	}
	// A rerun (a resumed run) asks nothing it has; a new prompt is asked once.
	ask(shaA, "capital of France?", "largest city of France?", "city on the Seine?")
	if calls.Load() != 3 {
		t.Fatalf("%d calls after the rerun, want 3", calls.Load())
	}
	// Another model's weights miss every prompt.
	ask(shaB, "capital of France?")
	if calls.Load() != 4 {
		t.Fatalf("%d calls after a changed model, want 4", calls.Load())
	}
	rc, err := OpenReplyCache(path, shaA)
	if err != nil || rc.Len() != 3 || rc.Bad != 0 {
		t.Fatalf("reopened: %v, %d replies, %d bad", err, rc.Len(), rc.Bad)
	}
	rc.Close()
}

// A reader that dies mid-run loses no reply it gave, and a torn last line
// (a crash mid-write) is reported and kept, never cut.
func TestReplyCacheSurvivesAReaderThatDies(t *testing.T) {
	srv, _ := countingReader(t, 2)
	path := filepath.Join(t.TempDir(), "replies.jsonl")
	rc, err := OpenReplyCache(path, shaA)
	if err != nil {
		t.Fatal(err)
	}
	rd := &Reader{BaseURL: srv.URL, Model: "m", Replies: rc}
	errors := 0
	for _, q := range []string{"q1?", "q2?", "q3?", "q4?"} {
		rec := Record{Metrics: map[string]float64{}}
		readerMetrics(context.Background(), Config{Reader: rd}, Question{Question: q, Answers: []string{"Paris"}}, []answer.Source{{ID: "d1", Title: "Paris", Text: "Paris."}}, &rec)
		if rec.Error != "" {
			errors++
		}
	}
	rc.Close()
	if errors != 2 {
		t.Fatalf("%d errors, want the last two calls failed", errors)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"model_sha256":"` + shaA + `","request_sha2`); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rc, err = OpenReplyCache(path, shaA)
	if err != nil || rc.Len() != 2 || rc.Bad != 1 {
		t.Fatalf("after a torn write: %v, %d replies, %d bad", err, rc.Len(), rc.Bad)
	}
	if err := rc.Put(RequestKey([]chat.Message{{Role: "user", Content: "new"}}, nil, 0), "r"); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"request_sha2`) {
		t.Errorf("the torn line was cut")
	}
	rc, err = OpenReplyCache(path, shaA)
	if err != nil || rc.Len() != 3 || rc.Bad != 1 {
		t.Fatalf("a reply after the torn line: %v, %d replies, %d bad", err, rc.Len(), rc.Bad)
	}
	rc.Close()
	if _, err := OpenReplyCache(path, "short"); err == nil {
		t.Error("a model sha256 of the wrong length was accepted")
	}
}

func TestRequestKey(t *testing.T) {
	m := []chat.Message{{Role: "user", Content: "a"}}
	if RequestKey(m, nil, 48) == RequestKey(m, nil, 96) || RequestKey(m, nil, 48) == RequestKey(m, &chat.Schema{Name: "s", Schema: []byte(`{}`)}, 48) ||
		RequestKey(m, nil, 48) == RequestKey([]chat.Message{{Role: "user", Content: "b"}}, nil, 48) || RequestKey(m, nil, 48) != RequestKey(append([]chat.Message(nil), m...), nil, 48) {
		t.Error("the key must follow the messages, the schema and the length bound, and only them")
	}
}
