package memindex

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dmar-kg/dmar/internal/vec"
	"github.com/viterin/vek/vek32"
)

// The approximate vector search of large corpora: a hierarchical navigable
// small world graph (HNSW; Malkov and Yashunin, 2016).
//
// Every document vector is a node, linked to its nearest neighbours (M on
// the upper levels, 2M on the lowest, chosen by the paper's heuristic,
// which keeps links to other clusters); a node is on level l with
// probability M^-l. A search descends greedily from the top level and
// explores the lowest with a list of ef candidates, so it computes a few
// thousand cosines instead of one per document (Params.ANNEf candidates;
// its default is set by recall@100 against the exact scan measured with
// real questions, TestANNRecall and dmar bench scale).
// The documents found are scored as the exact scan scores them (the same
// sum in the same order), so a document's cosine never depends on the
// path; what the approximation can do is miss one.
//
// Params.ANNMin is the corpus size from which unfiltered vector searches
// take it; below it, and for filtered searches, the scan is exact, so the
// benchmarks' corpora (codexm's 16,352 documents) rank as before to the
// bit. The graph is built by the first search that needs it (or Build),
// with a worker per CPU, and then shared by the generations that follow:
// a write inserts its documents' new vectors as new nodes. A node whose
// document was deleted or changed stays in the graph to route searches
// but is never a result (each generation checks a node against its own
// documents); once such nodes outnumber the live ones the next search
// builds the graph again. Searches read neighbour lists through atomic
// pointers and never wait for a writer.

// DefaultANNMin is Params.ANNMin's default.
const DefaultANNMin = 50_000

// DefaultANNEf is Params.ANNEf's default at 128,000 documents or fewer:
// on kgqa's questions over codexm grown with synthetic documents, recall@100
// 0.97 at 128,000. A graph's recall at one ef falls as it grows (0.91 at
// 1,000,000 documents with 400, 0.945 with 600, 0.959 with 800), so
// above that the default grows with the cube root of the corpus: 800 at
// 1,000,000 (docs/operations.md, "Scaling out", has the figures).
const DefaultANNEf = 400

// defaultEfAt is the corpus size up to which DefaultANNEf holds.
const defaultEfAt = 128_000

const (
	annM       = 16  // links per node on the upper levels (twice on the lowest)
	annEfBuild = 100 // candidates while inserting
)

// hnsw is a graph over document vectors, shared by generations.
type hnsw struct {
	dim   int
	ml    float64 // 1/ln(M): the level distribution's scale
	wmu   sync.Mutex
	nodes atomic.Pointer[[]*hnode]
	entry atomic.Pointer[hnode] // a node of the top level
	ef    int                   // candidates a search explores (at least its limit)
	live  atomic.Int64          // nodes inserted minus those found dead (approximate, for rebuilding)
	rng   *rand.Rand            // levels, under wmu
	pool  sync.Pool             // *visited
}

// hnode is one vector: the document slot and id it was inserted for, and
// its links per level (each list replaced whole, never modified).
type hnode struct {
	id    int32
	slot  int32
	doc   string
	vec   []float32 // the document's vector, or nil and its code (CompactVectors)
	code  vec.Int8
	norm  float64
	links []atomic.Pointer[[]link]
	mu    sync.Mutex // writers updating its links
}

// link is a neighbour and its distance, kept so that a full list is
// updated without computing one.
type link struct {
	id   int32
	dist float32
}

// annEf is ANNEf, or when 0 the default for a graph of n vectors:
// DefaultANNEf up to defaultEfAt, then growing as n's cube root (to the
// nearest 50).
func (p Params) annEf(n int) int {
	if p.ANNEf > 0 {
		return p.ANNEf
	}
	if n <= defaultEfAt {
		return DefaultANNEf
	}
	return int(math.Round(DefaultANNEf*math.Cbrt(float64(n)/defaultEfAt)/50)) * 50
}

// annMin is ANNMin, DefaultANNMin when 0; negative turns the ANN off.
func (p Params) annMin() int {
	if p.ANNMin == 0 {
		return DefaultANNMin
	}
	return p.ANNMin
}

// useANN reports whether an unfiltered vector search of the generation
// takes the graph.
func (x *gen) useANN() bool {
	m := x.params.annMin()
	return m > 0 && len(x.byID) >= m
}

