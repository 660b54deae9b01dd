package memindex

import (
	"context"
	"fmt"
	mathrand "math/rand"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/retrievaltest"
	"github.com/dmar-kg/dmar/internal/vec"
)

// compactParams are p with CompactVectors, the file in a test folder.
func compactParams(t testing.TB, p Params) Params {
	p.CompactVectors, p.VectorDir = true, t.TempDir()
	return p
}

// newCompact is a compact index closed when the test ends.
func newCompact(t testing.TB, p Params) *Index {
	x := New(compactParams(t, p))
	t.Cleanup(func() {
		if err := x.Close(); err != nil {
			t.Error(err)
		}
	})
	return x
}

func TestConformanceCompact(t *testing.T) {
	retrievaltest.Run(t, func(t *testing.T) retrievaltest.Backend { return newCompact(t, DefaultParams()) })
}

func TestConformanceCompactAfterSaveLoad(t *testing.T) {
	retrievaltest.Run(t, func(t *testing.T) retrievaltest.Backend {
		p := compactParams(t, DefaultParams())
		return &reloading{Index: New(p), dir: t.TempDir(), params: p}
	})
}

// TestCompactEqualsFloat32 puts the same random writes into a compact
// index and a float32 one: every search (vector, hybrid, filtered, BM25)
// returns the same hits with the same scores to the bit, Documents and
// All the same vectors. The corpora are smaller than the candidates
// scored again, so nothing may differ at all.
func TestCompactEqualsFloat32(t *testing.T) {
	ctx := context.Background()
	for seed := int64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 9))
		mr := newMathRand(seed)
		plain, compact := New(DefaultParams()), newCompact(t, DefaultParams())
		for step := range 40 {
			if r.IntN(4) == 0 {
				ids := []string{itoa(r.IntN(150)), itoa(r.IntN(150))}
				n1, _ := plain.Delete(ctx, ids)
				n2, _ := compact.Delete(ctx, ids)
				if n1 != n2 {
					t.Fatalf("seed %d step %d: deleted %d and %d", seed, step, n1, n2)
				}
				continue
			}
			batch := make([]retrieval.Document, 1+r.IntN(20))
			for i := range batch {
				batch[i] = randomDoc(mr, itoa(r.IntN(150)))
			}
			for _, x := range []*Index{plain, compact} {
				if err := x.Put(ctx, batch); err != nil {
					t.Fatal(err)
				}
			}
			// A search between writes makes the next write patch what
			// it prepared (norms) instead of computing it afresh.
			q := retrieval.Query{Mode: retrieval.Vector, Vector: randomDoc(mr, "q").Vector, Limit: 5}
			if want, got := retrievaltest.Searches(ctx, t, plain, compact, q); !cmp.Equal(want, got) {
				t.Fatalf("seed %d step %d: (-float32 +compact):\n%s", seed, step, cmp.Diff(want, got))
			}
		}
		if seed%2 == 0 {
			compact.update(func(g *gen) { g.compact() })
		}
		if diff := cmp.Diff(plain.All(), compact.All()); diff != "" {
			t.Fatalf("seed %d: All (-float32 +compact):\n%s", seed, diff)
		}
		ids := []string{"3", "17", "99", "nope"}
		a, b := retrievaltest.Both(t, plain, compact, func(x retrieval.Index) ([]retrieval.Document, error) { return x.Documents(ctx, ids) })
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("seed %d: Documents (-float32 +compact):\n%s", seed, diff)
		}
		for qi := range 12 {
			q := retrieval.Query{Text: randomDoc(mr, "q").Text + " nolan", Vector: randomDoc(mr, "q").Vector, Limit: 1 + r.IntN(15), Alpha: 0.5, WithVectors: qi%2 == 0}
			if qi%3 == 1 {
				q.Filter.AnyEntities = []string{"Q1", "Q2"}
			}
			if mode, diff := modesAgree(ctx, t, plain, compact, q); diff != "" {
				t.Fatalf("seed %d, %s: (-float32 +compact):\n%s", seed, mode, diff)
			}
		}
	}
}

