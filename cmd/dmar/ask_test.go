package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
)

// dmar ask --server sends the body as built and prints the answer with its
// cited documents' titles; without a generator a local ask says how to get one.
func TestAsk(t *testing.T) {
	var gotBody map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/answer" {
			http.NotFound(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &gotBody)
		_ = json.NewEncoder(w).Encode(api.AnswerResponse{Answer: "Christopher Nolan [Q25191]", Citations: []string{"Q25191"}, DroppedCitations: []string{"Q7"},
			Model: "m", TimingsMS: map[string]float64{"retrieve": 12, "generate": 3400},
			Retrieval: &api.RetrieveResponse{Results: []api.Doc{{ID: "Q25191", Title: "Christopher Edward Nolan"}}}})
	}))
	defer srv.Close()
	var out bytes.Buffer
	if err := runAsk(context.Background(), []string{"--server", srv.URL, "-o", "k=3", "Who directed Inception?"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if gotBody["query"] != "Who directed Inception?" || gotBody["k"] != 3.0 {
		t.Errorf("body %v", gotBody)
	}
	for _, want := range []string{"Christopher Nolan [Q25191]\n", "[Q25191] Christopher Edward Nolan", "dropped citations", "Q7", "answer 3400 ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	err := runAsk(context.Background(), []string{"Who directed Inception?"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--chat-url") {
		t.Errorf("no generator: %v", err)
	}
}