// ann is the generation's graph (nil when the vectors do not share one
// dimension, or there are too few).
func (x *gen) ann() *hnsw {
	return x.prep.ann.get(x.buildANN)
}

// annCtx is ann for a caller that stops waiting for the graph's build when
// ctx ends.
func (x *gen) annCtx(ctx context.Context) (*hnsw, error) {
	return x.prep.ann.getCtx(ctx, x.buildANN)
}

func (x *gen) buildANN() *hnsw { return buildHNSW(x) }

// valid reports whether node n stands for generation x's document in its
// slot (the same document, with the same vector).
func (x *gen) valid(n *hnode) bool {
	if int(n.slot) >= len(x.docs) {
		return false
	}
	d := x.docs[n.slot]
	if x.store != nil {
		c := x.vecs[n.slot].code.Codes
		return d.ID == n.doc && len(c) == len(n.code.Codes) && len(c) > 0 && &c[0] == &n.code.Codes[0]
	}
	return d.ID == n.doc && len(d.Vector) == len(n.vec) && &d.Vector[0] == &n.vec[0]
}

// vectorANN is vector through the graph: the keep best of the documents
// found, scored exactly.
func (x *gen) vectorANN(h *hnsw, v []float32, qn float64, keep int) ([]scoredDoc, error) {
	return x.vectorANNAt(h, v, qn, keep, h.ef)
}

// vectorANNAt is vectorANN exploring ef candidates. With CompactVectors
// the walk ranks by the codes, and every candidate it found is scored
// again in float32 (rescore).
func (x *gen) vectorANNAt(h *hnsw, v []float32, qn float64, keep, ef int) ([]scoredDoc, error) {
	norms := x.norms()
	found := h.search(v, qn, max(ef, keep))
	if x.store != nil {
		cands := make([]scoredDoc, 0, len(found))
		for _, c := range found {
			if n := h.node(c.id); x.valid(n) {
				cands = append(cands, scoredDoc{doc: n.slot})
			}
		}
		return x.rescore(v, qn, cands, keep)
	}
	top := newBest(keep, x.better, make([]scoredDoc, 0, keep))
	for _, c := range found {
		n := h.node(c.id)
		if x.valid(n) {
			top.push(scoredDoc{doc: n.slot, score: float64(vec.Dot(v, x.docs[n.slot].Vector)) / (qn * norms[n.slot])})
		}
	}
	return top.sorted(), nil
}

func (h *hnsw) node(id int32) *hnode { return (*h.nodes.Load())[id] }

// cand is a node and its distance (1 - cosine) to a query.
type cand struct {
	id   int32
	dist float32
}

// byDistance orders candidates as closer does.
func byDistance(a, b cand) int {
	switch {
	case closer(a, b):
		return -1
	case closer(b, a):
		return 1
	}
	return 0
}

func closer(a, b cand) bool {
	if a.dist != b.dist {
		return a.dist < b.dist
	}
	return a.id < b.id
}

// distance is 1 - cos(v, n), with vek's dot product (SIMD where the CPU
// has it, in its own order of additions): it only steers the walk, and
// the documents found are scored again exactly (vectorANNAt).
func distance(v []float32, qn float64, n *hnode) float32 {
	if n.vec == nil {
		return float32(1 - float64(n.code.Dot(v))/(qn*n.norm))
	}
	return float32(1 - float64(vek32.Dot(v, n.vec))/(qn*n.norm))
}

// between is the distance between two nodes.
func between(a, b *hnode) float32 {
	if a.vec == nil {
		d := float64(dotI8(a.code.Codes, b.code.Codes)) * float64(a.code.Scale) * float64(b.code.Scale)
		return float32(1 - d/(a.norm*b.norm))
	}
	return distance(a.vec, a.norm, b)
}

// query is the vector a node's insertion walks with: its own, or its code
// decoded.
func (n *hnode) query() []float32 {
	if n.vec == nil {
		return n.code.Float32()
	}
	return n.vec
}

// search returns the ef nodes nearest v that it finds, nearest first.
func (h *hnsw) search(v []float32, qn float64, ef int) []cand {
	ep := h.entry.Load()
	if ep == nil {
		return nil
	}
	nodes := *h.nodes.Load()
	cur := cand{ep.id, distance(v, qn, ep)}
	for l := len(ep.links) - 1; l > 0; l-- {
		cur = h.greedy(nodes, v, qn, cur, l)
	}
	return h.layer(nodes, v, qn, []cand{cur}, ef, 0)
}

