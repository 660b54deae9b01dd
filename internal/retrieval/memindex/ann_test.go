package memindex

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/synth"
	"github.com/dmar-kg/dmar/internal/vec"
)

// snapshotVectors are the documents of the largest index snapshot in the
// cache's state folder (a real corpus embedded by a real encoder: dmar
// serve or eval over codexm writes one), skipping the test without one.
func snapshotVectors(t *testing.T) []retrieval.Document {
	t.Helper()
	snaps, _ := filepath.Glob(filepath.Join(onnxtest.CacheDir(), "state", "index-*.gob"))
	sort.Slice(snaps, func(i, j int) bool { return size(snaps[i]) > size(snaps[j]) })
	for _, s := range snaps {
		x, err := Load(s, Params{K1: 1.2, B: 0.75, ANNMin: -1})
		if err != nil {
			continue
		}
		docs := x.All()
		if len(docs) >= 10_000 && len(docs[0].Vector) >= 64 {
			t.Logf("%d real documents and vectors (%d-d) from %s", len(docs), len(docs[0].Vector), s)
			return docs
		}
	}
	t.Skip("no index snapshot of 10,000 documents or more in the cache's state folder (dmar serve --data ../shared/data/codexm writes one)")
	return nil
}

func size(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func annParams(minDocs int) Params {
	p := DefaultParams()
	p.ANNMin = minDocs
	return p
}

// TestANNRecall: over a real corpus's vectors, the graph's top 100 holds
// at least 95% of the exact scan's, for queries that are documents left
// out of the index and, where the encoder is installed, kgqa's dev
// questions; every document it returns has the cosine the exact scan gives
// it (the same bits), in the exact order of what it found.
func TestANNRecall(t *testing.T) {
	if raceEnabled {
		t.Skip("long comparison: run without -race")
	}
	docs := snapshotVectors(t)
	rng := rand.New(rand.NewPCG(36, 1))
	perm := rng.Perm(len(docs))
	var heldOut [][]float32
	var kept []retrieval.Document
	for i, p := range perm {
		if i < 200 {
			heldOut = append(heldOut, docs[p].Vector)
		} else {
			kept = append(kept, docs[p])
		}
	}
	ann, exact := New(annParams(1)), New(annParams(-1))
	for _, x := range []*Index{ann, exact} {
		if err := x.Put(context.Background(), kept); err != nil {
			t.Fatal(err)
		}
	}
	h := ann.cur.Load().ann()
	if h == nil {
		t.Fatal("no graph was built")
	}
	sets := map[string][][]float32{"held-out documents": heldOut}
	if qv := questionVectors(t, len(docs[0].Vector)); qv != nil {
		sets["kgqa dev questions"] = qv
	}
	for name, queries := range sets {
		found, want := 0, 0
		for _, q := range queries {
			got := search(t, ann, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: 100})
			ref := search(t, exact, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: 100})
			in := map[string]bool{}
			for _, hit := range ref {
				in[hit.Doc.ID] = true
			}
			exactScore := map[string]float64{}
			for _, hit := range search(t, exact, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: len(kept)}) {
				exactScore[hit.Doc.ID] = hit.Score
			}
			for i, hit := range got {
				if in[hit.Doc.ID] {
					found++
				}
				if s := exactScore[hit.Doc.ID]; s != hit.Score {
					t.Fatalf("%s: cosine %v through the graph, %v exactly", hit.Doc.ID, hit.Score, s)
				}
				if i > 0 && !(got[i-1].Score > hit.Score || got[i-1].Score == hit.Score && got[i-1].Doc.ID < hit.Doc.ID) {
					t.Fatalf("hit %d out of order", i)
				}
			}
			want += len(ref)
		}
		recall := float64(found) / float64(want)
		t.Logf("%s: recall@100 %.4f over %d queries (ef %d)", name, recall, len(queries), h.ef)
		if recall < 0.95 {
			t.Errorf("%s: recall@100 %.4f, want at least 0.95", name, recall)
		}
	}
}

// questionVectors are kgqa dev's questions embedded by the installed
// encoder (nil when it is not installed, or its vectors are not dim-d).
func questionVectors(t *testing.T, dim int) [][]float32 {
	t.Helper()
	rt, err := onnx.Open(onnxtest.Config())
	if err != nil {
		return nil
	}
	enc, err := onnx.NewEncoder(rt, onnxtest.EncoderDir())
	if err != nil {
		return nil
	}
	defer enc.Close()
	qv, err := enc.Encode(context.Background(), realCorpora(t)[0].questions[:207])
	if err != nil || len(qv) == 0 || len(qv[0]) != dim {
		return nil
	}
	return qv
}

