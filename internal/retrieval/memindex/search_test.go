package memindex

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/vec"
)

// realData is codexm's documents and kgqa's dev questions, with real vectors
// when they are here: the documents' from a codexm index snapshot that the
// installed encoder made ($DMAR_CACHE/state, written by dmar serve), the
// questions' from that encoder. Otherwise the vectors are seeded random
// ones (the documents' text, links and the questions stay real).
type realData struct {
	docs      []retrieval.Document
	questions []kgqaQuestion
	qvecs     [][]float32
	vectors   string // where the vectors came from
}

type kgqaQuestion struct {
	Question  string   `json:"question"`
	Topics    []string `json:"topic_qids"`
	TopicText []string `json:"topic_labels"`
	Gold      []string `json:"gold_doc_ids"`
}

var (
	realOnce sync.Once
	realSet  *realData
	realErr  error
)

func loadReal(tb testing.TB) *realData {
	tb.Helper()
	realOnce.Do(func() { realSet, realErr = readReal() })
	if realErr != nil {
		tb.Skip("real data:", realErr)
	}
	return realSet
}

func readReal() (*realData, error) {
	ctx := context.Background()
	dir, err := datapath.Dataset("codexm")
	if err != nil {
		return nil, err
	}
	docs, _, err := corpus.ReadFile(ctx, filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return nil, err
	}
	qdir, err := datapath.Dataset("kgqa")
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(qdir, "dev.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &realData{docs: docs}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var q kgqaQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("kgqa dev: %w", err)
		}
		r.questions = append(r.questions, q)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if why := r.realVectors(ctx); why != "" {
		r.seededVectors(why)
	}
	return r, nil
}

// realVectors attaches the snapshot's document vectors and links and the
// encoder's question vectors, or says why it could not.
func (r *realData) realVectors(ctx context.Context) string {
	encDir := onnxtest.EncoderDir()
	var m struct {
		Name string `json:"name"`
	}
	b, err := os.ReadFile(filepath.Join(encDir, "manifest.json"))
	if err != nil || json.Unmarshal(b, &m) != nil || m.Name == "" {
		return "no sentence encoder installed"
	}
	recs, _ := filepath.Glob(filepath.Join(onnxtest.CacheDir(), "state", "index-*.encoder.json"))
	var snap string
	for _, rec := range recs {
		var e struct {
			Version string `json:"version"`
		}
		b, err := os.ReadFile(rec)
		if err != nil || json.Unmarshal(b, &e) != nil || !strings.HasPrefix(e.Version, m.Name+"@") {
			continue
		}
		if st, err := os.Stat(strings.TrimSuffix(rec, ".encoder.json") + ".gob"); err == nil && st.Size() > 20<<20 {
			snap = strings.TrimSuffix(rec, ".encoder.json") + ".gob"
		}
	}
	if snap == "" {
		return "no codexm index snapshot made by " + m.Name + " in the cache (dmar serve --data codexm writes one)"
	}
	x, err := Load(snap, DefaultParams())
	if err != nil {
		return err.Error()
	}
	byID := map[string]retrieval.Document{}
	for _, d := range x.All() {
		byID[d.ID] = d
	}
	for i, d := range r.docs {
		s, ok := byID[d.ID]
		if !ok || len(byID) != len(r.docs) {
			return snap + " is not codexm's index"
		}
		r.docs[i].Vector, r.docs[i].Entities = s.Vector, s.Entities
	}
	rt, err := onnx.Open(onnxtest.Config())
	if err != nil {
		return err.Error()
	}
	enc, err := onnx.NewEncoder(rt, encDir)
	if err != nil {
		return err.Error()
	}
	defer enc.Close()
	texts := make([]string, len(r.questions))
	for i, q := range r.questions {
		texts[i] = q.Question
	}
	if r.qvecs, err = enc.Encode(ctx, texts); err != nil {
		return err.Error()
	}
	r.vectors = "real: " + snap + " and " + m.Name
	return ""
}

