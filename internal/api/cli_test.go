package api

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Each -o becomes a member: a JSON value as such, anything else a string.
func TestRawRequest(t *testing.T) {
	b, err := RawRequest("who directed Inception", []string{"k=10", "stage1=hybrid", `filter={"ids":["Q1"]}`, "gate=fixed"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["query"] != "who directed Inception" || got["k"] != 10.0 || got["stage1"] != "hybrid" || got["gate"] != "fixed" {
		t.Errorf("body %s", b)
	}
	if f, ok := got["filter"].(map[string]any); !ok || len(f["ids"].([]any)) != 1 {
		t.Errorf("filter %v", got["filter"])
	}
	if _, err := RawRequest("q", []string{"k"}); err == nil || !strings.Contains(err.Error(), `"k"`) {
		t.Errorf("an option without = : %v", err)
	}
}

// The answer, each citation with its title, and the dropped ones.
func TestWriteAnswer(t *testing.T) {
	res := &AnswerResponse{Answer: "Christopher Nolan [d1].", Citations: []string{"d1"}, DroppedCitations: []string{"d9"}, Model: "m",
		Retrieval: &RetrieveResponse{Results: []Doc{{ID: "d1", Title: "Inception"}}}, TimingsMS: map[string]float64{"retrieve": 12, "generate": 340}}
	var b bytes.Buffer
	if err := WriteAnswer(&b, res); err != nil {
		t.Fatal(err)
	}
	want := "Christopher Nolan [d1].\n  [d1] Inception\n  (dropped citations of documents the model was not shown: d9)\n(m; retrieval 12 ms, answer 340 ms)\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
