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

	"github.com/dmar-kg/dmar/internal/datapath/datatest"
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
	dir := datatest.CopyBundle(t, "codexm-film", "not json\n")
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
	g2 := datatest.RoundTrip(t, g, memkg.Load)
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
	writeGob(t, p, &v1{Version: 1, Entities: []kg.Entity{{QID: "Q1", Label: "x"}},
		Relations: map[string]kg.Relation{"P31": {PID: "P31", Label: "instance of"}}})
	if _, err := memkg.Load(p); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("old snapshot: err = %v", err)
	}
}

// TestDamagedSnapshotIsRefused: rows that do not fit the entity table (a
// neighbour past the last entity, degrees that do not add up) are an error
// naming the snapshot, never a panic in a later query.
func TestDamagedSnapshotIsRefused(t *testing.T) {
	type v3 struct {
		Version      int
		Entities     []kg.Entity
		RelationList []kg.Relation
		PIDs         []string
		Adj          []uint64
		NTriples     int
	}
	ents := []kg.Entity{{QID: "Q1", Label: "a", Degree: 1}, {QID: "Q2", Label: "b", Degree: 1}}
	good := []uint64{adj(1, 0), adj(0, 1)} // Q1 -P31-> Q2, and its incoming half
	for name, c := range map[string]v3{
		"neighbour out of range": {Version: 3, Entities: ents, PIDs: []string{"P31"}, Adj: []uint64{adj(7, 0), adj(0, 1)}, NTriples: 1},
		"property out of range":  {Version: 3, Entities: ents, PIDs: []string{"P31"}, Adj: []uint64{adj(1, 4), adj(0, 5)}, NTriples: 1},
		"degrees do not add up":  {Version: 3, Entities: ents, PIDs: []string{"P31"}, Adj: good[:1], NTriples: 1},
		"triple count":           {Version: 3, Entities: ents, PIDs: []string{"P31"}, Adj: good, NTriples: 2},
	} {
		p := filepath.Join(t.TempDir(), "kg.gob")
		writeGob(t, p, &c)
		if _, err := memkg.Load(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err = %v, want an error naming the file", name, err)
		}
	}
	// The same rows, undamaged, load and answer.
	p := filepath.Join(t.TempDir(), "kg.gob")
	writeGob(t, p, &v3{Version: 3, Entities: ents, PIDs: []string{"P31"}, Adj: good, NTriples: 1})
	g, err := memkg.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if tr := g.Triples(); len(tr) != 1 || tr[0] != (kg.Triple{Head: "Q1", PID: "P31", Tail: "Q2"}) {
		t.Errorf("triples %v", tr)
	}
}

// TestRepeatedAndLoopTriples: a repeated triple counts once, a self-loop
// twice in its entity's degree (once out, once in), as the bundle's
// definition of degree says; unknown entities' triples are skipped.
func TestRepeatedAndLoopTriples(t *testing.T) {
	ents := []kg.Entity{{QID: "Q2", Label: "b"}, {QID: "Q1", Label: "a"}}
	tr := []kg.Triple{{Head: "Q1", PID: "P31", Tail: "Q2"}, {Head: "Q1", PID: "P31", Tail: "Q2"}, {Head: "Q1", PID: "P1", Tail: "Q1"},
		{Head: "Q1", PID: "P31", Tail: "Q9"}}
	g := memkg.New(ents, map[string]kg.Relation{"P31": {PID: "P31", Label: "instance of"}}, tr)
	if _, n, _ := g.Stats(); n != 2 {
		t.Errorf("%d triples, want 2", n)
	}
	if d := g.AllEntities()[0].Degree; d != 3 {
		t.Errorf("Q1's degree %d, want 3", d)
	}
	sgs, _ := g.Subgraphs(context.Background(), []string{"Q1"}, kg.SubgraphParams{Hops: 1, MaxNodes: 10})
	want := []kg.Edge{{From: "Q1", To: "Q1", PID: "P1"}, {From: "Q1", To: "Q2", PID: "P31", Label: "instance of"}}
	if got := sgs["Q1"].Edges; !reflect.DeepEqual(got, want) {
		t.Errorf("edges %+v, want %+v", got, want)
	}
}

// writeGob writes v gob-encoded to path.
func writeGob(t *testing.T, path string, v any) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := gob.NewEncoder(f).Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// adj is a packed adjacency entry: the neighbour's index, then the property's.
func adj(neighbour, pid uint64) uint64 { return neighbour<<32 | pid }
