package memindex

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// afresh is g's tables with nothing prepared: what a generation's first
// search prepares when no write patched it.
func afresh(g *gen) *gen {
	return &gen{params: g.params, docs: g.docs, byID: g.byID, dead: g.dead, fields: g.fields}
}

// samePrepared fails unless g's prepared parts (patched from its parents)
// equal, to the bit, those a fresh build of the same generation makes.
func samePrepared(t *testing.T, step int, g *gen) {
	t.Helper()
	f := afresh(g)
	bits := func(what string, got, want []float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("step %d: %s has %d slots, a fresh build %d", step, what, len(got), len(want))
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("step %d: %s of slot %d is %v, a fresh build's %v", step, what, i, got[i], want[i])
			}
		}
	}
	bits("norm", g.norms(), f.norms())
	gk, fk := g.lengthTerms(), f.lengthTerms()
	for fi := range fk {
		bits("length term of "+g.fields[fi].name, gk[fi], fk[fi])
	}
	gb, fb := g.blocks(), f.blocks()
	if (gb == nil) != (fb == nil) {
		t.Fatalf("step %d: blocks %v, a fresh build's %v", step, gb != nil, fb != nil)
	}
	if gb == nil {
		return
	}
	if gb.dim != fb.dim || len(gb.groups) != len(fb.groups) {
		t.Fatalf("step %d: blocks of dimension %d in %d groups, a fresh build's %d in %d", step, gb.dim, len(gb.groups), fb.dim, len(fb.groups))
	}
	for gi := range fb.groups {
		for i, v := range fb.groups[gi] {
			if math.Float32bits(gb.groups[gi][i]) != math.Float32bits(v) {
				t.Fatalf("step %d: block %d value %d is %v, a fresh build's %v", step, gi, i, gb.groups[gi][i], v)
			}
		}
	}
}

// TestPreparedFromParentEqualsFresh: searching between random upserts,
// edits and deletes (so that every write finds its parent prepared and
// patches it), each generation's norms, length terms and blocks equal a
// fresh build's to the bit, and every search scores as the reference and
// as an index built from scratch. Averages drift with most writes; some
// documents have no vector, a few another dimension (the blocks are then
// declined and built afresh), and compactions renumber the slots.
func TestPreparedFromParentEqualsFresh(t *testing.T) {
	ctx := context.Background()
	for name, p := range bothBM25() {
		t.Run(name, func(t *testing.T) {
			patched, total := 0, 0
			for seed := int64(1); seed <= 4; seed++ {
				r := rand.New(rand.NewSource(seed))
				x := New(p)
				doc := func(id string) retrieval.Document {
					d := randomDoc(r, id)
					switch k := r.Intn(40); {
					case k < 3:
						d.Vector = nil
					case k == 3 && seed == 4:
						d.Vector = append(d.Vector, 1) // another dimension
					}
					if old, _ := x.Documents(ctx, []string{id}); len(old) == 1 && r.Intn(2) == 0 {
						e := editDoc(r, old[0])
						e.Vector = d.Vector
						d = e
					}
					return d
				}
				for step := 0; step < 120; step++ {
					switch k := r.Intn(10); {
					case k < 3:
						var ids []string
						for i := r.Intn(6); i >= 0; i-- {
							ids = append(ids, fmt.Sprintf("d%d", r.Intn(200)))
						}
						if _, err := x.Delete(ctx, ids); err != nil {
							t.Fatal(err)
						}
					case k == 3 && step%20 == 3:
						x.update(func(g *gen) { g.compact() })
					default:
						batch := make([]retrieval.Document, 1+r.Intn(12))
						for i := range batch {
							batch[i] = doc(fmt.Sprintf("d%d", r.Intn(200)))
						}
						if err := x.Put(ctx, batch); err != nil {
							t.Fatal(err)
						}
					}
					g := x.cur.Load()
					total++
					if g.prep.blocks.v.Load() != nil {
						patched++
					}
					samePrepared(t, step, g)
					fresh := New(p)
					if err := fresh.Put(ctx, x.All()); err != nil {
						t.Fatal(err)
					}
					q := retrieval.Query{Text: randomDoc(r, "q").Text + " nolan", Vector: randomDoc(r, "q").Vector, Limit: 1 + r.Intn(15), Alpha: 0.5}
					if step%3 == 1 {
						q.Filter.AnyEntities = []string{"Q1", "Q2"}
					}
					var qs []retrieval.Query
					for _, mode := range []retrieval.Mode{retrieval.BM25, retrieval.Vector, retrieval.Hybrid} {
						q.Mode = mode
						qs = append(qs, q)
					}
					// Mixed dimensions are refused by either index alike.
					compareErr(t, x, fresh, qs)
					compareRef(t, x, qs)
				}
			}
			// Most writes must have patched the blocks (the rest: compactions,
			// other dimensions, the first write of each index).
			if patched < total*3/4 {
				t.Errorf("%d of %d generations had their blocks patched from the parent's", patched, total)
			}
		})
	}
}

