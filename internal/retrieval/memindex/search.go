package memindex

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/vec"
)

// Search implements retrieval.Index.
//
// A search allocates nothing per document: BM25 scores into pooled dense
// arrays, the vector search into a bounded heap, and explanations are
// formatted only for the hits returned. Results are those of the plain
// implementation (a map per field, every match sorted) to the bit;
// reference_test.go keeps that one and search_test.go compares them.
func (x *Index) Search(ctx context.Context, q retrieval.Query) ([]retrieval.Hit, error) {
	if err := q.Validate(); err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "search: %v", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := x.cur.Load() // the generation this search reads throughout
	allow := g.allowed(q.Filter)
	var (
		top     []scoredDoc
		explain func(scoredDoc) string
	)
	switch q.Mode {
	case retrieval.BM25:
		var lx lexical
		top, lx = g.bm25(q.Text, allow, min(q.Limit+WeaviateTieSlack, 10000), q.Limit)
		explain = func(s scoredDoc) string { return g.explainBM25(s.doc, lx) }
	case retrieval.Vector:
		var err error
		if top, err = g.vector(ctx, q.Vector, allow, q.Limit); err != nil {
			return nil, err
		}
		explain = explainCosine
	case retrieval.Hybrid:
		var (
			lex, dense []scoredDoc
			err        error
		)
		if lex, dense, err = g.hybrid(ctx, q, allow); err != nil {
			return nil, err
		}
		k := g.params.rankedFusionK()
		top = topK(fuse(q.Fusion, q.Alpha, k, lex, dense), q.Limit, g.docs)
		explain = newFusedExplainer(q.Fusion, q.Alpha, k, lex, dense).explain
	}
	hits := make([]retrieval.Hit, len(top))
	var r vecReader
	for i, s := range top {
		d, err := g.withVector(int(s.doc), &r, q.WithVectors)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		hits[i] = retrieval.Hit{Doc: d, Score: s.score, Explain: explain(s)}
	}
	return hits, nil
}

type scoredDoc struct {
	doc   int32
	score float64
}

// vector returns the keep documents of highest cosine, best first.
func (x *gen) vector(ctx context.Context, v []float32, allow []bool, keep int) ([]scoredDoc, error) {
	qn := vec.Norm(v)
	if qn == 0 {
		return nil, errs.E(errs.Invalid, "search: query vector is all zeros")
	}
	if allow == nil && x.useANN() {
		h, err := x.annCtx(ctx)
		if err != nil {
			return nil, fmt.Errorf("search: waiting for the vector graph: %w", err)
		}
		if h != nil && h.dim == len(v) {
			return x.vectorANN(h, v, qn, keep)
		}
	}
	if x.store != nil {
		return x.vectorCompact(v, qn, allow, keep)
	}
	// A corpus large enough for the vector graph scans exactly only for
	// filtered searches, without a second copy of its vectors.
	return x.vectorExact(v, qn, allow, keep, haveDot32 && !x.useANN())
}

// vectorExact is vector's scan of every document, over the vectors'
// blocks when useBlocks.
func (x *gen) vectorExact(v []float32, qn float64, allow []bool, keep int, useBlocks bool) ([]scoredDoc, error) {
	norms := x.norms()
	top := newBest(keep, x.better, make([]scoredDoc, 0, min(keep, len(x.docs))))
	if useBlocks {
		if b := x.blocks(); b != nil && b.dim == len(v) {
			x.vectorBlocks(v, qn, allow, norms, b, top)
			return top.sorted(), nil
		}
	}
	// Four documents at a time: four independent sums keep the core busy
	// while each is still added in order (so cosines do not change).
	var batch [4]int32
	nb := 0
	for i, d := range x.docs {
		if allow != nil && !allow[i] {
			continue
		}
		if len(d.Vector) == 0 {
			continue
		}
		if len(d.Vector) != len(v) {
			return nil, errs.E(errs.Invalid, "search: query vector has %d dimensions, documents have %d", len(v), len(d.Vector))
		}
		if norms[i] == 0 {
			continue
		}
		batch[nb] = int32(i)
		nb++
		if nb < len(batch) {
			continue
		}
		nb = 0
		s0, s1, s2, s3 := vec.Dot4(v, x.docs[batch[0]].Vector, x.docs[batch[1]].Vector, x.docs[batch[2]].Vector, x.docs[batch[3]].Vector)
		for j, s := range [4]float32{s0, s1, s2, s3} {
			top.push(scoredDoc{doc: batch[j], score: float64(s) / (qn * norms[batch[j]])})
		}
	}
	for _, i := range batch[:nb] {
		top.push(scoredDoc{doc: i, score: float64(vec.Dot(v, x.docs[i].Vector)) / (qn * norms[i])})
	}
	return top.sorted(), nil
}