func search(t *testing.T, x *Index, q retrieval.Query) []retrieval.Hit {
	t.Helper()
	hs, err := x.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// TestANNFollowsWrites: the graph is carried over writes; every document
// with a vector has a node valid for the generation, no dead document is
// ever a result, and a document put is found by its own vector.
func TestANNFollowsWrites(t *testing.T) {
	t.Run("float32", func(t *testing.T) { annFollowsWrites(t, New(annParams(1000))) })
	t.Run("compact", func(t *testing.T) { annFollowsWrites(t, newCompact(t, annParams(1000))) })
}

// annFollowsWrites checks TestANNFollowsWrites on the empty index x.
func annFollowsWrites(t *testing.T, x *Index) {
	rng := rand.New(rand.NewPCG(3, 6))
	centers := make([][]float32, 40)
	for i := range centers {
		centers[i] = randVec(rng, 48, 1)
	}
	doc := func(id string) retrieval.Document {
		c := centers[rng.IntN(len(centers))]
		v := randVec(rng, 48, 0.2)
		for i := range v {
			v[i] += c[i]
		}
		return retrieval.Document{ID: id, Title: id, Text: "text " + id, Vector: v}
	}
	var docs []retrieval.Document
	for i := range 3000 {
		docs = append(docs, doc("d"+itoa(i)))
	}
	ctx := context.Background()
	if err := x.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := x.Build(ctx); err != nil {
		t.Fatal(err)
	}
	first := x.cur.Load().ann()
	for round := range 5 {
		var put []retrieval.Document
		for i := range 40 {
			put = append(put, doc("n"+itoa(round)+"-"+itoa(i)))
		}
		replaced := doc(docs[rng.IntN(len(docs))].ID)
		put = append(put, replaced)
		if err := x.Put(ctx, put); err != nil {
			t.Fatal(err)
		}
		del := docs[rng.IntN(len(docs))].ID
		if _, err := x.Delete(ctx, []string{del}); err != nil {
			t.Fatal(err)
		}
		g := x.cur.Load()
		if !g.prep.ann.wanted() || g.ann() != first {
			t.Fatalf("round %d: the write did not carry the graph over", round)
		}
		validFor := map[int32]int{}
		for _, n := range *first.nodes.Load() {
			if g.valid(n) {
				validFor[n.slot]++
			}
		}
		for s, d := range g.docs {
			if want := b2i(d.ID != ""); validFor[int32(s)] != want {
				t.Fatalf("round %d: slot %d (%q) has %d valid nodes", round, s, d.ID, validFor[int32(s)])
			}
		}
		for _, d := range put {
			hs := search(t, x, retrieval.Query{Mode: retrieval.Vector, Vector: d.Vector, Limit: 3})
			if len(hs) == 0 || hs[0].Doc.ID != d.ID || hs[0].Score < 0.9999 {
				t.Fatalf("round %d: %s not found by its own vector: %v", round, d.ID, hs)
			}
		}
		for _, q := range docs[:50] {
			for _, hit := range search(t, x, retrieval.Query{Mode: retrieval.Vector, Vector: q.Vector, Limit: 20}) {
				if hit.Doc.ID == del {
					t.Fatalf("round %d: deleted %s found", round, del)
				}
				if hit.Doc.ID == replaced.ID && cosine32(hit.Doc.Vector, replaced.Vector) < 0.9999 && hit.Doc.Vector != nil {
					t.Fatalf("round %d: %s found with its old vector", round, replaced.ID)
				}
			}
		}
	}
}

func cosine32(a, b []float32) float64 {
	return float64(vec.Dot(a, b)) / (vec.Norm(a) * vec.Norm(b))
}

func randVec(rng *rand.Rand, dim int, scale float64) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(scale * rng.NormFloat64())
	}
	return v
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// BenchmarkScale times searches over a corpus of DMAR_SCALE_SIZE documents
// (default 128,000) made from a real snapshot's (internal/synth): BM25 with
// MaxScore and exhaustively, vector search exactly and through the
// HNSW graph. dmar bench scale measures whole requests.
func BenchmarkScale(b *testing.B) {
	t := &testing.T{}
	base := snapshotVectors(t)
	n := 128_000
	if s := os.Getenv("DMAR_SCALE_SIZE"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	docs := synth.Corpus(base, n, synth.Config{Seed: 1})
	x := New(DefaultParams())
	if err := x.Put(context.Background(), docs); err != nil {
		b.Fatal(err)
	}
	g := x.cur.Load()
	start := time.Now()
	h := g.ann()
	b.Logf("%d documents; graph of ef %d built in %s", len(docs), h.ef, time.Since(start))
	rng := rand.New(rand.NewPCG(1, 2))
	var texts []string
	var vecs [][]float32
	for range 200 {
		d := base[rng.IntN(len(base))]
		texts = append(texts, d.Title+" "+strings.Join(strings.Fields(d.Text)[:min(6, len(strings.Fields(d.Text)))], " "))
		vecs = append(vecs, d.Vector)
	}
	lxs := make([]lexical, len(texts))
	for i, q := range texts {
		lxs[i] = g.lexicalOf(q)
	}
	b.Run("bm25-maxscore", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			g.bm25Pruned(lxs[i%len(lxs)], nil, 108, 100)
		}
	})
	b.Run("bm25-exhaustive", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			g.bm25Exhaustive(lxs[i%len(lxs)], nil, 108, 100)
		}
	})
	b.Run("vector-hnsw", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			v := vecs[i%len(vecs)]
			if _, err := g.vectorANN(h, v, vec.Norm(v), 100); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("vector-exact", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			v := vecs[i%len(vecs)]
			if _, err := g.vectorExact(v, vec.Norm(v), nil, 100, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestVectorRecallSweep: VectorRecall reports, at the graph's own ef, the
// recall@k that comparing the index's searches with the exact scan's gives,
// and at an ef as large as the corpus, where the walk sees every node it
// can reach, nearly the exact scan's own top k.
func TestVectorRecallSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 36))
	centers := make([][]float32, 30)
	for i := range centers {
		centers[i] = randVec(rng, 32, 1)
	}
	var docs []retrieval.Document
	for i := range 2000 {
		v := randVec(rng, 32, 0.3)
		for j, c := range centers[rng.IntN(len(centers))] {
			v[j] += c
		}
		docs = append(docs, retrieval.Document{ID: "d" + itoa(i), Title: "t", Text: "text", Vector: v})
	}
	p := annParams(1)
	p.ANNEf = 12 // small, so that the graph misses some
	ann, exact := New(p), New(annParams(-1))
	ctx := context.Background()
	for _, x := range []*Index{ann, exact} {
		if err := x.Put(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	var qs [][]float32
	for range 40 {
		qs = append(qs, randVec(rng, 32, 1))
	}
	at, ok, err := ann.VectorRecall(ctx, qs, 50, 4000)
	if err != nil || !ok || len(at) != 2 {
		t.Fatalf("VectorRecall: %v, ok %v, %d results", err, ok, len(at))
	}
	found, want := 0, 0
	for _, q := range qs {
		in := map[string]bool{}
		for _, h := range search(t, exact, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: 50}) {
			in[h.Doc.ID] = true
		}
		for _, h := range search(t, ann, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: 50}) {
			found += b2i(in[h.Doc.ID])
		}
		want += len(in)
	}
	if own := float64(found) / float64(want); at[0].Ef != 12 || at[0].Recall != own {
		t.Errorf("at the own ef: %+v, want ef 12 and recall %.4f (the searches')", at[0], own)
	}
	// (Not exactly 1: a parallel build can leave a node or two that no
	// walk reaches.)
	if at[1].Ef != 4000 || at[1].Recall < 0.99 || at[1].Recall <= at[0].Recall || at[1].Search <= 0 {
		t.Errorf("at ef 4000 over 2,000 documents: %+v, want recall of at least 0.99, above %.4f at ef 12, and a search time", at[1], at[0].Recall)
	}
	t.Logf("recall@50 %.4f at ef 12, %.4f at ef 4000", at[0].Recall, at[1].Recall)
	if _, ok, _ := exact.VectorRecall(ctx, qs, 50); ok {
		t.Error("the exact index reported an approximate search")
	}
}

// A caller whose context ends while the vector graph is built stops
// waiting with the context's error (a shutdown or a request's deadline does
// not wait minutes); the build goes on, and the next caller gets the graph.
func TestBuildHonoursTheContext(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var docs []retrieval.Document
	for i := range 3000 {
		v := make([]float32, 16)
		for j := range v {
			v[j] = rng.Float32() - 0.5
		}
		docs = append(docs, retrieval.Document{ID: "d" + itoa(i), Title: "t", Text: "text", Vector: v})
	}
	x := New(annParams(1000))
	if err := x.Put(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := x.Build(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Build with an ended context = %v, want context.Canceled", err)
	}
	if _, err := x.Search(ctx, retrieval.Query{Mode: retrieval.Vector, Vector: docs[0].Vector, Limit: 5}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a search with an ended context waiting for the graph = %v, want context.Canceled", err)
	}
	if err := x.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	hits, err := x.Search(context.Background(), retrieval.Query{Mode: retrieval.Vector, Vector: docs[7].Vector, Limit: 5})
	if err != nil || len(hits) == 0 || hits[0].Doc.ID != "d7" {
		t.Fatalf("after the build: %v, %v", hits, err)
	}
}
