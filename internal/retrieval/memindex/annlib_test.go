package memindex

import (
	"fmt"
	mrand "math/rand"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	coder "github.com/coder/hnsw"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/synth"
	"github.com/dmar-kg/dmar/internal/vec"
	"github.com/viterin/vek/vek32"
	"gonum.org/v1/gonum/blas/blas32"
)

// The vector graph against a maintained library, and the dot product
// against maintained SIMD code, on the same seeded vectors: the table of
// docs/ann.md. Run (the table's command):
//
//	DMAR_ANN_SIZE=128000 go test -run '^$' -bench ANNLibraries -benchtime 1x \
//	  -timeout 2h ./internal/retrieval/memindex/
//	go test -run '^$' -bench DotLibraries -count 5 ./internal/retrieval/memindex/
//
// BenchmarkANNLibraries reports per implementation: recall@100 against the
// exact scan, the p50 and p99 of one search, the build time, the heap the
// graph takes per vector (beyond the vectors themselves, which both keep by
// reference), and recall@100 again after a tenth of the vectors was
// deleted and another tenth given new vectors.

// annBenchDim is the encoder's dimension (e5-small-v2).
const annBenchDim = 384

// annBenchSet is the corpus, the queries and the churn, made once per run.
type annBenchSet struct {
	docs    [][]float32 // corpus vectors
	queries [][]float32 // not in the corpus, from the same distribution
	deleted []int       // docs removed by the churn
	updated []int       // docs given new vectors by the churn
	newVecs [][]float32 // their new vectors, as updated
	exact   [][]int     // the exact top 100 of each query, before the churn
	after   [][]int     // and after it (over the live documents)
}

var (
	annSetOnce sync.Once
	annSet     *annBenchSet
)

// makeANNBenchSet draws the corpus, queries and churn from one seeded
// space of vectors like sentence embeddings (synth.Space).
func makeANNBenchSet(n int) *annBenchSet {
	const queries = 200
	rng := rand.New(rand.NewPCG(51, 1))
	sp := synth.NewSpace(rng, annBenchDim)
	s := &annBenchSet{docs: sp.Draw(rng, n), queries: sp.Draw(rng, queries)}
	perm := rng.Perm(n)
	s.deleted, s.updated = perm[:n/10], perm[n/10:n/5]
	s.newVecs = sp.Draw(rng, len(s.updated))
	live := slices.Clone(s.docs)
	for _, i := range s.deleted {
		live[i] = nil
	}
	for j, i := range s.updated {
		live[i] = s.newVecs[j]
	}
	s.exact, s.after = make([][]int, queries), make([][]int, queries)
	parallel(queries, func(lo, hi int) {
		for q := lo; q < hi; q++ {
			s.exact[q] = exactTop(s.docs, s.queries[q], 100)
			s.after[q] = exactTop(live, s.queries[q], 100)
		}
	})
	return s
}

// exactTop is the k nearest of vs (by cosine; nil ones skipped) to q.
func exactTop(vs [][]float32, q []float32, k int) []int {
	qn := vec.Norm(q)
	top := newBest(k, func(a, b scoredDoc) bool { return a.score > b.score || a.score == b.score && a.doc < b.doc }, nil)
	for i, v := range vs {
		if v != nil {
			top.push(scoredDoc{doc: int32(i), score: float64(vec.Dot(q, v)) / (qn * vec.Norm(v))})
		}
	}
	var out []int
	for _, s := range top.sorted() {
		out = append(out, int(s.doc))
	}
	return out
}

func recallAt(got, want [][]int) float64 {
	found, all := 0, 0
	for q := range want {
		in := map[int]bool{}
		for _, i := range want[q] {
			in[i] = true
		}
		for _, i := range got[q] {
			if in[i] {
				found++
			}
		}
		all += len(want[q])
	}
	return float64(found) / float64(all)
}