// vectorBlocks is vector's scan over blocks of documents (every vector has
// the query's dimension): a block none of whose documents can match is
// skipped.
func (x *gen) vectorBlocks(v []float32, qn float64, allow []bool, norms []float64, b *blocks, top *best[scoredDoc]) {
	var out [blockDocs]float32
	for g := 0; g*blockDocs < len(x.docs); g++ {
		lo, hi := g*blockDocs, min((g+1)*blockDocs, len(x.docs))
		var use uint32
		for slot := lo; slot < hi; slot++ {
			if (allow == nil || allow[slot]) && norms[slot] != 0 {
				use |= 1 << (slot - lo)
			}
		}
		if use == 0 {
			continue
		}
		dot32(v, b.group(g), &out)
		for j := range hi - lo {
			if use&(1<<j) != 0 {
				top.push(scoredDoc{doc: int32(lo + j), score: float64(out[j]) / (qn * norms[lo+j])})
			}
		}
	}
}

// vectorCompact is vector's scan with CompactVectors: every document
// ranked by its int8 code, and the best max(2·keep, 200) scored again in
// float32 as vectorExact scores them. 200 candidates kept the float32
// scan's top 5 on all of kgqa's dev questions over codexm
// (TestInt8ScanOnRealVectors).
func (x *gen) vectorCompact(v []float32, qn float64, allow []bool, keep int) ([]scoredDoc, error) {
	norms := x.norms()
	n := max(2*keep, rescoreMin)
	cands := newBest(n, x.better, make([]scoredDoc, 0, min(n, len(x.docs))))
	for i := range x.vecs {
		if allow != nil && !allow[i] {
			continue
		}
		c := &x.vecs[i]
		switch c.dim() {
		case 0:
			continue
		case len(v):
		default:
			return nil, errs.E(errs.Invalid, "search: query vector has %d dimensions, documents have %d", len(v), c.dim())
		}
		if norms[i] == 0 {
			continue
		}
		cands.push(scoredDoc{doc: int32(i), score: float64(c.code.Dot(v)) / (qn * norms[i])})
	}
	return x.rescore(v, qn, cands.h, keep)
}

// rescoreMin is the fewest candidates of the int8 scan scored again in
// float32.
const rescoreMin = 200

// rescore is the keep best of cands scored exactly (the sum vectorExact
// and vectorANN make), their float32 vectors read from the file, best
// first.
func (x *gen) rescore(v []float32, qn float64, cands []scoredDoc, keep int) ([]scoredDoc, error) {
	norms := x.norms()
	top := newBest(keep, x.better, make([]scoredDoc, 0, min(keep, len(cands))))
	var r vecReader
	for _, c := range cands {
		f, err := x.float32At(int(c.doc), &r)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		top.push(scoredDoc{doc: c.doc, score: float64(vec.Dot(v, f)) / (qn * norms[c.doc])})
	}
	return top.sorted(), nil
}

func explainCosine(s scoredDoc) string { return fmt.Sprintf("cosine %.4f", s.score) }

// hybrid returns the best HybridCandidates (at least the limit) of each
// sub-search, best first, for fuse.
func (x *gen) hybrid(ctx context.Context, q retrieval.Query, allow []bool) (lex, dense []scoredDoc, err error) {
	cand := max(q.Limit, x.params.HybridCandidates)
	switch {
	case q.Alpha >= 1:
		dense, err = x.memoVector(ctx, q.Vector, allow, cand)
	case q.Alpha <= 0:
		lex, _ = x.bm25(q.Text, allow, cand, cand)
	default:
		// The halves read the same generation and nothing else: the
		// vector half runs beside the keyword half, so that on a large
		// corpus a request waits for the slower of the two, not their sum.
		done := make(chan struct{})
		go func() {
			defer close(done)
			dense, err = x.memoVector(ctx, q.Vector, allow, cand)
		}()
		lex, _ = x.bm25(q.Text, allow, cand, cand)
		<-done
	}
	if err != nil {
		return nil, nil, err
	}
	return lex, dense, nil
}

// rankedFusionK is RankedFusionK, DefaultRankedFusionK when unset.
func (p Params) rankedFusionK() int {
	if p.RankedFusionK <= 0 {
		return DefaultRankedFusionK
	}
	return p.RankedFusionK
}

// fuse combines a lexical and a vector result list (each best first) the way
// Weaviate's hybrid search does. relativeScore: each list's scores are
// min-max normalised to [0,1] (all 1 when equal) and summed with weights
// 1-alpha and alpha. rankedFusion: each list contributes weight/(k+rank),
// rank counted from 0 (k is Params.RankedFusionK, Weaviate's 60 by default).
// explainFused says how a fused score was made.
func fuse(f retrieval.Fusion, alpha float64, k int, lex, dense []scoredDoc) []scoredDoc {
	acc := make(map[int32]float64, len(lex)+len(dense))
	var order []int32 // the fused documents, first seen first
	add := func(list []scoredDoc, w float64) {
		lo, hi := span(list)
		for rank, s := range list {
			if _, ok := acc[s.doc]; !ok {
				order = append(order, s.doc)
			}
			acc[s.doc] += contribution(f, w, k, rank, s.score, lo, hi)
		}
	}
	add(lex, 1-alpha)
	add(dense, alpha)
	out := make([]scoredDoc, len(order))
	for i, d := range order {
		out[i] = scoredDoc{doc: d, score: acc[d]}
	}
	return out
}

