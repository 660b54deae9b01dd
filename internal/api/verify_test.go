package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A VerifyRequest is the claim and the options in one flat object, and
// reads back the same; the options' query is never sent.
func TestVerifyRequestJSON(t *testing.T) {
	in := VerifyRequest{Claim: "Inception is a film.", Options: RetrieveRequest{Query: "ignored", K: Ptr(3), Method: Ptr("paper"), Filter: &Filter{IDs: []string{"Q1"}}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if string(m["claim"]) != `"Inception is a film."` || string(m["k"]) != "3" || string(m["method"]) != `"paper"` || m["query"] != nil || len(m) != 4 {
		t.Errorf("body %s", b)
	}
	var out VerifyRequest
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	in.Options.Query = ""
	if !reflect.DeepEqual(out, in) {
		t.Errorf("read back %+v, want %+v", out, in)
	}
	if b, _ := RawVerifyRequest("a claim", []string{"k=2"}); string(b) != `{"claim":"a claim","k":2}` {
		t.Errorf("raw request %s", b)
	}
}

func TestWriteVerdict(t *testing.T) {
	var b strings.Builder
	err := WriteVerdict(&b, &VerifyResponse{Verdict: VerdictSupports, Model: "m", SentencesShown: 4, Sources: []string{"Q1", "Q2"},
		Evidence:  []Evidence{{ID: "Q1", Title: "Inception", Sentence: 2, Text: "Directed by Nolan."}},
		TimingsMS: map[string]float64{"retrieve": 12, "generate": 3400}})
	want := "SUPPORTS\n  [Q1 Inception, sentence 2] Directed by Nolan.\n(m read 4 sentences of Q1, Q2; retrieval 12 ms, verdict 3400 ms)\n"
	if err != nil || b.String() != want {
		t.Errorf("got %q, want %q (%v)", b.String(), want, err)
	}
}