// compareErr checks that x and fresh answer every query alike: the same
// hits, or both an error.
func compareErr(t *testing.T, x, fresh *Index, qs []retrieval.Query) {
	t.Helper()
	for _, q := range qs {
		got, err := x.Search(context.Background(), q)
		want, ferr := fresh.Search(context.Background(), q)
		if (err == nil) != (ferr == nil) {
			t.Fatalf("%s: error %v, a fresh build's %v", q.Mode, err, ferr)
		}
		if err == nil {
			sameHits(t, q, got, want)
		}
	}
}

// compareRef is compare without the queries the reference refuses.
func compareRef(t *testing.T, x *Index, qs []retrieval.Query) {
	t.Helper()
	g := x.cur.Load()
	for _, q := range qs {
		want, err := g.refSearch(q)
		if err != nil {
			continue
		}
		got, err := x.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, q, got, want)
	}
}

// TestPreparedChain: a write patches only the parts a search of its parent
// asked for; from then on every write patches them, with or without
// searches in between, until patching is turned off.
func TestPreparedChain(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(1))
	x := New(DefaultParams())
	put := func() *gen {
		t.Helper()
		var batch []retrieval.Document
		for i := 0; i < 40; i++ {
			batch = append(batch, randomDoc(r, fmt.Sprintf("d%d", r.Intn(100))))
		}
		if err := x.Put(ctx, batch); err != nil {
			t.Fatal(err)
		}
		return x.cur.Load()
	}
	made := func(g *gen) [3]bool {
		return [3]bool{g.prep.norms.v.Load() != nil, g.prep.kn.v.Load() != nil, g.prep.blocks.v.Load() != nil}
	}
	put()
	if g := put(); made(g) != [3]bool{} {
		t.Fatalf("parts %v made without a search", made(g))
	}
	// A BM25 search asks for the length terms only.
	if _, err := x.Search(ctx, retrieval.Query{Mode: retrieval.BM25, Text: "nolan", Limit: 3}); err != nil {
		t.Fatal(err)
	}
	if g := put(); made(g) != [3]bool{false, true, false} {
		t.Fatalf("after a BM25 search, parts %v made (norms, length terms, blocks)", made(g))
	}
	if _, err := x.Search(ctx, retrieval.Query{Mode: retrieval.Vector, Vector: []float32{1, 0, 0, 0}, Limit: 3}); err != nil {
		t.Fatal(err)
	}
	want := [3]bool{true, true, haveDot32}
	for i := 0; i < 3; i++ {
		if g := put(); made(g) != want {
			t.Fatalf("write %d after a vector search: parts %v made, want %v", i, made(g), want)
		}
	}
	x.SetSharing(Sharing{Postings: true})
	if g := put(); made(g) != [3]bool{} {
		t.Fatalf("patching off: parts %v made", made(g))
	}
}

// BenchmarkWriteThenSearch is the index-only writer's cycle on codexm: a
// batch of 8 changed documents put, then one hybrid search of the new
// generation (which prepares what the write did not patch), with the
// index sharing with the parent generation everything (the default), its
// prepared parts only, or nothing (as before either was shared).
func BenchmarkWriteThenSearch(b *testing.B) {
	r := loadReal(b)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		s    Sharing
	}{{"shared", Sharing{Prepared: true, Postings: true}}, {"prepared-only", Sharing{Prepared: true}}, {"nothing", Sharing{}}} {
		b.Run(c.name, func(b *testing.B) {
			x := New(DefaultParams())
			if err := x.Put(ctx, r.docs); err != nil {
				b.Fatal(err)
			}
			x.SetSharing(c.s)
			q := retrieval.Query{Mode: retrieval.Hybrid, Text: r.questions[0].Question, Vector: r.qvecs[0], Alpha: 0.5, Limit: 20}
			if _, err := x.Search(ctx, q); err != nil {
				b.Fatal(err)
			}
			batch := make([]retrieval.Document, 8)
			for i := 0; b.Loop(); i++ {
				for j := range batch {
					batch[j] = r.docs[(i*8+j)%512]
					batch[j].Text += fmt.Sprintf(" (revision %d)", i)
				}
				if err := x.Put(ctx, batch); err != nil {
					b.Fatal(err)
				}
				q := retrieval.Query{Mode: retrieval.Hybrid, Text: r.questions[i%len(r.questions)].Question, Vector: r.qvecs[i%len(r.qvecs)], Alpha: 0.5, Limit: 20}
				if _, err := x.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