// annImpl is one implementation under the benchmark.
type annImpl interface {
	build(docs [][]float32)
	search(q []float32, k int) []int
	churn(deleted, updated []int, newVecs [][]float32)
}

// ownANN is this package's graph, searched as vectorANN does: the ef
// nearest nodes found, the dead ones (deleted or replaced documents)
// dropped, the first k kept.
type ownANN struct {
	h    *hnsw
	ef   int
	dead map[int32]bool
}

func (o *ownANN) build(docs [][]float32) {
	ds := make([]retrieval.Document, len(docs))
	for i, v := range docs {
		ds[i] = retrieval.Document{ID: strconv.Itoa(i), Vector: v}
	}
	o.h = buildHNSW(&gen{params: DefaultParams(), docs: ds})
	o.ef, o.dead = o.h.ef, map[int32]bool{}
}

func (o *ownANN) search(q []float32, k int) []int {
	var out []int
	for _, c := range o.h.search(q, vec.Norm(q), max(o.ef, k)) {
		if n := o.h.node(c.id); !o.dead[n.id] {
			out = append(out, int(n.slot))
			if len(out) == k {
				break
			}
		}
	}
	return out
}

// churn is what a write does to the graph (insert): the old nodes stay to
// route searches, dead; new vectors come in as new nodes.
func (o *ownANN) churn(deleted, updated []int, newVecs [][]float32) {
	bySlot := map[int32]int32{}
	for _, n := range *o.h.nodes.Load() {
		bySlot[n.slot] = n.id
	}
	for _, i := range append(slices.Clone(deleted), updated...) {
		o.dead[bySlot[int32(i)]] = true
	}
	for j, i := range updated {
		o.h.link(o.h.add(int32(i), strconv.Itoa(i), newVecs[j], vec.Int8{}, vec.Norm(newVecs[j])))
	}
}

// coderANN is github.com/coder/hnsw with this package's M and ef: M 16
// (it keeps M links on every level), ef 100 while building, the own
// graph's default ef while searching, a seeded level generator.
type coderANN struct {
	g  *coder.Graph[int]
	ef int
}

func (c *coderANN) build(docs [][]float32) {
	c.g = coder.NewGraph[int]()
	c.g.M, c.g.EfSearch = annM, annEfBuild
	c.g.Rng = mrand.New(mrand.NewSource(1))
	for i, v := range docs {
		c.g.Add(coder.MakeNode(i, v))
	}
	c.ef = DefaultParams().annEf(len(docs))
	c.g.EfSearch = c.ef
}

// search asks for ef nodes and keeps the k nearest, as the own graph's
// search does: asked for k, its walk stops once the nearest found stops
// improving with k found, and recall@100 falls to about 0.1.
func (c *coderANN) search(q []float32, k int) []int {
	ns := c.g.Search(q, max(c.ef, k))
	cs := make([]cand, len(ns))
	for i, n := range ns {
		cs[i] = cand{int32(n.Key), c.g.Distance(q, n.Value)}
	}
	slices.SortFunc(cs, byDistance)
	var out []int
	for _, c := range cs[:min(k, len(cs))] {
		out = append(out, int(c.id))
	}
	return out
}

// churn deletes and re-adds (its Add of an existing key panics in v0.6.1:
// "node not added").
func (c *coderANN) churn(deleted, updated []int, newVecs [][]float32) {
	c.g.EfSearch = annEfBuild
	for _, i := range deleted {
		c.g.Delete(i)
	}
	for j, i := range updated {
		c.g.Delete(i)
		c.g.Add(coder.MakeNode(i, newVecs[j]))
	}
	c.g.EfSearch = c.ef
}

// churned deletes and updates, then searches again, and returns the
// recall; a panic in the implementation is returned as an error (coder/hnsw
// v0.6.1 can panic on an Add after a Delete: coder/hnsw#13, fixed after
// that release).
func churned(x annImpl, s *annBenchSet, got [][]int) (recall float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			recall, err = 0, fmt.Errorf("panic: %v", r)
		}
	}()
	x.churn(s.deleted, s.updated, s.newVecs)
	for q, v := range s.queries {
		got[q] = x.search(v, 100)
	}
	return recallAt(got, s.after), nil
}

func heapBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func BenchmarkANNLibraries(b *testing.B) {
	n := 128_000
	if s := os.Getenv("DMAR_ANN_SIZE"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	annSetOnce.Do(func() { annSet = makeANNBenchSet(n) })
	s := annSet
	for _, impl := range []struct {
		name string
		new  func() annImpl
	}{{"own", func() annImpl { return &ownANN{} }}, {"coder-hnsw", func() annImpl { return &coderANN{} }}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				x := impl.new()
				before := heapBytes()
				start := time.Now()
				x.build(s.docs)
				build := time.Since(start)
				graph := float64(heapBytes()-before) / float64(len(s.docs))
				got := make([][]int, len(s.queries))
				took := make([]time.Duration, len(s.queries))
				for q, v := range s.queries {
					t := time.Now()
					got[q] = x.search(v, 100)
					took[q] = time.Since(t)
				}
				slices.Sort(took)
				recall := recallAt(got, s.exact)
				start = time.Now()
				after, err := churned(x, s, got)
				churn := time.Since(start)
				if err != nil {
					b.Logf("%s: deletes and updates failed: %v", impl.name, err)
				}
				p50, p99 := took[len(took)/2], took[len(took)*99/100]
				b.ReportMetric(recall, "recall@100")
				b.ReportMetric(after, "recall@100-after-churn")
				b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
				b.ReportMetric(build.Seconds(), "build-s")
				b.ReportMetric(graph, "graph-B/vector")
				b.Logf("| %s | %d | %.3f | %.2f | %.2f | %.1f | %.0f | %.3f | %.1f |", impl.name, len(s.docs), recall,
					float64(p50.Microseconds())/1000, float64(p99.Microseconds())/1000, build.Seconds(), graph, after, churn.Seconds())
				runtime.KeepAlive(x)
			}
		})
	}
}

// BenchmarkDotLibraries times one dot product of two 384-d vectors: vek's
// (SIMD from Go assembly generated with avo; the graph walk's), gonum's
// (blas32) and the in-order vec.Dot that exact scores use.
func BenchmarkDotLibraries(b *testing.B) {
	rng := rand.New(rand.NewPCG(51, 2))
	const pairs = 4096
	as, bs := make([][]float32, pairs), make([][]float32, pairs)
	for i := range as {
		as[i], bs[i] = randVec(rng, annBenchDim, 1), randVec(rng, annBenchDim, 1)
	}
	for _, f := range []struct {
		name string
		dot  func(a, b []float32) float32
	}{
		{"vek32", vek32.Dot},
		{"gonum-blas32", func(a, b []float32) float32 {
			return blas32.Dot(blas32.Vector{N: len(a), Data: a, Inc: 1}, blas32.Vector{N: len(b), Data: b, Inc: 1})
		}},
		{"vec-dot", vec.Dot},
	} {
		b.Run(f.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				dotSink += f.dot(as[i%pairs], bs[i%pairs])
			}
		})
	}
}

// dotSink keeps the benchmarked products from being optimised away.
var dotSink float32

// The libraries agree with dot up to rounding on the benchmark's vectors,
// so that the timings compare the same result.
func TestDotLibrariesAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 3))
	for range 100 {
		a, b := randVec(rng, annBenchDim, 1), randVec(rng, annBenchDim, 1)
		want := float64(vec.Dot(a, b))
		for name, got := range map[string]float32{"vek32": vek32.Dot(a, b),
			"gonum": blas32.Dot(blas32.Vector{N: len(a), Data: a, Inc: 1}, blas32.Vector{N: len(b), Data: b, Inc: 1})} {
			if d := float64(got) - want; d > 1e-3 || d < -1e-3 {
				t.Fatalf("%s = %v, dot %v", name, got, want)
			}
		}
	}
}