// greedy walks level l from cur to the nearest node it can reach.
func (h *hnsw) greedy(nodes []*hnode, v []float32, qn float64, cur cand, l int) cand {
	for moved := true; moved; {
		moved = false
		for _, k := range h.links(nodes, cur.id, l) {
			if int(k.id) >= len(nodes) {
				continue // inserted after this search began
			}
			if c := (cand{k.id, distance(v, qn, nodes[k.id])}); closer(c, cur) {
				cur, moved = c, true
			}
		}
	}
	return cur
}

// links is node id's links on level l (none when it has no such level).
func (h *hnsw) links(nodes []*hnode, id int32, l int) []link {
	n := nodes[id]
	if l >= len(n.links) {
		return nil
	}
	if p := n.links[l].Load(); p != nil {
		return *p
	}
	return nil
}

// visited marks nodes seen by one walk: a stamp per node, so that clearing
// is free.
type visited struct {
	stamp uint32
	seen  []uint32
	fresh []*hnode // the neighbours of the node being expanded not seen yet
	touch float32  // what reading their vectors' first bytes summed (kept, so that the reads stay)
}

// startWalk is a walk's state over n nodes: a visited set (cleared; put it
// back in the pool when done) holding the entry candidates, todo (a
// min-heap of candidates to expand) and found (the ef nearest, a max-heap
// whose root is the farthest kept), both holding them too.
func (h *hnsw) startWalk(n int, entry []cand, ef int) (*visited, minHeap, *best[cand]) {
	vs, _ := h.pool.Get().(*visited)
	if vs == nil {
		vs = &visited{}
	}
	if len(vs.seen) < n {
		vs.seen = make([]uint32, n+n/4)
		vs.stamp = 0
	}
	vs.stamp++
	if vs.stamp == 0 {
		clear(vs.seen)
		vs.stamp = 1
	}
	todo := minHeap{}
	found := newBest(ef, closer, make([]cand, 0, ef+1))
	for _, c := range entry {
		vs.seen[c.id] = vs.stamp
		todo.push(c)
		found.push(c)
	}
	return vs, todo, found
}

// layer explores level l from the entry candidates, keeping the ef nearest
// nodes it finds; nearest first.
func (h *hnsw) layer(nodes []*hnode, v []float32, qn float64, entry []cand, ef, l int) []cand {
	vs, todo, found := h.startWalk(len(nodes), entry, ef)
	defer h.pool.Put(vs)
	for len(todo) > 0 {
		c := todo.pop()
		if len(found.h) == ef && c.dist > found.h[0].dist {
			break
		}
		// The unseen neighbours are gathered, and their vectors' first
		// bytes read, before any distance is computed: those loads do not
		// wait on each other, so a large graph's memory misses overlap
		// instead of coming one distance at a time (BenchmarkANNWalk).
		vs.fresh = vs.fresh[:0]
		var touch float32
		for _, k := range h.links(nodes, c.id, l) {
			id := k.id
			if int(id) >= len(nodes) || vs.seen[id] == vs.stamp {
				continue
			}
			vs.seen[id] = vs.stamp
			n := nodes[id]
			if n.vec != nil {
				touch += n.vec[0]
			} else {
				touch += float32(n.code.Codes[0])
			}
			vs.fresh = append(vs.fresh, n)
		}
		vs.touch += touch
		for _, m := range vs.fresh {
			n := cand{m.id, distance(v, qn, m)}
			if len(found.h) < ef || closer(n, found.h[0]) {
				todo.push(n)
				found.push(n)
			}
		}
	}
	return found.sorted()
}

// minHeap of candidates by distance.
type minHeap []cand

