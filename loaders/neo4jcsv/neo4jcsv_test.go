package neo4jcsv

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s is not valid CSV: %v", path, err)
	}
	return recs
}

func write(t *testing.T, dir string, o Options) {
	t.Helper()
	ctx := context.Background()
	s, err := New(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	steps := []error{
		s.WriteRelations(ctx, []kg.Relation{{PID: "P57", Label: "director"}, {PID: "P161", Label: `cast "member", main`}}),
		s.WriteEntities(ctx, []kg.Entity{
			{QID: "Q25188", Label: `Inception, "the film"`, Aliases: []string{"Inception (film)", "a\x1fb", "two\nlines"}, Description: "2010 film\r\nby Nolan"},
			{QID: "Q25191", Label: "Christopher Nolan"},
			{QID: "Q25188", Label: "written twice: ignored"},
		}),
		s.WriteTriples(ctx, []kg.Triple{tr("Q25188", "P57", "Q25191"), tr("Q25188", "P161", "Q1"), tr("Q25188", "P57", "Q25191")}),
		s.WriteTriples(ctx, []kg.Triple{tr("Q25188", "P57", "Q25191"), tr("Q25191", "P19", "Q84")}),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSinkFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, Options{})
	nodes := readCSV(t, filepath.Join(dir, NodesFile))
	wantNodes := [][]string{
		NodeHeader,
		{"Q25188", "Entity", `Inception, "the film"`, "2010 film by Nolan", "Inception (film)\x1fa b\x1ftwo lines", "2"},
		{"Q25191", "Entity", "Christopher Nolan", "", "", "2"},
		{"Q1", "Entity", "Q1", "", "", "1"},
		{"Q84", "Entity", "Q84", "", "", "1"},
	}
	if !reflect.DeepEqual(nodes, wantNodes) {
		t.Fatalf("nodes:\n%q\nwant\n%q", nodes, wantNodes)
	}
	rels := readCSV(t, filepath.Join(dir, RelationshipsFile))
	wantRels := [][]string{
		RelHeader,
		{"Q25188", "Q25191", "P57", "P57", "director"},
		{"Q25188", "Q1", "P161", "P161", `cast "member", main`},
		{"Q25191", "Q84", "P19", "P19", ""},
	}
	if !reflect.DeepEqual(rels, wantRels) {
		t.Fatalf("relationships:\n%q\nwant\n%q", rels, wantRels)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, NodesFile))
	if !strings.Contains(string(raw), `"Inception, ""the film"""`) {
		t.Fatalf("quotes not doubled inside a quoted field:\n%s", raw)
	}
	if n := strings.Count(string(raw), "\n"); n != len(wantNodes) {
		t.Fatalf("%d lines for %d records: a field spans lines", n, len(wantNodes))
	}
	// A rerun overwrites and leaves no temporary files behind.
	before := map[string][]byte{}
	for _, f := range []string{NodesFile, RelationshipsFile} {
		before[f], _ = os.ReadFile(filepath.Join(dir, f))
	}
	write(t, dir, Options{})
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Fatalf("files after rerun: %v", ents)
	}
	for f, b := range before {
		if after, _ := os.ReadFile(filepath.Join(dir, f)); !bytes.Equal(after, b) {
			t.Fatalf("%s changed on rerun", f)
		}
	}
}

func TestSinkRejectsBadIDs(t *testing.T) {
	s, err := New(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	ctx := context.Background()
	if s.WriteEntities(ctx, []kg.Entity{{QID: "Q1\",x"}}) == nil || s.WriteTriples(ctx, []kg.Triple{tr("Q1", "31", "Q2")}) == nil ||
		s.WriteRelations(ctx, []kg.Relation{{PID: "X"}}) == nil {
		t.Fatal("bad ids accepted")
	}
}

func tr(h, p, t string) kg.Triple { return kg.Triple{Head: h, PID: p, Tail: t} }

// TestFailedRunKeepsPreviousFiles: after a good run, an aborted sink or a
// Close whose context is done leaves nodes.csv and relationships.csv
// byte-identical and no temporary file behind.
func TestFailedRunKeepsPreviousFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, Options{})
	read := func() map[string]string {
		out := map[string]string{}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			out[e.Name()] = string(b)
		}
		return out
	}
	good := read()
	if len(good) != 2 {
		t.Fatalf("files %v", good)
	}
	ctx := context.Background()
	for _, name := range []string{"abort", "done context"} {
		s, err := New(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteEntities(ctx, []kg.Entity{{QID: "Q1", Label: "other"}}); err != nil {
			t.Fatal(err)
		}
		if name == "abort" {
			if err := s.Abort(); err != nil {
				t.Fatal(err)
			}
		} else {
			done, cancel := context.WithCancel(ctx)
			cancel()
			if s.Close(done) == nil {
				t.Fatal("Close succeeded with a done context")
			}
		}
		if got := read(); !reflect.DeepEqual(got, good) {
			t.Fatalf("%s: files changed or temporaries remain: %v", name, len(got))
		}
	}
}