// TestCompactOnRealVectors: over a real corpus's vectors and kgqa's dev
// questions (or, without the encoder, documents' vectors as queries), a
// compact index's exact scan returns the float32 scan's top 10, the same
// ids and the same scores to the bit. Through the graph (each index
// builds its own; the compact one walks the codes, so the two walks can
// find different documents), every score is the float32 cosine to the
// bit, and the top 10 hold as much of the exact scan's as the float32
// graph's do, within .005.
func TestCompactOnRealVectors(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("builds two graphs over a real corpus: run without -race or -short")
	}
	docs := snapshotVectors(t)
	qs := questionVectors(t, len(docs[0].Vector))
	if qs == nil {
		for i := 0; i < len(docs); i += len(docs) / 200 {
			qs = append(qs, docs[i].Vector)
		}
	}
	ctx := context.Background()
	byID := map[string][]float32{}
	for _, d := range docs {
		byID[d.ID] = d.Vector
	}
	build := func(x *Index) *Index {
		if err := x.Put(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if err := x.Build(ctx); err != nil {
			t.Fatal(err)
		}
		return x
	}
	exactP, graphP := DefaultParams(), DefaultParams()
	exactP.ANNMin, graphP.ANNMin = -1, 1000
	exact, exactC := build(New(exactP)), build(newCompact(t, exactP))
	graph, graphC := build(New(graphP)), build(newCompact(t, graphP))
	if !graphC.cur.Load().useANN() || graphC.cur.Load().ann() == nil {
		t.Fatal("the compact index does not search through its graph")
	}
	search := func(x *Index, v []float32) []retrieval.Hit {
		hs, err := x.Search(ctx, retrieval.Query{Mode: retrieval.Vector, Vector: v, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return hs
	}
	same := func(a, b retrieval.Hit) bool { return a.Doc.ID == b.Doc.ID && a.Score == b.Score }
	var exactDiffer, graphDiffer, found, foundC, want int
	for qi, v := range qs {
		ref := search(exact, v)
		if got := search(exactC, v); !slices.EqualFunc(ref, got, same) {
			exactDiffer++
			t.Errorf("question %d, exact scan: top 10 differ:\nfloat32 %v\ncompact %v", qi, idScores(ref), idScores(got))
		}
		in := map[string]bool{}
		for _, h := range ref {
			in[h.Doc.ID] = true
		}
		g, gc := search(graph, v), search(graphC, v)
		if !slices.EqualFunc(g, gc, same) {
			graphDiffer++
		}
		qn := vec.Norm(v)
		for _, h := range gc {
			if cos := float64(vec.Dot(v, byID[h.Doc.ID])) / (qn * vec.Norm(byID[h.Doc.ID])); h.Score != cos {
				t.Fatalf("question %d, graph: %s scored %v, its float32 cosine is %v", qi, h.Doc.ID, h.Score, cos)
			}
			if in[h.Doc.ID] {
				foundC++
			}
		}
		for _, h := range g {
			if in[h.Doc.ID] {
				found++
			}
		}
		want += len(ref)
	}
	r, rc := float64(found)/float64(want), float64(foundC)/float64(want)
	t.Logf("%d documents, %d queries: exact scans' top 10 differ for %d; graphs' top 10 differ for %d, recall@10 against the exact scan float32 graph %.4f, compact graph %.4f",
		len(docs), len(qs), exactDiffer, graphDiffer, r, rc)
	if rc < r-0.005 {
		t.Errorf("the compact graph's recall@10 %.4f is more than .005 below the float32 graph's %.4f", rc, r)
	}
}

func idScores(hs []retrieval.Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, fmt.Sprintf("%s@%v", h.Doc.ID, h.Score))
	}
	return out
}

func newMathRand(seed int64) *mathrand.Rand { return mathrand.New(mathrand.NewSource(seed)) }

// randomDocs are n random documents with ids "0" to n-1.
func randomDocs(mr *mathrand.Rand, n int) []retrieval.Document {
	docs := make([]retrieval.Document, 0, n)
	for i := range n {
		docs = append(docs, randomDoc(mr, itoa(i)))
	}
	return docs
}

// TestCompactSaveLoad: a compact index saves its float32 vectors (read
// back from its file), and loads into a float32 index and a compact one
// that search as the index saved.
func TestCompactSaveLoad(t *testing.T) {
	ctx := context.Background()
	mr := newMathRand(5)
	docs := randomDocs(mr, 120)
	x := newCompact(t, DefaultParams())
	if err := x.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "idx.gob")
	if err := x.Save(path); err != nil {
		t.Fatal(err)
	}
	plain, err := Load(path, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(docs, plain.All()); diff != "" {
		t.Fatalf("loaded documents (-put +loaded):\n%s", diff)
	}
	back, err := Load(path, compactParams(t, DefaultParams()))
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	for qi := range 8 {
		q := retrieval.Query{Mode: retrieval.Hybrid, Text: randomDoc(mr, "q").Text + " nolan", Vector: randomDoc(mr, "q").Vector, Limit: 10, Alpha: 0.5, WithVectors: true}
		if qi%2 == 0 {
			q.Mode = retrieval.Vector
		}
		for _, y := range []*Index{plain, back} {
			want, got := retrievaltest.Searches(ctx, t, x, y, q)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("query %d: (-saved +loaded):\n%s", qi, diff)
			}
		}
	}
}