func (r *realData) seededVectors(why string) {
	rng := rand.New(rand.NewPCG(16, 2))
	randomVector := func() []float32 {
		v := make([]float32, 64)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for i := range r.docs {
		r.docs[i].Vector, r.docs[i].Entities = randomVector(), []string{r.docs[i].ID}
	}
	r.qvecs = make([][]float32, len(r.questions))
	for i := range r.qvecs {
		r.qvecs[i] = randomVector()
	}
	r.vectors = "seeded random (" + why + ")"
}

// queries are the searches compared: per question, BM25 and vector at the
// limits the pipeline uses, hybrid in both fusions at several alphas, a
// long query like the reformulated second stage's, and filters by IDs and
// by linked entities.
func (r *realData) queries(n int) []retrieval.Query {
	var out []retrieval.Query
	all := make([]string, len(r.docs))
	for i, d := range r.docs {
		all[i] = d.ID
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i, q := range r.questions[:min(n, len(r.questions))] {
		long := q.Question + " " + strings.Join(q.TopicText, " ") + " place of birth country of citizenship film"
		ids := append([]string(nil), q.Gold...)
		for range 300 {
			ids = append(ids, all[rng.IntN(len(all))])
		}
		filters := []retrieval.Filter{{}, {IDs: ids}, {AnyEntities: q.Topics}}
		v := r.qvecs[i]
		for fi, f := range filters {
			for _, limit := range []int{5, 100} {
				out = append(out,
					retrieval.Query{Mode: retrieval.BM25, Text: q.Question, Limit: limit, Filter: f},
					retrieval.Query{Mode: retrieval.Vector, Vector: v, Limit: limit, Filter: f})
			}
			for _, a := range []float64{0, 0.25, 0.5, 1} {
				out = append(out, retrieval.Query{Mode: retrieval.Hybrid, Text: long, Vector: v, Alpha: a, Fusion: retrieval.RelativeScore, Limit: 20, Filter: f})
			}
			if fi == 0 {
				out = append(out,
					retrieval.Query{Mode: retrieval.BM25, Text: long, Limit: 100},
					retrieval.Query{Mode: retrieval.Hybrid, Text: long, Vector: v, Alpha: 0.75, Fusion: retrieval.RankedFusion, Limit: 100})
			}
		}
	}
	return out
}

// sameHits fails unless got and want hold the same documents in the same
// order with the same scores and explanations.
func sameHits(t *testing.T, q retrieval.Query, got, want []retrieval.Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s %q limit %d: %d hits, the reference %d", q.Mode, q.Text, q.Limit, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Doc.ID != w.Doc.ID || g.Score != w.Score || g.Explain != w.Explain {
			t.Fatalf("%s %q alpha %v limit %d filter %v: hit %d is %s %v %q, the reference's %s %v %q",
				q.Mode, q.Text, q.Alpha, q.Limit, !q.Filter.Empty(), i, g.Doc.ID, g.Score, g.Explain, w.Doc.ID, w.Score, w.Explain)
		}
	}
}

// compare runs every query on x and on the reference over x's current
// generation.
func compare(t *testing.T, x *Index, qs []retrieval.Query) {
	t.Helper()
	g := x.cur.Load()
	for _, q := range qs {
		got, err := x.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := g.refSearch(q)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, q, got, want)
	}
}

// TestSearchMatchesReference: on codexm and kgqa dev, every search returns
// what the reference implementation returns, to the bit: the same ranked
// documents, scores and explanations, with Weaviate's defaults, without its
// per-field cut, with classic BM25, and after deletes left holes.
func TestSearchMatchesReference(t *testing.T) {
	r := loadReal(t)
	t.Logf("%d documents, %d questions, vectors %s", len(r.docs), len(r.questions), r.vectors)
	classic := DefaultParams()
	classic.Classic, classic.WeaviateTopK = true, false
	noCut := DefaultParams()
	noCut.WeaviateTopK = false
	maxScore, classicMaxScore := DefaultParams(), classic
	maxScore.MaxScore, classicMaxScore.MaxScore = true, true
	for _, c := range []struct {
		name      string
		p         Params
		questions int
	}{{"weaviate", DefaultParams(), 20}, {"no-cut", noCut, 10}, {"classic", classic, 10}, {"maxscore", maxScore, 10}, {"classic-maxscore", classicMaxScore, 10}} {
		t.Run(c.name, func(t *testing.T) {
			x := New(c.p)
			if err := x.Put(context.Background(), r.docs); err != nil {
				t.Fatal(err)
			}
			qs := r.queries(c.questions)
			compare(t, x, qs)
			if c.name != "weaviate" {
				return
			}
			// Deleted documents leave empty slots (and change N, df, the averages).
			var del []string
			for i := 0; i < len(r.docs); i += 40 {
				del = append(del, r.docs[i].ID)
			}
			if _, err := x.Delete(context.Background(), del); err != nil {
				t.Fatal(err)
			}
			compare(t, x, qs[:len(qs)/4])
		})
	}
}

