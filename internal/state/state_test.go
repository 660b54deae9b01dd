package state_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/datapath/datatest"
	"github.com/dmar-kg/dmar/internal/state"
)

// The fingerprint names the snapshots already in users' state folders: it
// must not change (the value is the one cmd/dmar computed before the move).
func TestFingerprintIsStable(t *testing.T) {
	d := t.TempDir()
	a, b := filepath.Join(d, "a.tsv"), filepath.Join(d, "b.json")
	if err := os.WriteFile(a, []byte("Q1\tP1\tQ2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := state.Fingerprint([]string{a, b}, "kgkey", "enc-v1")
	if err != nil || k != "88c036021358fbbe" {
		t.Fatalf("Fingerprint = %q, %v; want 88c036021358fbbe", k, err)
	}
	// Content and name count, not the folder.
	d2 := t.TempDir()
	for _, p := range []string{a, b} {
		raw, _ := os.ReadFile(p)
		if err := os.WriteFile(filepath.Join(d2, filepath.Base(p)), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if k2, _ := state.Fingerprint([]string{filepath.Join(d2, "a.tsv"), filepath.Join(d2, "b.json")}, "kgkey", "enc-v1"); k2 != k {
		t.Errorf("same files in another folder: %s, want %s", k2, k)
	}
	if k3, _ := state.Fingerprint([]string{a, b}, "kgkey", "enc-v2"); k3 == k {
		t.Error("another encoder version gave the same fingerprint")
	}
	if _, err := state.Fingerprint([]string{filepath.Join(d, "missing")}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing input: %v", err)
	}
}

// The graph is parsed once, then read from its snapshot under the same key.
func TestGraphSnapshot(t *testing.T) {
	dir, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	in := state.Inputs{Bundle: dir, Dir: t.TempDir()}
	g1, k1, err := in.Graph(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(in.Dir, "kg-"+k1+".gob")); err != nil {
		t.Fatalf("no snapshot: %v", err)
	}
	g2, k2, err := in.Graph(t.Context())
	if err != nil || k2 != k1 {
		t.Fatalf("second load: key %s, %v; want %s", k2, err, k1)
	}
	e1, t1, r1 := g1.Stats()
	e2, t2, r2 := g2.Stats()
	if e1 != e2 || t1 != t2 || r1 != r2 || e1 == 0 {
		t.Errorf("snapshot has %d/%d/%d, parsed %d/%d/%d", e2, t2, r2, e1, t1, r1)
	}
}

// A rerun that reads the graph from its snapshot reports the bundle's bad and
// repeated lines as the first run did (issue 13: they used to vanish).
func TestGraphSnapshotKeepsTheReport(t *testing.T) {
	dir := copyFilm(t, "{\"qid\":\"Q25191\",\"label\":\"EVIL OVERRIDE\"}\nnot json\n")
	var first, second strings.Builder
	state1 := t.TempDir()
	if _, _, err := (state.Inputs{Bundle: dir, Dir: state1, Log: &first}).Graph(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := (state.Inputs{Bundle: dir, Dir: state1, Log: &second}).Graph(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(second.String(), "from the snapshot") {
		t.Fatalf("second run did not read the snapshot:\n%s", second.String())
	}
	counts := func(s string) string { return s[strings.Index(s, "\n")+1:] }
	if counts(first.String()) != counts(second.String()) {
		t.Fatalf("the rerun reports differently:\nfirst:\n%s\nsecond:\n%s", first.String(), second.String())
	}
	for _, want := range []string{"duplicates 1", "skipped as bad 1", "repeats line"} {
		if !strings.Contains(second.String(), want) {
			t.Errorf("rerun report lacks %q:\n%s", want, second.String())
		}
	}
}

// The graph's key covers the corpus beside the bundle, which gives the
// entities their lead names: a changed lead is a new graph, whose entity has
// the new name (the snapshot under the old key would not).
func TestGraphKeyCoversTheCorpus(t *testing.T) {
	dir := copyFilm(t, "")
	in := state.Inputs{Bundle: dir, Dir: t.TempDir()}
	_, k0, err := in.Graph(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	corpus := filepath.Join(dir, "corpus.jsonl")
	leadOf := func(name string) (string, []string) {
		t.Helper()
		line := `{"id":"Q25191","title":"x","text":"Christopher Nolan, known professionally as ` + name + `, is a director."}` + "\n"
		if err := os.WriteFile(corpus, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		g, k, err := in.Graph(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		es, err := g.Entities(t.Context(), []string{"Q25191"})
		if err != nil {
			t.Fatal(err)
		}
		return k, es["Q25191"].LeadNames
	}
	k1, n1 := leadOf("Chris Nolan")
	k2, n2 := leadOf("Kit Nolan")
	if k1 == k0 || k2 == k1 {
		t.Errorf("keys %s (no corpus), %s, %s: a corpus and a changed corpus must each give a new key", k0, k1, k2)
	}
	if len(n1) != 1 || n1[0] != "Chris Nolan" || len(n2) != 1 || n2[0] != "Kit Nolan" {
		t.Errorf("lead names %q then %q, want [Chris Nolan] then [Kit Nolan]", n1, n2)
	}
}

// copyFilm copies codexm-film's bundle files (not its corpus) into a
// temporary folder, with extraEntities appended to entities.jsonl.
func copyFilm(t *testing.T, extraEntities string) string {
	t.Helper()
	return datatest.CopyBundle(t, "codexm-film", extraEntities)
}