func (q *minHeap) push(c cand) {
	*q = append(*q, c)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !closer(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *minHeap) pop() cand {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		m := i
		if l := 2*i + 1; l < len(h) && closer(h[l], h[m]) {
			m = l
		}
		if r := 2*i + 2; r < len(h) && closer(h[r], h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// newHNSW is an empty graph for vectors of dim.
func newHNSW(dim, ef int, seed uint64) *hnsw {
	h := &hnsw{dim: dim, ef: ef, ml: 1 / math.Log(annM), rng: rand.New(rand.NewPCG(seed, 36))}
	h.nodes.Store(&[]*hnode{})
	return h
}

// addNode is add for generation x's document in slot.
func (x *gen) addNode(h *hnsw, slot int32, norm float64) *hnode {
	var code vec.Int8
	if x.store != nil {
		code = x.vecs[slot].code
	}
	return h.add(slot, x.docs[slot].ID, x.docs[slot].Vector, code, norm)
}

// add makes the node of one document (its level drawn), not yet linked:
// its vector v, or without one its code.
func (h *hnsw) add(slot int32, id string, v []float32, code vec.Int8, norm float64) *hnode {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	level := int(-math.Log(1-h.rng.Float64()) * h.ml)
	nodes := *h.nodes.Load()
	n := &hnode{id: int32(len(nodes)), slot: slot, doc: id, vec: v, code: code, norm: norm, links: make([]atomic.Pointer[[]link], level+1)}
	if len(nodes) == cap(nodes) {
		nodes = append(make([]*hnode, 0, 2*cap(nodes)+1024), nodes...)
	}
	nodes = append(nodes, n)
	h.nodes.Store(&nodes)
	h.live.Add(1)
	return n
}

// link inserts node n into the graph. Links are changed under the nodes'
// own locks, so that several workers can insert at once.
func (h *hnsw) link(n *hnode) {
	ep := h.entry.Load()
	if ep == nil {
		h.wmu.Lock()
		if h.entry.Load() == nil {
			h.entry.Store(n)
			h.wmu.Unlock()
			return
		}
		h.wmu.Unlock()
		ep = h.entry.Load()
	}
	nodes := *h.nodes.Load()
	top := len(n.links) - 1
	q := n.query()
	cur := cand{ep.id, distance(q, n.norm, ep)}
	for l := len(ep.links) - 1; l > top; l-- {
		cur = h.greedy(nodes, q, n.norm, cur, l)
	}
	entry := []cand{cur}
	for l := min(top, len(ep.links)-1); l >= 0; l-- {
		found := h.layer(nodes, q, n.norm, entry, annEfBuild, l)
		limit := annM
		if l == 0 {
			limit = 2 * annM
		}
		nb := h.choose(nodes, found, limit, n.id)
		n.links[l].Store(&nb)
		for _, k := range nb {
			h.connect(nodes, nodes[k.id], link{n.id, k.dist}, l, limit)
		}
		entry = found
	}
	if top > len(ep.links)-1 {
		h.wmu.Lock()
		if cur := h.entry.Load(); top > len(cur.links)-1 {
			h.entry.Store(n)
		}
		h.wmu.Unlock()
	}
}

// connect adds the link k from m on level l. A list may grow by a quarter
// before it is cut back to max with the heuristic (choose), so that the
// cut, which computes distances between neighbours, is paid once every
// limit/4 links added rather than for each.
func (h *hnsw) connect(nodes []*hnode, m *hnode, k link, l, limit int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var old []link
	if p := m.links[l].Load(); p != nil {
		old = *p
	}
	for _, o := range old {
		if o.id == k.id {
			return
		}
	}
	nb := append(slices.Clip(old), k)
	if len(nb) > limit+limit/4 {
		cs := make([]cand, len(nb))
		for i, o := range nb {
			cs[i] = cand(o)
		}
		slices.SortFunc(cs, byDistance)
		nb = h.choose(nodes, cs, limit, m.id)
	}
	m.links[l].Store(&nb)
}

// choose picks at most max neighbours among cs (nearest first) with the
// paper's heuristic: a candidate is kept when it is nearer the node than
// every neighbour kept so far is to it, so that links reach other
// clusters; the rest fill what is left.
func (h *hnsw) choose(nodes []*hnode, cs []cand, limit int, self int32) []link {
	out := make([]link, 0, limit)
	var skipped []link
	for _, c := range cs {
		if c.id == self || int(c.id) >= len(nodes) {
			continue
		}
		if len(out) == limit {
			break
		}
		good := true
		cn := nodes[c.id]
		for _, o := range out {
			if between(cn, nodes[o.id]) < c.dist {
				good = false
				break
			}
		}
		if good {
			out = append(out, link(c))
		} else {
			skipped = append(skipped, link(c))
		}
	}
	for _, k := range skipped {
		if len(out) == limit {
			break
		}
		out = append(out, k)
	}
	return out
}

// buildHNSW inserts every document of x with a vector, a worker per CPU.
func buildHNSW(x *gen) *hnsw {
	norms := x.norms()
	dim, slots := 0, make([]int32, 0, len(x.docs))
	for i := range x.docs {
		switch l := x.dim(i); {
		case l == 0 || norms[i] == 0:
			continue
		case dim == 0:
			dim = l
		case l != dim:
			return nil // the exact scan names the mismatch
		}
		slots = append(slots, int32(i))
	}
	if len(slots) < 2*annM {
		return nil
	}
	h := newHNSW(dim, x.params.annEf(len(slots)), uint64(len(slots)))
	ns := make([]*hnode, len(slots))
	for i, s := range slots {
		ns[i] = x.addNode(h, s, norms[s])
	}
	// The first nodes alone, so that the workers start from a graph.
	first := min(len(ns), 1000)
	for _, n := range ns[:first] {
		h.link(n)
	}
	parallel(len(ns)-first, func(lo, hi int) {
		for _, n := range ns[first+lo : first+hi] {
			h.link(n)
		}
	})
	return h
}

// insert links the documents of the slots a write changed (their new
// vectors) into the graph, for generation x. It returns false when the
// graph holds more dead nodes than live ones, or the vectors changed
// dimension: x then builds its own.
func (h *hnsw) insert(x, parent *gen, changed []int32) bool {
	done := map[int32]bool{}
	norms := x.norms()
	for _, s := range changed {
		if done[s] {
			continue
		}
		done[s] = true
		if int(s) < len(parent.docs) && parent.dim(int(s)) > 0 {
			h.live.Add(-1) // the node of what the slot held before is dead now
		}
		if l := x.dim(int(s)); l == 0 || norms[s] == 0 {
			continue
		} else if l != h.dim {
			return false
		}
		h.link(x.addNode(h, s, norms[s]))
	}
	return int64(len(*h.nodes.Load())) <= 2*max(h.live.Load(), 1)
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

// RecallAt is the approximate search's recall at one ef.
type RecallAt struct {
	Ef     int
	Recall float64       // the share of the exact scan's top k found, averaged
	Search time.Duration // mean time of one search through the graph
}

// VectorRecall measures the approximate search on the current documents:
// for each query, the share of the exact scan's top k that the graph's
// top k holds, averaged, at the index's own ef and then at each of efs
// (the candidates a search explores), with the mean search time at each.
// ok is false when unfiltered vector searches of this index scan exactly
// (below ANNMin).
func (x *Index) VectorRecall(ctx context.Context, queries [][]float32, k int, efs ...int) (at []RecallAt, ok bool, err error) {
	g := x.cur.Load()
	if !g.useANN() {
		return nil, false, nil
	}
	h := g.ann()
	if h == nil {
		return nil, false, nil
	}
	type ref struct {
		q  []float32
		qn float64
		in map[int32]bool
	}
	var (
		refs  []ref
		exact [][]scoredDoc // with CompactVectors, the float32 scan of every query at once
	)
	if g.store != nil {
		if exact, err = g.exactAll(ctx, queries, h.dim, k); err != nil {
			return nil, false, err
		}
	}
	for qi, q := range queries {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		qn := vec.Norm(q)
		if qn == 0 || len(q) != h.dim {
			continue
		}
		var top []scoredDoc
		if exact != nil {
			top = exact[qi]
		} else if top, err = g.vectorExact(q, qn, nil, k, false); err != nil {
			return nil, false, err
		}
		in := make(map[int32]bool, len(top))
		for _, s := range top {
			in[s.doc] = true
		}
		if len(in) > 0 {
			refs = append(refs, ref{q, qn, in})
		}
	}
	if len(refs) == 0 {
		return nil, false, nil
	}
	for _, ef := range append([]int{h.ef}, efs...) {
		found, want := 0, 0
		var took time.Duration
		for _, r := range refs {
			t := time.Now()
			got, err := g.vectorANNAt(h, r.q, r.qn, k, ef)
			if err != nil {
				return nil, false, err
			}
			took += time.Since(t)
			for _, s := range got {
				if r.in[s.doc] {
					found++
				}
			}
			want += len(r.in)
		}
		at = append(at, RecallAt{Ef: ef, Recall: float64(found) / float64(want), Search: took / time.Duration(len(refs))})
	}
	return at, true, nil
}
