package memindex

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// The approximate vector search of large corpora: an inverted file (IVF).
//
// The document vectors are clustered by spherical k-means into about
// 2·√N lists; a search scores the query against the lists' centroids and
// scans only the probe lists whose centroids are nearest, so it reads a few
// percent of the vectors instead of all of them. Each list keeps its
// documents' vectors in the blocks dot32 reads (blocks.go), and a document
// found is scored exactly as the exact scan scores it (the same sum in the
// same order), so a document's cosine never depends on the path; what the
// approximation can do is miss a document whose list was not probed. How
// many lists are probed is chosen when the index is built: the fewest whose
// recall@100 against the exact scan, over documents' own vectors with noise
// as queries, is at least annRecall.
//
// Params.ANNMin is the corpus size from which unfiltered vector searches
// take it; below it, and for filtered searches, the scan is exact, so the
// benchmarks' corpora (codexm's 16,352 documents) rank as before to the
// bit. The lists are made by the first search that needs them (or Build),
// and a write patches them (inherit): a changed document moves to the list
// of its nearest centroid. The centroids are trained again (a full build)
// once the corpus has grown to annRetrain times its size at training.

// DefaultANNMin is Params.ANNMin's default.
const DefaultANNMin = 50_000

const (
	annRecall    = 0.97 // the recall@100 the probe count is chosen for
	annRetrain   = 4    // growth since training that makes a write train again
	annIters     = 8    // k-means iterations
	annPerList   = 32   // training vectors per list
	annCalibrate = 64   // queries of the probe calibration
)

// ivf is one generation's inverted file. Lists and their blocks are never
// modified once published; a write copies the lists it changes.
type ivf struct {
	dim     int
	cent    *blocks   // the centroids (unit length), laid out for dot32
	ncent   int       // how many
	lists   []ivfList // by centroid
	assign  []int32   // each slot's list, -1 for none (no vector)
	trained int       // vectors in the index when the centroids were trained
	probe   int       // lists a search scans
}

type ivfList struct {
	slots  []int32     // ascending
	groups [][]float32 // their vectors, blockDocs a group, dimension-major
}

// annMin is ANNMin, DefaultANNMin when 0; negative turns the ANN off.
func (p Params) annMin() int {
	if p.ANNMin == 0 {
		return DefaultANNMin
	}
	return p.ANNMin
}

// useANN reports whether an unfiltered vector search of the generation
// takes the inverted file.
func (x *gen) useANN() bool {
	m := x.params.annMin()
	return m > 0 && len(x.byID) >= m
}

// ann is the generation's inverted file (nil when the vectors do not share
// one dimension, or there are none).
func (x *gen) ann() *ivf {
	return x.prep.ivf.get(func() *ivf { return buildIVF(x.docs, x.norms()) })
}

// vectorANN is vector through the inverted file.
func (x *gen) vectorANN(ix *ivf, v []float32, qn float64, keep int) []scoredDoc {
	norms := x.norms()
	top := newBest(keep, x.better, make([]scoredDoc, 0, keep))
	for _, c := range ix.nearest(v, ix.probe) {
		ix.lists[c].scan(v, func(slot int32, dot float32) {
			top.push(scoredDoc{doc: slot, score: float64(dot) / (qn * norms[slot])})
		})
	}
	return top.sorted()
}

// nearest are the n centroids of highest dot product with v, best first.
func (ix *ivf) nearest(v []float32, n int) []int32 {
	type cs struct {
		c   int32
		dot float32
	}
	top := newBest(n, func(a, b cs) bool {
		if a.dot != b.dot {
			return a.dot > b.dot
		}
		return a.c < b.c
	}, make([]cs, 0, n))
	var out [blockDocs]float32
	for g := range ix.cent.groups {
		dotBlock(v, ix.cent.group(g), &out)
		for j := range min(blockDocs, ix.ncent-g*blockDocs) {
			top.push(cs{int32(g*blockDocs + j), out[j]})
		}
	}
	best := top.sorted()
	ids := make([]int32, len(best))
	for i, b := range best {
		ids[i] = b.c
	}
	return ids
}

// scan calls f with each document of the list and its vector's dot product
// with v.
func (l ivfList) scan(v []float32, f func(slot int32, dot float32)) {
	var out [blockDocs]float32
	for g, blk := range l.groups {
		dotBlock(v, blk, &out)
		for j := range min(blockDocs, len(l.slots)-g*blockDocs) {
			f(l.slots[g*blockDocs+j], out[j])
		}
	}
}