// fusedExplainer explains one hybrid search's fused scores: "hybrid
// FUSION alpha=A: " and each list's part of a score, "bm25|vector SCORE
// (rank R) -> CONTRIBUTION", joined by "; ". Each list's span is worked
// out once and a document's rank looked up, not searched for: a search
// explains each of its (up to 100) hits.
type fusedExplainer struct {
	f      retrieval.Fusion
	k      int
	prefix string
	lists  [2]explainedList
}

type explainedList struct {
	name   string
	w      float64
	list   []scoredDoc
	lo, hi float64
	ranks  map[int32][]int // a document's ranks in list (once, as a rule)
}

func newFusedExplainer(f retrieval.Fusion, alpha float64, k int, lex, dense []scoredDoc) fusedExplainer {
	name := "relativeScore"
	if f == retrieval.RankedFusion {
		name = "rankedFusion"
	}
	e := fusedExplainer{f: f, k: k, prefix: "hybrid " + name + " alpha=" + strconv.FormatFloat(alpha, 'f', 2, 64) + ": "}
	for i, l := range []explainedList{{name: "bm25", w: 1 - alpha, list: lex}, {name: "vector", w: alpha, list: dense}} {
		l.lo, l.hi = span(l.list)
		l.ranks = make(map[int32][]int, len(l.list))
		for rank, h := range l.list {
			l.ranks[h.doc] = append(l.ranks[h.doc], rank)
		}
		e.lists[i] = l
	}
	return e
}

// explain is s's account, as fmt's %.4f and %d would write it.
func (e fusedExplainer) explain(s scoredDoc) string {
	b := []byte(e.prefix)
	n := 0
	for _, l := range e.lists {
		for _, rank := range l.ranks[s.doc] {
			if n > 0 {
				b = append(b, "; "...)
			}
			n++
			h := l.list[rank]
			b = append(b, l.name...)
			b = append(b, ' ')
			b = strconv.AppendFloat(b, h.score, 'f', 4, 64)
			b = append(b, " (rank "...)
			b = strconv.AppendInt(b, int64(rank+1), 10)
			b = append(b, ") -> "...)
			b = strconv.AppendFloat(b, contribution(e.f, l.w, e.k, rank, h.score, l.lo, l.hi), 'f', 4, 64)
		}
	}
	return string(b)
}

// span is the lowest and highest score of a list.
func span(list []scoredDoc) (lo, hi float64) {
	if len(list) == 0 {
		return 0, 0
	}
	lo, hi = list[0].score, list[0].score
	for _, s := range list {
		lo, hi = math.Min(lo, s.score), math.Max(hi, s.score)
	}
	return lo, hi
}

// contribution is what a hit at rank (from 0) of a list with weight w and
// scores in [lo, hi] adds to its fused score.
func contribution(f retrieval.Fusion, w float64, k, rank int, score, lo, hi float64) float64 {
	if f == retrieval.RankedFusion {
		return w / float64(k+rank)
	}
	n := 1.0
	if hi > lo {
		n = (score - lo) / (hi - lo)
	}
	return w * n
}

// better orders hits: higher score first, ties by document ID.
func (x *gen) better(a, b scoredDoc) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return x.docs[a.doc].ID < x.docs[b.doc].ID
}

// topK sorts by score (descending), ties by document ID, and keeps k.
func topK(s []scoredDoc, k int, docs []retrieval.Document) []scoredDoc {
	slices.SortFunc(s, func(a, b scoredDoc) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return strings.Compare(docs[a.doc].ID, docs[b.doc].ID)
	})
	if len(s) > k {
		s = s[:k]
	}
	return s
}

// best keeps the k best items pushed into it under a strict total order, in
// a heap whose root is the worst kept: the same k as sorting everything and
// keeping the first k, in O(n log k) and no more memory than k items.
type best[T any] struct {
	k      int
	better func(a, b T) bool
	h      []T
}

// newBest starts empty over buf (its length is ignored).
func newBest[T any](k int, better func(a, b T) bool, buf []T) *best[T] {
	return &best[T]{k: k, better: better, h: buf[:0]}
}

func (b *best[T]) push(v T) {
	if len(b.h) < b.k {
		b.h = append(b.h, v)
		for i := len(b.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !b.better(b.h[p], b.h[i]) {
				break
			}
			b.h[p], b.h[i] = b.h[i], b.h[p]
			i = p
		}
		return
	}
	if b.k == 0 || !b.better(v, b.h[0]) {
		return
	}
	b.h[0] = v
	for i, n := 0, len(b.h); ; {
		w := i
		if l := 2*i + 1; l < n && b.better(b.h[w], b.h[l]) {
			w = l
		}
		if r := 2*i + 2; r < n && b.better(b.h[w], b.h[r]) {
			w = r
		}
		if w == i {
			return
		}
		b.h[i], b.h[w] = b.h[w], b.h[i]
		i = w
	}
}

// sorted returns the kept items, best first.
func (b *best[T]) sorted() []T {
	slices.SortFunc(b.h, func(x, y T) int {
		switch {
		case b.better(x, y):
			return -1
		case b.better(y, x):
			return 1
		}
		return 0
	})
	return b.h
}
