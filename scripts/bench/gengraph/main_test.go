package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A small real bundle grown to 20,000 edges: the real lines come first and
// unchanged, the total is exact, synthetic edges have no self-loop or repeat,
// synthetic QIDs and labels cannot collide with real ones, the tails are
// heavy-tailed, and the same seed gives the same bytes.
func TestGrow(t *testing.T) {
	in := t.TempDir()
	realTriples := "Q1\tP31\tQ5\nQ2\tP31\tQ5\nQ2\tP27\tQ30\n"
	realEnts := `{"qid": "Q1", "label": "Douglas Adams"}` + "\n" + `{"qid": "Q2", "label": "Zqaa lookalike"}` + "\n"
	for f, b := range map[string]string{"triples.tsv": realTriples, "entities.jsonl": realEnts, "relations.json": `{"P31": {"label": "instance of"}, "P27": {"label": "country of citizenship"}}`} {
		if err := os.WriteFile(filepath.Join(in, f), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	grow := func(seed uint64) string {
		out := t.TempDir()
		if err := (gen{in: in, out: out, edges: 20000, meanOut: 12, zipf: 1.05, seed: seed}).run(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b, c := grow(1), grow(1), grow(2)
	read := func(dir, f string) []byte { x, _ := os.ReadFile(filepath.Join(dir, f)); return x }
	for _, f := range []string{"triples.tsv", "entities.jsonl", "relations.json"} {
		if !bytes.Equal(read(a, f), read(b, f)) {
			t.Errorf("%s differs between two runs with one seed", f)
		}
	}
	if bytes.Equal(read(a, "triples.tsv"), read(c, "triples.tsv")) {
		t.Error("another seed gave the same triples")
	}
	triples := string(read(a, "triples.tsv"))
	if !strings.HasPrefix(triples, realTriples) || !strings.HasPrefix(string(read(a, "entities.jsonl")), realEnts) {
		t.Fatal("real lines not kept first")
	}
	lines := strings.Split(strings.TrimSpace(triples), "\n")
	if len(lines) != 20000 {
		t.Fatalf("%d edges, want 20000", len(lines))
	}
	seen, in5 := map[string]bool{}, 0
	for _, l := range lines[3:] {
		f := strings.Split(l, "\t")
		if f[0] == f[2] || seen[l] || len(f[0]) != 11 || f[0] < "Q1000000000" || (f[1] != "P31" && f[1] != "P27") {
			t.Fatalf("bad synthetic edge %q", l)
		}
		seen[l] = true
		if f[2] == "Q5" {
			in5++
		}
	}
	// Q5 has the highest real degree, so the Zipf law's first rank: a hub.
	if in5 < 1000 {
		t.Errorf("Q5 got %d synthetic in-edges; the tails are not heavy-tailed", in5)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(read(a, "entities.jsonl"))), "\n")[2:] {
		if !strings.Contains(l, `"label": "Zq`) || !strings.Contains(l, `"qid": "Q1`) {
			t.Fatalf("synthetic entity line %q", l)
		}
	}
	// A real label word of the synthetic form is refused, not shadowed.
	if err := os.WriteFile(filepath.Join(in, "entities.jsonl"), []byte(realEnts+`{"qid": "Q3", "label": "Zqb"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (gen{in: in, out: t.TempDir(), edges: 20000, meanOut: 12, zipf: 1.05, seed: 1}).run(); err == nil || !strings.Contains(err.Error(), `"Zqb"`) {
		t.Errorf("collision: %v", err)
	}
}