// buildIVF trains the centroids on a seeded sample of the vectors, assigns
// every document to its nearest one and calibrates the probe count.
func buildIVF(docs []retrieval.Document, norms []float64) *ivf {
	dim, slots := 0, make([]int32, 0, len(docs))
	for i, d := range docs {
		switch {
		case len(d.Vector) == 0 || norms[i] == 0:
			continue
		case dim == 0:
			dim = len(d.Vector)
		case len(d.Vector) != dim:
			return nil // the exact scan names the mismatch
		}
		slots = append(slots, int32(i))
	}
	if len(slots) < 2*blockDocs {
		return nil
	}
	ncent := min(max(int(2*math.Sqrt(float64(len(slots)))), 16), 8192)
	ix := &ivf{dim: dim, ncent: ncent, trained: len(slots)}
	ix.cent = trainCentroids(docs, norms, slots, ncent, dim)
	ix.assign = make([]int32, len(docs))
	for i := range ix.assign {
		ix.assign[i] = -1
	}
	parallel(len(slots), func(lo, hi int) {
		for _, s := range slots[lo:hi] {
			ix.assign[s] = ix.nearest(docs[s].Vector, 1)[0]
		}
	})
	members := make([][]int32, ncent)
	for _, s := range slots { // ascending, so each list is
		members[ix.assign[s]] = append(members[ix.assign[s]], s)
	}
	ix.lists = make([]ivfList, ncent)
	for c, m := range members {
		ix.lists[c] = newList(docs, m, dim)
	}
	ix.probe = ix.calibrate(docs, norms, slots)
	return ix
}

func newList(docs []retrieval.Document, slots []int32, dim int) ivfList {
	l := ivfList{slots: slots, groups: make([][]float32, (len(slots)+blockDocs-1)/blockDocs)}
	for g := range l.groups {
		blk := make([]float32, blockDocs*dim)
		for j, s := range slots[g*blockDocs : min((g+1)*blockDocs, len(slots))] {
			for i, f := range docs[s].Vector {
				blk[i*blockDocs+j] = f
			}
		}
		l.groups[g] = blk
	}
	return l
}

// trainCentroids runs spherical k-means (dot products of unit vectors) on
// annPerList·ncent vectors drawn with a fixed seed, from ncent of them.
func trainCentroids(docs []retrieval.Document, norms []float64, slots []int32, ncent, dim int) *blocks {
	rng := rand.New(rand.NewPCG(uint64(len(slots)), 36))
	n := min(len(slots), annPerList*ncent)
	pick := rng.Perm(len(slots))[:n]
	sample := make([][]float32, n)
	for i, p := range pick {
		s := slots[p]
		u := make([]float32, dim)
		for j, f := range docs[s].Vector {
			u[j] = float32(float64(f) / norms[s])
		}
		sample[i] = u
	}
	cent := make([][]float32, ncent)
	for c := range cent {
		cent[c] = slices.Clone(sample[c])
	}
	assign := make([]int32, n)
	for range annIters {
		lay := layout(cent, dim)
		parallel(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				assign[i] = lay.nearest(sample[i], 1)[0]
			}
		})
		sum := make([][]float64, ncent)
		for c := range sum {
			sum[c] = make([]float64, dim)
		}
		count := make([]int, ncent)
		for i, c := range assign {
			count[c]++
			for j, f := range sample[i] {
				sum[c][j] += float64(f)
			}
		}
		for c := range cent {
			if count[c] == 0 {
				// An empty list takes a vector at random: no centroid is wasted.
				cent[c] = slices.Clone(sample[rng.IntN(n)])
				continue
			}
			var nn float64
			for _, f := range sum[c] {
				nn += f * f
			}
			nn = math.Sqrt(nn)
			for j := range cent[c] {
				cent[c][j] = float32(sum[c][j] / nn)
			}
		}
	}
	return layout(cent, dim).cent
}

