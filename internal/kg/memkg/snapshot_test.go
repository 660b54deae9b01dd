package memkg_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
)

// TestSnapshotDeterministic: two fresh builds of the same bundle, saved,
// are byte-identical files (gob writes maps in random order).
func TestSnapshotDeterministic(t *testing.T) {
	dir := t.TempDir()
	var first []byte
	for run := 0; run < 4; run++ {
		g, _ := load(t, "codexm-film")
		p := filepath.Join(dir, "kg.gob")
		if err := g.Save(p); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("save %d differs from the first (%d vs %d bytes)", run, len(b), len(first))
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("files left beside the snapshot: %v", ents)
	}
}

// TestSnapshotKeepsLoadStats: a graph loaded from its snapshot reports the
// bundle's read statistics (bad lines included) as the first build did.
func TestSnapshotKeepsLoadStats(t *testing.T) {
	src, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"triples.tsv", "entities.jsonl", "relations.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "entities.jsonl" {
			b = append(b, "not json\n"...)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	b, err := bundle.Read(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Stats.EntitiesBad != 1 {
		t.Fatalf("stats %+v", b.Stats)
	}
	g := memkg.FromBundle(b)
	if st, ok := g.BundleStats(); !ok || !reflect.DeepEqual(st, b.Stats) {
		t.Fatalf("FromBundle's stats %+v, %v", st, ok)
	}
	p := filepath.Join(t.TempDir(), "kg.gob")
	if err := g.Save(p); err != nil {
		t.Fatal(err)
	}
	g2, err := memkg.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := g2.BundleStats()
	if !ok || !reflect.DeepEqual(st, b.Stats) {
		t.Fatalf("snapshot stats %+v (%v), want %+v", st, ok, b.Stats)
	}
	if !reflect.DeepEqual(g2.AllEntities(), g.AllEntities()) || !reflect.DeepEqual(g2.Triples(), g.Triples()) {
		t.Fatal("the snapshot is a different graph")
	}
	for pid := range b.Relations {
		r1, _ := g.Relation(pid)
		r2, ok := g2.Relation(pid)
		if !ok || r1 != r2 {
			t.Fatalf("relation %s: %+v vs %+v", pid, r1, r2)
		}
	}
	// A graph built without a bundle has no stats to report.
	if _, ok := memkg.New(nil, nil, nil).BundleStats(); ok {
		t.Fatal("New reports bundle stats")
	}
}

// TestOldSnapshotIsRejected: a version-1 snapshot (relations as a map) is
// refused with a version error, so the caller rebuilds it.
func TestOldSnapshotIsRejected(t *testing.T) {
	type v1 struct {
		Version   int
		Entities  []kg.Entity
		Relations map[string]kg.Relation
		Triples   []kg.Triple
	}
	p := filepath.Join(t.TempDir(), "kg.gob")
	f, _ := os.Create(p)
	gob.NewEncoder(f).Encode(&v1{Version: 1, Entities: []kg.Entity{{QID: "Q1", Label: "x"}},
		Relations: map[string]kg.Relation{"P31": {PID: "P31", Label: "instance of"}}})
	f.Close()
	if _, err := memkg.Load(p); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("old snapshot: err = %v", err)
	}
}