// TestSearchTiesMatchReference: documents with the same text and vector
// under different IDs tie in every mode; ties go by ID, as in the
// reference, whatever the order they were loaded in.
func TestSearchTiesMatchReference(t *testing.T) {
	r := loadReal(t)
	var docs []retrieval.Document
	for _, d := range r.docs[:400] {
		for _, suffix := range []string{"-b", "", "-a"} {
			c := d
			c.ID += suffix
			docs = append(docs, c)
		}
	}
	x := New(DefaultParams())
	if err := x.Put(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	compare(t, x, r.queries(30))
}

// TestBestKeepsTheFirstK: the bounded heap keeps what sorting everything
// and cutting keeps, for every k, including ties and k beyond the input.
func TestBestKeepsTheFirstK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n, k := rng.IntN(60), rng.IntN(70)
		in := make([]int, n)
		for i := range in {
			in[i] = rng.IntN(20)*100 + i // ties in the hundreds, broken by the rest
		}
		b := newBest(k, func(a, b int) bool {
			if a/100 != b/100 {
				return a/100 > b/100
			}
			return a < b
		}, nil)
		for _, v := range in {
			b.push(v)
		}
		got := b.sorted()
		want := append([]int(nil), in...)
		for i := range want {
			for j := i + 1; j < len(want); j++ {
				if b.better(want[j], want[i]) {
					want[i], want[j] = want[j], want[i]
				}
			}
		}
		want = want[:min(k, len(want))]
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("n=%d k=%d: kept %v, want %v", n, k, got, want)
		}
	}
}