// layout is an ivf of the centroids alone, for assigning vectors to them.
func layout(cent [][]float32, dim int) *ivf {
	b := &blocks{dim: dim, groups: make([][]float32, (len(cent)+blockDocs-1)/blockDocs)}
	for g := range b.groups {
		blk := make([]float32, blockDocs*dim)
		for j, c := range cent[g*blockDocs : min((g+1)*blockDocs, len(cent))] {
			for i, f := range c {
				blk[i*blockDocs+j] = f
			}
		}
		b.groups[g] = blk
	}
	return &ivf{dim: dim, cent: b, ncent: len(cent)}
}

// calibrate is the fewest lists to probe for a recall@100 of annRecall:
// queries are annCalibrate documents' vectors with noise (a query is near
// its document but not on it), answered exactly and through the lists.
func (ix *ivf) calibrate(docs []retrieval.Document, norms []float64, slots []int32) int {
	rng := rand.New(rand.NewPCG(uint64(len(slots)), 7))
	type query struct {
		v     []float32
		qn    float64
		exact map[int32]bool
	}
	qs := make([]query, annCalibrate)
	for i := range qs {
		s := slots[rng.IntN(len(slots))]
		v := make([]float32, ix.dim)
		for j, f := range docs[s].Vector {
			v[j] = float32(float64(f)/norms[s] + 0.03*rng.NormFloat64())
		}
		qs[i] = query{v: v, qn: norm(v)}
	}
	better := func(a, b scoredDoc) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.doc < b.doc
	}
	parallel(len(qs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			q := &qs[i]
			top := newBest(100, better, nil)
			for _, l := range ix.lists {
				l.scan(q.v, func(s int32, dot float32) { top.push(scoredDoc{s, float64(dot) / (q.qn * norms[s])}) })
			}
			q.exact = map[int32]bool{}
			for _, d := range top.h {
				q.exact[d.doc] = true
			}
		}
	})
	for probe := 1; ; probe = min(probe*3/2+1, ix.ncent) {
		found, want := 0, 0
		for _, q := range qs {
			top := newBest(100, better, nil)
			for _, c := range ix.nearest(q.v, probe) {
				ix.lists[c].scan(q.v, func(s int32, dot float32) { top.push(scoredDoc{s, float64(dot) / (q.qn * norms[s])}) })
			}
			for _, d := range top.h {
				if q.exact[d.doc] {
					found++
				}
			}
			want += len(q.exact)
		}
		if probe == ix.ncent || float64(found) >= annRecall*float64(want) {
			return probe
		}
	}
}

// dotBlock is dot32 where the CPU has its kernel, dot32Go elsewhere (the
// same sums).
func dotBlock(q, blk []float32, out *[blockDocs]float32) {
	if haveDot32 {
		dot32(q, blk, out)
		return
	}
	dot32Go(q, blk, out)
}

// parallel runs f over [0, n) in one part per CPU.
func parallel(n int, f func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), max(n/64, 1))
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

// patch is ix with the slots a write changed moved to their lists (nil
// when the write calls for training again).
func (ix *ivf) patch(docs []retrieval.Document, norms []float64, changed []int32) *ivf {
	if ix == nil {
		return nil
	}
	n := 0
	for i, d := range docs {
		if len(d.Vector) > 0 && norms[i] > 0 {
			if len(d.Vector) != ix.dim {
				return nil
			}
			n++
		}
	}
	if n > annRetrain*ix.trained || n < 2*blockDocs {
		return nil
	}
	out := *ix
	out.lists = slices.Clone(ix.lists)
	out.assign = make([]int32, len(docs))
	copy(out.assign, ix.assign)
	for i := len(ix.assign); i < len(docs); i++ {
		out.assign[i] = -1
	}
	touched := map[int32]bool{}
	for _, s := range changed {
		if old := out.assign[s]; old >= 0 {
			touched[old] = true
		}
		out.assign[s] = -1
		if d := docs[s]; len(d.Vector) > 0 && norms[s] > 0 {
			out.assign[s] = ix.nearest(d.Vector, 1)[0]
			touched[out.assign[s]] = true
		}
	}
	for c := range touched {
		var m []int32
		for _, s := range ix.lists[c].slots {
			if out.assign[s] == c {
				m = append(m, s)
			}
		}
		for _, s := range changed {
			if out.assign[s] == c && !slices.Contains(m, s) {
				m = append(m, s)
			}
		}
		slices.Sort(m)
		m = slices.Compact(m)
		out.lists[c] = newList(docs, m, ix.dim)
	}
	return &out
}
