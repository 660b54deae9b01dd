package bundlesink

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
)

// TestRoundTripCodexmFilm copies the real codexm-film bundle through the
// sink and reads it back: the same graph, and a rerun writes the same bytes.
func TestRoundTripCodexmFilm(t *testing.T) {
	src, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	ctx := context.Background()
	in, err := bundle.Read(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var first map[string][]byte
	for run := 0; run < 2; run++ {
		s := New(dir)
		rels := make([]kg.Relation, 0, len(in.Relations))
		for _, r := range in.Relations {
			rels = append(rels, r)
		}
		if err := s.WriteRelations(ctx, rels); err != nil {
			t.Fatal(err)
		}
		// Written twice: the sink keeps one of each.
		for i := 0; i < 2; i++ {
			if err := s.WriteEntities(ctx, in.Entities); err != nil {
				t.Fatal(err)
			}
			if err := s.WriteTriples(ctx, in.Triples); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, f := range []string{"triples.tsv", "entities.jsonl", "relations.json"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			files[f] = b
		}
		if first == nil {
			first = files
		} else if !reflect.DeepEqual(files, first) {
			t.Fatal("rerun wrote different bytes")
		}
	}
	out, err := bundle.Read(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	// Lead names come from the corpus beside a bundle (bundle.Read), which
	// the sink does not write: the entities it wrote are the rest.
	want := slices.Clone(in.Entities)
	for i := range want {
		want[i].LeadNames = nil
	}
	if !reflect.DeepEqual(out.Entities, want) || !reflect.DeepEqual(out.Triples, in.Triples) {
		t.Fatalf("round trip differs: %d/%d entities, %d/%d triples", len(out.Entities), len(in.Entities), len(out.Triples), len(in.Triples))
	}
	for pid, r := range out.Relations {
		if in.Relations[pid].Label != r.Label {
			t.Fatalf("relation %s label %q, want %q", pid, r.Label, in.Relations[pid].Label)
		}
	}
	if out.Stats.EntitiesBad+out.Stats.TriplesBad+out.Stats.TriplesDuplicate != 0 {
		t.Fatalf("read back: %+v", out.Stats)
	}
}

func TestRejectsBadIDs(t *testing.T) {
	s := New(t.TempDir())
	ctx := context.Background()
	if s.WriteEntities(ctx, []kg.Entity{{QID: "x"}}) == nil || s.WriteTriples(ctx, []kg.Triple{tr("Q1", "P1", "P2")}) == nil ||
		s.WriteRelations(ctx, []kg.Relation{{PID: "Q1"}}) == nil {
		t.Fatal("bad ids accepted")
	}
}

func tr(h, p, t string) kg.Triple { return kg.Triple{Head: h, PID: p, Tail: t} }

func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = string(b)
	}
	return out
}

// TestFailedRunKeepsPreviousBundle: a Close whose context is done, or an
// Abort, after a good run leaves that run's three files byte-identical and
// no temporary file behind (Close used to write triples.tsv and
// entities.jsonl before it looked at the context).
func TestFailedRunKeepsPreviousBundle(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := New(dir)
	if err := errors.Join(s.WriteRelations(ctx, []kg.Relation{{PID: "P57", Label: "director"}}),
		s.WriteEntities(ctx, []kg.Entity{{QID: "Q25188", Label: "Inception"}, {QID: "Q25191", Label: "Christopher Nolan"}}),
		s.WriteTriples(ctx, []kg.Triple{tr("Q25188", "P57", "Q25191")}), s.Close(ctx)); err != nil {
		t.Fatal(err)
	}
	good := dirFiles(t, dir)
	if len(good) != 3 {
		t.Fatalf("files %v", good)
	}
	for _, name := range []string{"done context", "abort"} {
		s := New(dir)
		if err := errors.Join(s.WriteEntities(ctx, []kg.Entity{{QID: "Q1", Label: "other"}}),
			s.WriteTriples(ctx, []kg.Triple{tr("Q1", "P31", "Q2")})); err != nil {
			t.Fatal(err)
		}
		var err error
		if name == "abort" {
			err = s.Abort()
		} else {
			done, cancel := context.WithCancel(ctx)
			cancel()
			if err = s.Close(done); err == nil {
				t.Fatalf("%s: Close succeeded", name)
			}
			err = nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := dirFiles(t, dir); !reflect.DeepEqual(got, good) {
			t.Fatalf("%s: the bundle changed or temporaries remain: %d files", name, len(got))
		}
	}
}