// BenchmarkSearch runs the searches of a loaded server's requests on
// codexm, each with the reference implementation (the baseline) and the
// index: BM25 recall of the question, the second stage's hybrid over the
// long reformulated query, and a vector search.
func BenchmarkSearch(b *testing.B) {
	r := loadReal(b)
	x := New(DefaultParams())
	if err := x.Put(context.Background(), r.docs); err != nil {
		b.Fatal(err)
	}
	g := x.cur.Load()
	var bm, hy, dense []retrieval.Query
	for i, q := range r.questions[:50] {
		long := q.Question + " " + strings.Join(q.TopicText, " ") + " place of birth country of citizenship film"
		bm = append(bm, retrieval.Query{Mode: retrieval.BM25, Text: q.Question, Limit: 100})
		hy = append(hy, retrieval.Query{Mode: retrieval.Hybrid, Text: long, Vector: r.qvecs[i], Alpha: 0.5, Fusion: retrieval.RelativeScore, Limit: 100})
		dense = append(dense, retrieval.Query{Mode: retrieval.Vector, Vector: r.qvecs[i], Limit: 100})
	}
	// What the index prepares once per generation (norms, length terms,
	// blocks) is made before timing, as a server makes it at its first search.
	if _, err := x.Search(context.Background(), hy[0]); err != nil {
		b.Fatal(err)
	}
	for _, set := range []struct {
		name string
		qs   []retrieval.Query
	}{{"bm25", bm}, {"hybrid", hy}, {"vector", dense}} {
		b.Run(set.name+"/reference", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := g.refSearch(set.qs[i%len(set.qs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(set.name+"/index", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := x.Search(context.Background(), set.qs[i%len(set.qs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDot32MatchesDot: the block kernel (and its Go twin) gives each
// document exactly dot's float32 sum, with magnitudes from subnormal to
// large, and any dimension.
func TestDot32MatchesDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{1, 7, 64, 384} {
		q := make([]float32, dim)
		vecs := make([][]float32, blockDocs)
		blk := make([]float32, dim*blockDocs)
		scale := func() float32 { return float32(math.Ldexp(1, rng.IntN(120)-100)) } // down to subnormal products
		for i := range q {
			q[i] = float32(rng.NormFloat64()) * scale()
		}
		for j := range vecs {
			vecs[j] = make([]float32, dim)
			for i := range vecs[j] {
				vecs[j][i] = float32(rng.NormFloat64()) * scale()
				blk[i*blockDocs+j] = vecs[j][i]
			}
		}
		var got, twin [blockDocs]float32
		dot32(q, blk, &got)
		dot32Go(q, blk, &twin)
		for j, d := range vecs {
			want := vec.Dot(q, d)
			if math.Float32bits(got[j]) != math.Float32bits(want) || math.Float32bits(twin[j]) != math.Float32bits(want) {
				t.Fatalf("dim %d doc %d: dot32 %g, Go twin %g, dot %g", dim, j, got[j], twin[j], want)
			}
		}
	}
}

// TestVectorPathsAgree: the block scan and the per-document scan return
// the same hits, with and without filters.
func TestVectorPathsAgree(t *testing.T) {
	if !haveDot32 {
		t.Skip("no vector kernel on this CPU: only the per-document path runs")
	}
	r := loadReal(t)
	x := New(DefaultParams())
	if err := x.Put(context.Background(), r.docs[:5000]); err != nil {
		t.Fatal(err)
	}
	var qs []retrieval.Query
	for _, q := range r.queries(20) {
		if q.Mode != retrieval.BM25 {
			qs = append(qs, q)
		}
	}
	search := func() [][]retrieval.Hit {
		var out [][]retrieval.Hit
		for _, q := range qs {
			h, err := x.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, h)
		}
		return out
	}
	blocked := search()
	haveDot32 = false
	defer func() { haveDot32 = true }()
	for i, h := range search() {
		sameHits(t, qs[i], blocked[i], h)
	}
}

// TestVectorDimensionMismatch: a query whose dimension differs from a
// document's is refused, naming both, on either layout (all documents of
// one dimension, which the blocks hold, or mixed, which they do not).
func TestVectorDimensionMismatch(t *testing.T) {
	for _, docs := range [][]retrieval.Document{
		{{ID: "a", Vector: []float32{1, 0, 0}}, {ID: "b", Vector: []float32{0, 1, 0}}},
		{{ID: "a", Vector: []float32{1, 0}}, {ID: "b", Vector: []float32{0, 1, 0}}},
	} {
		x := New(DefaultParams())
		if err := x.Put(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
		_, err := x.Search(context.Background(), retrieval.Query{Mode: retrieval.Vector, Vector: []float32{1, 1}, Limit: 2})
		if err == nil || !strings.Contains(err.Error(), "query vector has 2 dimensions, documents have 3") {
			t.Errorf("%d-dimensional documents: error %v", len(docs[1].Vector), err)
		}
	}
}

// TestWritesRefreshPrepared: what a generation prepares for searches
// (norms, length terms, blocks) is made anew after a write, so a replaced
// or added document is scored by its new text and vector.
func TestWritesRefreshPrepared(t *testing.T) {
	x := New(DefaultParams())
	docs := []retrieval.Document{
		{ID: "a", Title: "Inception", Text: "a film by Nolan", Vector: []float32{1, 0, 0}},
		{ID: "b", Title: "Memento", Text: "another film", Vector: []float32{0, 1, 0}},
	}
	if err := x.Put(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	qs := []retrieval.Query{
		{Mode: retrieval.Vector, Vector: []float32{0, 1, 1}, Limit: 3},
		{Mode: retrieval.BM25, Text: "nolan film", Limit: 3},
		{Mode: retrieval.Hybrid, Text: "nolan film", Vector: []float32{0, 1, 1}, Alpha: 0.5, Limit: 3},
	}
	compare(t, x, qs) // prepares the first generation
	if err := x.Put(context.Background(), []retrieval.Document{
		{ID: "b", Title: "Memento", Text: "Nolan Nolan film", Vector: []float32{0, 0, 2}},
		{ID: "c", Title: "Tenet", Text: "Nolan", Vector: []float32{0, 3, 3}},
	}); err != nil {
		t.Fatal(err)
	}
	compare(t, x, qs)
	hits, err := x.Search(context.Background(), qs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 || hits[0].Doc.ID != "c" {
		t.Errorf("after the write, vector hits %v: want c (cosine 1) first", hits)
	}
}
