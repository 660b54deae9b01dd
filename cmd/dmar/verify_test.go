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

// dmar verify --server sends the claim and options as built and prints the
// verdict with its quoted evidence; without a generator a local verify
// says how to get one.
func TestVerifyCommand(t *testing.T) {
	var gotBody map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/verify" {
			http.NotFound(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &gotBody)
		_ = json.NewEncoder(w).Encode(api.VerifyResponse{Verdict: api.VerdictSupports, ModelVerdict: api.VerdictSupports, Model: "m",
			Evidence: []api.Evidence{{ID: "Q25188", Title: "Inception", Sentence: 0, Text: "Inception is a 2010 film directed by Christopher Nolan.", Number: 1}},
			Sources:  []string{"Q25188"}, SentencesShown: 3, TimingsMS: map[string]float64{"retrieve": 12, "generate": 3400}})
	}))
	defer srv.Close()
	var out bytes.Buffer
	if err := runVerify(context.Background(), []string{"--server", srv.URL, "-o", "k=3", "Inception", "was", "directed", "by", "Nolan."}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if gotBody["claim"] != "Inception was directed by Nolan." || gotBody["k"] != 3.0 || gotBody["query"] != nil {
		t.Errorf("body %v", gotBody)
	}
	for _, want := range []string{"SUPPORTS\n", "[Q25188 Inception, sentence 0] Inception is a 2010 film", "verdict 3400 ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	err := runVerify(context.Background(), []string{"Inception was directed by Nolan."}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--chat-url") {
		t.Errorf("no generator: %v", err)
	}
}
