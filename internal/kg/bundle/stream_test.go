package bundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

// recorder is a kg.Sink that keeps what it is given, batch by batch.
type recorder struct {
	ents    []kg.Entity
	triples []kg.Triple
	rels    map[string]kg.Relation
	batches int
	failAt  int // fail the WriteTriples call of this number (1-based); 0 never
	calls   int
}

func (r *recorder) WriteEntities(_ context.Context, es []kg.Entity) error {
	r.ents = append(r.ents, es...)
	r.batches++
	return nil
}

func (r *recorder) WriteTriples(_ context.Context, ts []kg.Triple) error {
	r.calls++
	if r.calls == r.failAt {
		return errors.New("disk full")
	}
	r.triples = append(r.triples, ts...)
	r.batches++
	return nil
}

func (r *recorder) WriteRelations(_ context.Context, rs []kg.Relation) error {
	r.rels = map[string]kg.Relation{}
	for _, x := range rs {
		r.rels[x.PID] = x
	}
	return nil
}

func (r *recorder) Close(context.Context) error { return nil }

// TestStreamMatchesRead: on the film bundle with a repeated entity, a
// repeated triple and a bad line added, Stream hands the sink exactly the
// triples Read keeps (same order), the entities of entities.jsonl Read
// keeps, the same relations, and reports the same counts and problems.
func TestStreamMatchesRead(t *testing.T) {
	dir := copyFilm(t)
	appendTo(t, filepath.Join(dir, "entities.jsonl"), `{"qid":"Q25191","label":"EVIL OVERRIDE"}`+"\n"+`{"qid":"X1","label":"bad"}`+"\n")
	tp := filepath.Join(dir, "triples.tsv")
	first := strings.SplitN(readFile(t, tp), "\n", 2)[0]
	appendTo(t, tp, first+"\nQ1\tP31\n")
	ctx := context.Background()
	want := mustRead(t, dir)
	rec := &recorder{}
	st, err := Stream(ctx, dir, rec, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rec.triples, want.Triples) {
		t.Fatalf("triples: %d streamed, %d read, or in another order", len(rec.triples), len(want.Triples))
	}
	if !reflect.DeepEqual(rec.rels, want.Relations) {
		t.Fatalf("relations differ: %v\nwant %v", rec.rels, want.Relations)
	}
	byQID := map[string]kg.Entity{}
	for _, e := range want.Entities {
		e.Degree = 0 // Read's own count; a sink counts degrees itself
		byQID[e.QID] = e
	}
	if len(rec.ents) != want.Stats.EntitiesLoaded {
		t.Fatalf("%d entities streamed, Read loaded %d from entities.jsonl", len(rec.ents), want.Stats.EntitiesLoaded)
	}
	for _, e := range rec.ents {
		if w := byQID[e.QID]; !reflect.DeepEqual(e, w) {
			t.Fatalf("entity %s: streamed %+v, read %+v", e.QID, e, w)
		}
	}
	if st.EntitiesDuplicate != 1 || st.EntitiesBad != 1 || st.TriplesDuplicate != 1 || st.TriplesBad != 1 {
		t.Fatalf("stats %+v, want one repeat and one bad line of each", st)
	}
	if !reflect.DeepEqual(st, want.Stats) {
		t.Fatalf("stats\n%+v\nwant Read's\n%+v", st, want.Stats)
	}
	if want := (len(rec.ents)+99)/100 + (len(rec.triples)+99)/100; rec.batches != want {
		t.Fatalf("%d batches, want %d of at most 100 records", rec.batches, want)
	}
}

// TestStreamStopsAtAWriteError: the sink's error ends the stream, named.
func TestStreamStopsAtAWriteError(t *testing.T) {
	dir := copyFilm(t)
	rec := &recorder{failAt: 2}
	_, err := Stream(context.Background(), dir, rec, 100)
	if err == nil || !strings.Contains(err.Error(), "write triples: disk full") {
		t.Fatalf("err = %v, want the sink's error", err)
	}
	if len(rec.triples) != 100 {
		t.Fatalf("%d triples written, want the first batch only", len(rec.triples))
	}
}

// TestTripleSetLongIDs: ids too long for a uint64 are still told apart and
// their repeats found.
func TestTripleSetLongIDs(t *testing.T) {
	s := newTripleSet()
	long := kg.Triple{Head: "Q" + strings.Repeat("9", 30), PID: "P31", Tail: "Q5"}
	other := long
	other.Head += "1"
	for i, c := range []struct {
		t    kg.Triple
		dup  bool
		line int
	}{{long, false, 0}, {other, false, 0}, {kg.Triple{Head: "Q1", PID: "P31", Tail: "Q5"}, false, 0}, {long, true, 1}, {kg.Triple{Head: "Q1", PID: "P31", Tail: "Q5"}, true, 3}} {
		at, dup := s.firstLine(c.t, i+1)
		if dup != c.dup || (dup && at != c.line) {
			t.Fatalf("%d: %v -> (%d, %v), want (%d, %v)", i, c.t, at, dup, c.line, c.dup)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