// TestCompactDamagedFile: a record changed or cut off in the vector file
// is an error naming it, for searches, Documents and Save; never a panic
// or a wrong score. A closed index's searches fail too.
func TestCompactDamagedFile(t *testing.T) {
	ctx := context.Background()
	mr := newMathRand(7)
	docs := randomDocs(mr, 50)
	q := retrieval.Query{Mode: retrieval.Vector, Vector: docs[3].Vector, Limit: 5}
	for _, c := range []struct {
		name, want string
		damage     func(x *Index) error
	}{
		{"flipped", "corrupt", func(x *Index) error {
			_, err := x.store.f.Load().WriteAt([]byte{0x55}, x.cur.Load().vecs[0].off+5)
			return err
		}},
		{"truncated", "truncated", func(x *Index) error { return x.store.f.Load().Truncate(x.cur.Load().vecs[40].off) }},
		{"closed", "closed", func(x *Index) error { return x.Close() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := newCompact(t, DefaultParams())
			if err := x.Put(ctx, docs); err != nil {
				t.Fatal(err)
			}
			if _, err := x.Search(ctx, q); err != nil {
				t.Fatal(err)
			}
			if err := c.damage(x); err != nil {
				t.Fatal(err)
			}
			_, err := x.Search(ctx, q)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("search after the file was %s: %v, want an error saying %q", c.name, err, c.want)
			}
			if _, err := x.Documents(ctx, []string{"0", "45"}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("documents: %v", err)
			}
			if _, err := x.Cosines(ctx, q.Vector, []string{"0", "45"}, retrieval.Filter{}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("cosines: %v", err)
			}
			if err := x.Save(filepath.Join(t.TempDir(), "x.gob")); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("save: %v", err)
			}
			if _, err := x.ReadAll(ctx); err == nil {
				t.Fatal("ReadAll: no error")
			}
		})
	}
}

// BenchmarkCompactScan times the exact scan of 50,000 random 384-d
// vectors: float32 (four documents at a time, as vectorExact without
// blocks) against the int8 codes with the best 200 re-scored from the
// file (vectorCompact).
func BenchmarkCompactScan(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	docs := make([]retrieval.Document, 50_000)
	for i := range docs {
		docs[i] = retrieval.Document{ID: itoa(i), Text: "x", Vector: randVec(rng, 384, 1)}
	}
	p := DefaultParams()
	p.ANNMin = -1
	plain, compact := New(p), newCompact(b, p)
	for _, x := range []*Index{plain, compact} {
		if err := x.Put(context.Background(), docs); err != nil {
			b.Fatal(err)
		}
	}
	q := randVec(rng, 384, 1)
	qn := vec.Norm(q)
	b.Run("float32", func(b *testing.B) {
		g := plain.cur.Load()
		for b.Loop() {
			if _, err := g.vectorExact(q, qn, nil, 100, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("int8-rescored", func(b *testing.B) {
		g := compact.cur.Load()
		for b.Loop() {
			if _, err := g.vectorCompact(q, qn, nil, 100); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestCompactFileLifetime: the vector file leaves no name in VectorDir
// (it is unlinked once open), a closed index refuses writes, and Close
// twice is fine.
func TestCompactFileLifetime(t *testing.T) {
	ctx := context.Background()
	p := compactParams(t, DefaultParams())
	x := New(p)
	if err := x.Put(ctx, []retrieval.Document{randomDoc(newMathRand(1), "a")}); err != nil {
		t.Fatal(err)
	}
	if x.store.f.Load() == nil {
		t.Fatal("no vector file after a put with a vector")
	}
	if names, err := os.ReadDir(p.VectorDir); err != nil || len(names) != 0 {
		t.Fatalf("VectorDir holds %v (%v), want nothing", names, err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := x.Put(ctx, []retrieval.Document{randomDoc(newMathRand(2), "b")}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("put after Close: %v", err)
	}
}
