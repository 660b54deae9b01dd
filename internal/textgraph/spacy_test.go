package textgraph_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

// spacyPython is the interpreter scripts/setup/50-spacy.sh installs; the
// test is skipped without it, and fails under CI=true.
func spacyPython(t *testing.T) string {
	t.Helper()
	p := config.DefaultTextGraphPython(config.CacheDir(os.Getenv))
	if _, err := os.Stat(p); err != nil {
		msg := "spaCy's environment is missing at " + p + "; run scripts/setup.sh"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// The spaCy process finds named entities and noun phrases, keeps the
// passages' order over batches, and reports a missing interpreter clearly.
func TestSpacyExtractor(t *testing.T) {
	sp := &textgraph.Spacy{Python: spacyPython(t)}
	defer sp.Close()
	ctx := context.Background()
	ps := make([]textgraph.Passage, 70) // more than one batch
	for i := range ps {
		ps[i] = textgraph.Passage{ID: "p", Title: "Inception", Text: "Inception is a 2010 science fiction film directed by Christopher Nolan."}
	}
	ps[69].Text = "The Prestige was filmed in Los Angeles."
	ex, err := sp.Extract(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != len(ps) {
		t.Fatalf("%d extractions for %d passages", len(ex), len(ps))
	}
	kinds := map[string]textgraph.Kind{}
	for _, p := range ex[0].Phrases {
		kinds[p.Text] = p.Kind
	}
	if k, ok := kinds["Christopher Nolan"]; !ok || k != textgraph.Named {
		t.Errorf("first passage: %+v, want Christopher Nolan as a named entity", ex[0].Phrases)
	}
	if _, ok := kinds["2010 science fiction film"]; !ok {
		t.Errorf("first passage: %+v, want the noun phrase without its article", ex[0].Phrases)
	}
	last := ""
	for _, p := range ex[69].Phrases {
		last += p.Text + ";"
	}
	if !strings.Contains(last, "Los Angeles") {
		t.Errorf("the last passage's phrases %q lack Los Angeles (order kept over batches?)", last)
	}
	if sp.Model() == "" || sp.PeakRSS() <= 0 {
		t.Errorf("model %q, peak RSS %d: want both known while the process runs", sp.Model(), sp.PeakRSS())
	}
	// Two processes share the batches and give the same extractions, in
	// the passages' order.
	two := &textgraph.Spacy{Python: sp.Python, Processes: 2}
	defer two.Close()
	ex2, err := two.Extract(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ex, ex2); diff != "" {
		t.Errorf("two processes (-one +two):\n%s", diff)
	}
	if one, both := sp.PeakRSS(), two.PeakRSS(); both < one*3/2 {
		t.Errorf("peak RSS of two processes %d, of one %d: did the second process run?", both, one)
	}
	bad := &textgraph.Spacy{Python: "/nonexistent/python"}
	if _, err := bad.Extract(ctx, ps[:1]); err == nil || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("a missing interpreter: %v, want an error that says how to install it", err)
	}
}
