package memindex

import (
	"context"
	"fmt"
	"github.com/dmar-kg/dmar/internal/retrieval/retrievaltest"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// randomDoc draws a document from a small vocabulary, so that terms are
// shared and document frequencies matter; some titles or texts are empty.
func randomDoc(r *rand.Rand, id string) retrieval.Document {
	vocab := strings.Fields("nolan film director batman london the a of memento prestige actor award city river paris 1999 war")
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.Intn(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	v := make([]float32, 4)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	d := retrieval.Document{ID: id, Title: words(r.Intn(4)), Text: words(r.Intn(30)), Vector: v, Entities: []string{fmt.Sprintf("Q%d", r.Intn(5))}}
	if d.Title == "" && d.Text == "" {
		d.Text = "nolan"
	}
	return d
}

// editDoc changes a document a little: a word of its text replaced, added
// or dropped, or its title emptied or set.
func editDoc(r *rand.Rand, d retrieval.Document) retrieval.Document {
	w := strings.Fields(d.Text)
	extra := randomDoc(r, "x").Text + " nolan"
	switch k := r.Intn(4); {
	case k == 0 && len(w) > 0:
		w[r.Intn(len(w))] = strings.Fields(extra)[0]
	case k == 1:
		w = append(w, strings.Fields(extra)[0])
	case k == 2 && len(w) > 1:
		w = w[1:]
	default:
		d.Title = map[bool]string{true: "", false: "paris war"}[d.Title != ""]
	}
	d.Text = strings.Join(w, " ")
	if d.Title == "" && d.Text == "" {
		d.Text = "nolan"
	}
	return d
}

// bothBM25 are the default parameters (Weaviate's BM25 with its top-k
// cut) and classic BM25, by name.
func bothBM25() map[string]Params {
	classic := DefaultParams()
	classic.Classic, classic.WeaviateTopK = true, false
	return map[string]Params{"weaviate": DefaultParams(), "classic": classic}
}

// TestIncrementalEqualsFreshBuild applies random upserts and deletes and
// then checks that every kind of search scores exactly as an index built
// from scratch over the surviving documents (in the same order).
func TestIncrementalEqualsFreshBuild(t *testing.T) {
	ctx := context.Background()
	for name, p := range bothBM25() {
		t.Run(name, func(t *testing.T) {
			for seed := int64(1); seed <= 8; seed++ {
				r := rand.New(rand.NewSource(seed))
				x := New(p)
				ops := 0
				for step := 0; step < 60; step++ {
					if r.Intn(3) == 0 {
						var ids []string
						for i := r.Intn(6); i >= 0; i-- {
							ids = append(ids, fmt.Sprintf("d%d", r.Intn(150)))
						}
						if _, err := x.Delete(ctx, ids); err != nil {
							t.Fatal(err)
						}
					} else {
						batch := make([]retrieval.Document, 1+r.Intn(20))
						for i := range batch {
							batch[i] = randomDoc(r, fmt.Sprintf("d%d", r.Intn(150)))
							// Half the replacements are small edits of the
							// stored document (most term counts unchanged).
							if old, _ := x.Documents(ctx, []string{batch[i].ID}); len(old) == 1 && r.Intn(2) == 0 {
								batch[i] = editDoc(r, old[0])
							}
						}
						if err := x.Put(ctx, batch); err != nil {
							t.Fatal(err)
						}
					}
					ops++
				}
				// force at least one compaction path too
				if seed%2 == 0 {
					x.update(func(g *gen) { g.compact() })
				}
				fresh := New(p)
				if err := fresh.Put(ctx, x.All()); err != nil {
					t.Fatal(err)
				}
				n, _ := x.Count(ctx)
				m, _ := fresh.Count(ctx)
				if n != m {
					t.Fatalf("seed %d: count %d, fresh build %d", seed, n, m)
				}
				for qi := 0; qi < 12; qi++ {
					q := retrieval.Query{Text: randomDoc(r, "q").Text + " nolan", Vector: randomDoc(r, "q").Vector, Limit: 1 + r.Intn(15), Alpha: 0.5}
					if qi%3 == 1 {
						q.Filter.AnyEntities = []string{"Q1", "Q2"}
					}
					if mode, diff := modesAgree(ctx, t, fresh, x, q); diff != "" {
						t.Fatalf("seed %d after %d writes, %s %q: incremental vs fresh (-fresh +incremental):\n%s", seed, ops, mode, q.Text, diff)
					}
				}
			}
		})
	}
}

// TestDeleteRemovesEverywhere checks that a deleted document leaves BM25,
// vector search, Documents and Count, and that a re-put comes back.
func TestDeleteRemovesEverywhere(t *testing.T) {
	ctx := context.Background()
	x := New(DefaultParams())
	docs := []retrieval.Document{
		{ID: "a", Title: "Inception", Text: "a film by nolan", Vector: []float32{1, 0}},
		{ID: "b", Title: "Memento", Text: "another film by nolan", Vector: []float32{0, 1}},
	}
	if err := x.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if n, err := x.Delete(ctx, []string{"a", "zzz"}); err != nil || n != 1 {
		t.Fatalf("Delete = %d, %v; want 1 removed", n, err)
	}
	for _, q := range []retrieval.Query{
		{Mode: retrieval.BM25, Text: "inception nolan", Limit: 5},
		{Mode: retrieval.Vector, Vector: []float32{1, 0}, Limit: 5},
	} {
		hs, err := x.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if h.Doc.ID == "a" {
				t.Errorf("%s search still finds deleted document a", q.Mode)
			}
		}
	}
	if got, _ := x.Documents(ctx, []string{"a"}); len(got) != 0 {
		t.Errorf("Documents(a) = %v after delete", got)
	}
	if n, _ := x.Count(ctx); n != 1 {
		t.Errorf("Count = %d, want 1", n)
	}
	if err := x.Put(ctx, docs[:1]); err != nil {
		t.Fatal(err)
	}
	hs, _ := x.Search(ctx, retrieval.Query{Mode: retrieval.BM25, Text: "inception", Limit: 1})
	if len(hs) != 1 || hs[0].Doc.ID != "a" {
		t.Errorf("re-put document a not found by BM25: %v", hs)
	}
}

// TestConcurrentWritesAndSearches runs writers and searchers together (run
// with -race). Each writer batch gives documents p and q the same
// generation in title and text; a reader must never see p and q, or a
// title and its text, from different batches.
func TestConcurrentWritesAndSearches(t *testing.T) {
	ctx := context.Background()
	x := New(DefaultParams())
	gen := func(g int) []retrieval.Document {
		s := fmt.Sprintf("gen%d", g)
		return []retrieval.Document{
			{ID: "p", Title: "pair " + s, Text: "shared words " + s, Vector: []float32{1, float32(g)}},
			{ID: "q", Title: "pair " + s, Text: "shared words " + s, Vector: []float32{float32(g), 1}},
		}
	}
	if err := x.Put(ctx, gen(0)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(w)))
			for g := 1; g <= 300; g++ {
				if err := x.Put(ctx, gen(g*2+w)); err != nil {
					t.Error(err)
					return
				}
				extra := randomDoc(r, fmt.Sprintf("x%d", r.Intn(20)))
				extra.Vector = extra.Vector[:2]
				if err := x.Put(ctx, []retrieval.Document{extra}); err != nil {
					t.Error(err)
				}
				if _, err := x.Delete(ctx, []string{fmt.Sprintf("x%d", r.Intn(20))}); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	var readers sync.WaitGroup
	for s := 0; s < 3; s++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				hs, err := x.Search(ctx, retrieval.Query{Mode: retrieval.Hybrid, Text: "pair shared", Vector: []float32{1, 1}, Alpha: 0.5, Limit: 10})
				if err != nil {
					t.Error(err)
					return
				}
				for _, h := range hs {
					if h.Doc.ID == "p" || h.Doc.ID == "q" {
						if strings.Fields(h.Doc.Title)[1] != strings.Fields(h.Doc.Text)[2] {
							t.Errorf("half-updated document: %q / %q", h.Doc.Title, h.Doc.Text)
						}
					}
				}
				ds, err := x.Documents(ctx, []string{"p", "q"})
				if err != nil || len(ds) != 2 {
					t.Errorf("Documents(p, q) = %d, %v", len(ds), err)
					return
				}
				if ds[0].Title != ds[1].Title {
					t.Errorf("a batch seen half applied: p %q, q %q", ds[0].Title, ds[1].Title)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	// What the writes patched while searches were making their parents'
	// parts equals a fresh build's.
	samePrepared(t, -1, x.cur.Load())
}

// TestBulkPutEqualsSmallWrites: a batch larger than bulkChunk (tokenised a
// chunk at a time, its posting lists trimmed) gives the same searches as
// the same documents written in small batches, including an ID that the
// batch holds twice (the later one wins) and a write after it.
func TestBulkPutEqualsSmallWrites(t *testing.T) {
	ctx := context.Background()
	for name, p := range bothBM25() {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewSource(7))
			docs := make([]retrieval.Document, 2*bulkChunk+100)
			for i := range docs {
				docs[i] = randomDoc(r, fmt.Sprintf("d%d", i))
			}
			docs[len(docs)-1] = randomDoc(r, "d3") // d3 again, near the end
			bulk, small := New(p), New(p)
			if err := bulk.Put(ctx, docs); err != nil {
				t.Fatal(err)
			}
			for lo := 0; lo < len(docs); lo += 1000 {
				if err := small.Put(ctx, docs[lo:min(lo+1000, len(docs))]); err != nil {
					t.Fatal(err)
				}
			}
			later := []retrieval.Document{randomDoc(r, "d5"), randomDoc(r, "new")}
			for _, x := range []*Index{bulk, small} {
				if err := x.Put(ctx, later); err != nil {
					t.Fatal(err)
				}
			}
			if n, _ := bulk.Count(ctx); n != len(docs) {
				t.Fatalf("bulk count %d, want %d", n, len(docs))
			}
			for qi := range 12 {
				q := retrieval.Query{Text: randomDoc(r, "q").Text + " nolan", Vector: randomDoc(r, "q").Vector, Limit: 20, Alpha: 0.5}
				for _, mode := range []retrieval.Mode{retrieval.BM25, retrieval.Vector, retrieval.Hybrid} {
					q.Mode = mode
					want, got := retrievaltest.Searches(ctx, t, small, bulk, q)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("query %d, %s: bulk vs small writes (-small +bulk):\n%s", qi, mode, diff)
					}
				}
			}
		})
	}
}

// modesAgree searches a and b with q in BM25, vector and hybrid mode: the
// first mode whose hits differ and the difference (-a +b), or "".
func modesAgree(ctx context.Context, t *testing.T, a, b *Index, q retrieval.Query) (retrieval.Mode, string) {
	t.Helper()
	for _, mode := range []retrieval.Mode{retrieval.BM25, retrieval.Vector, retrieval.Hybrid} {
		q.Mode = mode
		want, got := retrievaltest.Searches(ctx, t, a, b, q)
		if diff := cmp.Diff(want, got); diff != "" {
			return mode, diff
		}
	}
	return "", ""
}
