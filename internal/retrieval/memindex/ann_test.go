package memindex

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/synth"
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

func annParams(min int) Params {
	p := DefaultParams()
	p.ANNMin = min
	return p
}

// TestANNRecall: over a real corpus's vectors, the inverted file's top 100
// holds at least 95% of the exact scan's, for queries that are documents
// left out of the index; every document it returns has the cosine the
// exact scan gives it (the same bits), and the order is the exact order of
// what it found.
func TestANNRecall(t *testing.T) {
	if raceEnabled {
		t.Skip("long comparison: run without -race")
	}
	docs := snapshotVectors(t)
	rng := rand.New(rand.NewPCG(36, 1))
	perm := rng.Perm(len(docs))
	var queries [][]float32
	var kept []retrieval.Document
	for i, p := range perm {
		if i < 200 {
			queries = append(queries, docs[p].Vector)
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
	ix := ann.cur.Load().ann()
	if ix == nil {
		t.Fatal("no inverted file was built")
	}
	found, want := 0, 0
	for _, q := range queries {
		got := search(t, ann, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: 100})
		ref := search(t, exact, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: 100})
		in := map[string]float64{}
		for _, h := range ref {
			in[h.Doc.ID] = h.Score
		}
		exactScore := map[string]float64{}
		for _, h := range search(t, exact, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: len(kept)}) {
			exactScore[h.Doc.ID] = h.Score
		}
		for i, h := range got {
			if _, ok := in[h.Doc.ID]; ok {
				found++
			}
			if s := exactScore[h.Doc.ID]; s != h.Score {
				t.Fatalf("%s: cosine %v through the inverted file, %v exactly", h.Doc.ID, h.Score, s)
			}
			if i > 0 && !(got[i-1].Score > h.Score || got[i-1].Score == h.Score && got[i-1].Doc.ID < h.Doc.ID) {
				t.Fatalf("hit %d out of order", i)
			}
		}
		want += len(ref)
	}
	recall := float64(found) / float64(want)
	t.Logf("%d lists, %d probed; recall@100 %.4f over %d held-out documents", ix.ncent, ix.probe, recall, len(queries))
	if recall < 0.95 {
		t.Errorf("recall@100 %.4f, want at least 0.95", recall)
	}
}

func search(t *testing.T, x *Index, q retrieval.Query) []retrieval.Hit {
	t.Helper()
	hs, err := x.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// TestANNFollowsWrites: after puts, replacements and deletes, the patched
// inverted file holds every document with a vector in exactly one list,
// that of its nearest centroid, as a fresh assignment would; a document
// put is found by its own vector, a deleted one never.
func TestANNFollowsWrites(t *testing.T) {
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
	x := New(annParams(1000))
	ctx := context.Background()
	if err := x.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}
	x.Build()
	for round := range 5 {
		var put []retrieval.Document
		for i := range 40 {
			put = append(put, doc("n"+itoa(round)+"-"+itoa(i)))
		}
		put = append(put, doc(docs[rng.IntN(len(docs))].ID)) // a replacement
		if err := x.Put(ctx, put); err != nil {
			t.Fatal(err)
		}
		del := docs[rng.IntN(len(docs))].ID
		if _, err := x.Delete(ctx, []string{del}); err != nil {
			t.Fatal(err)
		}
		g := x.cur.Load()
		if !g.prep.ivf.wanted() {
			t.Fatalf("round %d: the write did not carry the inverted file over", round)
		}
		ix := g.ann()
		seen := map[int32]int{}
		for c, l := range ix.lists {
			for _, s := range l.slots {
				seen[s]++
				if ix.assign[s] != int32(c) || ix.nearest(g.docs[s].Vector, 1)[0] != int32(c) {
					t.Fatalf("round %d: slot %d in list %d, assigned %d", round, s, c, ix.assign[s])
				}
			}
		}
		for s, d := range g.docs {
			if want := b2i(d.ID != ""); seen[int32(s)] != want {
				t.Fatalf("round %d: slot %d (%q) in %d lists", round, s, d.ID, seen[int32(s)])
			}
		}
		for _, d := range put {
			hs := search(t, x, retrieval.Query{Mode: retrieval.Vector, Vector: d.Vector, Limit: 1})
			if len(hs) != 1 || hs[0].Doc.ID != d.ID {
				t.Fatalf("round %d: %s not found by its own vector: %v", round, d.ID, hs)
			}
		}
		if hs := search(t, x, retrieval.Query{Mode: retrieval.BM25, Text: del, Limit: 5}); len(hs) > 0 && hs[0].Doc.ID == del {
			t.Fatalf("round %d: deleted %s still found", round, del)
		}
	}
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
// inverted file. dmar bench scale measures whole requests.
func BenchmarkScale(b *testing.B) {
	t := &testing.T{}
	real := snapshotVectors(t)
	n := 128_000
	if s := os.Getenv("DMAR_SCALE_SIZE"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	docs := synth.Corpus(real, n, synth.Config{Seed: 1})
	x := New(DefaultParams())
	if err := x.Put(context.Background(), docs); err != nil {
		b.Fatal(err)
	}
	g := x.cur.Load()
	start := time.Now()
	ix := g.ann()
	b.Logf("%d documents; inverted file: %d lists, %d probed, built in %s", len(docs), ix.ncent, ix.probe, time.Since(start))
	rng := rand.New(rand.NewPCG(1, 2))
	var texts []string
	var vecs [][]float32
	for range 200 {
		d := real[rng.IntN(len(real))]
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
	b.Run("vector-ivf", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			v := vecs[i%len(vecs)]
			g.vectorANN(ix, v, norm(v), 100)
		}
	})
	exact := &gen{params: g.params, docs: g.docs, byID: g.byID, fields: g.fields}
	exact.params.ANNMin = -1
	b.Run("vector-exact", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			exact.vector(vecs[i%len(vecs)], nil, 100)
		}
	})
}
