// Package pathrel scores knowledge-graph paths against a question: how well
// the relations on the path from a query entity to another entity match what
// the question asks. A relation's text ("place of birth" forwards, "place of
// birth of" backwards) is embedded once per (encoder version, PID,
// direction) and cached; a path's relevance is the cosine of the question to
// its relation texts (docs/method.md, "Beyond the paper: graph recall").
package pathrel

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/vec"
)

// TwoHopPenalty is subtracted from a two-hop path's relevance (the mean of
// its two relations' cosines): a longer path is a weaker link.
//
// ViaBonus x ln(n) is added to the best two-hop path of an entity reached
// through n distinct intermediate entities: two-hop answers are usually
// reached many ways ("what language is <film> in": English through most of
// its cast), a wrong one mostly once.
//
// Both were chosen on kgqa train (docs/method.md, "Two hops, with evidence
// counted").
const (
	TwoHopPenalty = 0.25
	ViaBonus      = 0.07
)

// Step is one edge of a path, walked From -> To; Backward says the KG edge
// points the other way (To -[PID]-> From), and Relevance is cos(question,
// the relation's text in this direction). It is the API's GraphStep, so
// that the paths a response explains are the ones scored, without a copy.
type Step = api.GraphStep

// Path is the best path from a query entity to Entity.
type Path struct {
	Entity    string  `json:"entity"`
	Steps     []Step  `json:"steps"`
	Relevance float64 `json:"relevance"`
}

// Root is the query entity the path starts from.
func (p Path) Root() string {
	if len(p.Steps) == 0 {
		return p.Entity
	}
	return p.Steps[0].From
}

// appendStep appends the pieces of st's part of a path's String.
func appendStep(out []string, st Step) []string {
	l := st.Label
	if l == "" {
		l = st.PID
	}
	out = append(out, " -[", l)
	if st.Backward {
		out = append(out, " of")
	}
	return append(out, "]-> ", st.To)
}

// comparePieces compares the concatenations of a and b, as strings.Compare
// would, without building them.
func comparePieces(a, b []string) int {
	i, j, x, y := 0, 0, 0, 0 // piece and byte of a, of b
	for {
		for i < len(a) && x == len(a[i]) {
			i, x = i+1, 0
		}
		for j < len(b) && y == len(b[j]) {
			j, y = j+1, 0
		}
		switch {
		case i == len(a) && j == len(b):
			return 0
		case i == len(a):
			return -1
		case j == len(b):
			return 1
		}
		if ca, cb := a[i][x], b[j][y]; ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
		x, y = x+1, y+1
	}
}

// String is the path as text: Q1 -[place of birth]-> Q2.
func (p Path) String() string {
	s := p.Root()
	for _, st := range p.Steps {
		l := st.Label
		if l == "" {
			l = st.PID
		}
		if st.Backward {
			l += " of"
		}
		s += " -[" + l + "]-> " + st.To
	}
	return s
}

// Text is the relation text embedded for an edge walked in a direction.
func Text(label, pid string, backward bool) string {
	if label == "" {
		label = pid
	}
	if backward {
		return label + " of"
	}
	return label
}

// StepKey is a relation walked in a direction: Backward says against the
// KG edge.
type StepKey struct {
	PID      string
	Backward bool
}

// Prior is a learned question -> relation prior: for enc(Q), the
// probability of each (relation, direction) step leading to the answer.
// Steps it does not know are absent (probability 0).
type Prior interface {
	Prior(ctx context.Context, qvec []float32) (map[StepKey]float64, error)
}

// Relations embeds relation texts with an encoder and caches them by
// (encoder version, PID, direction). It is safe for concurrent use.
type Relations struct {
	enc scoring.Encoder
	// Directed: backwards edges get their own text ("... of"); otherwise a
	// relation has one text in both directions.
	Directed bool
	mu       sync.Mutex
	vecs     map[string][]float32
}

// NewRelations returns an empty cache over enc.
func NewRelations(enc scoring.Encoder, directed bool) *Relations {
	return &Relations{enc: enc, Directed: directed, vecs: map[string][]float32{}}
}

type relKey struct {
	pid, label string
	backward   bool
}

func (r *Relations) key(k relKey) string {
	return fmt.Sprintf("%s|%s|%t", r.enc.Version(), k.pid, k.backward && r.Directed)
}

// vectors returns the embeddings of keys, encoding the misses in one call.
func (r *Relations) vectors(ctx context.Context, keys []relKey) (map[relKey][]float32, error) {
	out := make(map[relKey][]float32, len(keys))
	var miss []relKey
	var texts []string
	r.mu.Lock()
	for _, k := range keys {
		if v, ok := r.vecs[r.key(k)]; ok {
			out[k] = v
			continue
		}
		miss = append(miss, k)
		texts = append(texts, Text(k.label, k.pid, k.backward && r.Directed))
	}
	r.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	vs, err := r.enc.Encode(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("encode relations: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, k := range miss {
		r.vecs[r.key(k)] = vs[i]
		out[k] = vs[i]
	}
	return out, nil
}

// Root is a start of the walk. Mentioned roots (Q's linked entities) are
// never returned: Q names them, so they are not its answer. A root taken from
// a search hit (graph_roots) is returned when another root reaches it: the
// page BM25 ranks first is often the answer itself ("what languages are
// spoken in greece": Greek), and excluding it lost it.
type Root struct {
	QID       string
	Mentioned bool
}

// Mentioned are qids as mentioned roots.
func Mentioned(qids ...string) []Root {
	out := make([]Root, len(qids))
	for i, q := range qids {
		out[i] = Root{QID: q, Mentioned: true}
	}
	return out
}

// Reach returns every entity reachable from the roots in their subgraphs
// (up to hops steps, 1 or 2) with its best path and that path's relevance,
// best first (ties by QID). A one-hop path's relevance is cos(q, relation);
// a two-hop path's is the mean of its two relations' cosines minus
// TwoHopPenalty, plus ViaBonus x ln(n) when the entity is reached through n
// distinct intermediates, and it never passes through a hub or a root. Mentioned
// roots are not returned; a root from a search hit is, when another root
// reaches it.
//
// prior, when not nil, is added to each step's cosine (already weighted by
// the caller): a step's relevance is cos(q, relation) + prior[step].
func (r *Relations) Reach(ctx context.Context, qvec []float32, starts []Root, subs map[string]kg.Subgraph, hops int, prior map[StepKey]float64) ([]Path, error) {
	if hops < 1 {
		return nil, nil
	}
	w := newWalker(prior, r.Directed)
	defer w.release()
	roots := make([]string, len(starts))
	for i, q := range starts {
		roots[i] = q.QID
		w.isRoot[q.QID] = true
		w.mentioned[q.QID] = w.mentioned[q.QID] || q.Mentioned
	}
	var err error
	if w.rel, err = r.relevances(ctx, qvec, roots, subs); err != nil {
		return nil, err
	}
	for _, q := range roots {
		sg, ok := subs[q]
		if !ok {
			continue
		}
		w.walk(sg, q, hops)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return w.paths(), nil
}

// walker is one Reach call: the relevance of every relation met, and the
// best path to each entity so far, as its steps (a path's slice is built
// only for the winners, and a tie compares the paths' texts piecewise).
type walker struct {
	rel               map[relKey]float64
	prior             map[StepKey]float64
	directed          bool
	isRoot, mentioned map[string]bool
	// the last step's relation and relevance: an edge list follows the
	// subgraph's edge order (head, then property), so consecutive steps
	// often walk one relation
	last       relKey
	haveLast   bool
	lastRV     float64
	cands      []cand
	best       map[string]int // entity -> index in cands
	seenVia    map[via]bool
	vias       map[string]int // the distinct intermediates of each two-hop entity
	bufA, bufB [11]string
}

// walkers keeps walkers between calls: a request's walk offers thousands of
// candidates (about 1.5 MB of paths and maps on codexm), and reusing their
// room spares the collector that much a request.
var walkers sync.Pool

func newWalker(prior map[StepKey]float64, directed bool) *walker {
	w, _ := walkers.Get().(*walker)
	if w == nil {
		w = &walker{isRoot: map[string]bool{}, mentioned: map[string]bool{},
			best: map[string]int{}, seenVia: map[via]bool{}, vias: map[string]int{}}
	}
	w.prior, w.directed = prior, directed
	return w
}

// release empties w and returns it to the pool; nothing it held may be
// used after.
func (w *walker) release() {
	clear(w.isRoot)
	clear(w.mentioned)
	clear(w.best)
	clear(w.seenVia)
	clear(w.vias)
	clear(w.cands) // the strings they hold
	w.cands = w.cands[:0]
	w.rel, w.prior, w.haveLast, w.last, w.lastRV = nil, nil, false, relKey{}, 0
	w.bufA, w.bufB = [11]string{}, [11]string{}
	walkers.Put(w)
}

// cand is a candidate best path: one or two steps.
type cand struct {
	s1, s2   Step
	two      bool // s2 is set
	relevant float64
}

// via is a two-hop entity and an intermediate it is reached through.
type via struct{ entity, through string }

// walk offers every path from root q in sg: one hop, and with hops >= 2
// two, never through a hub or a root, never back to q.
func (w *walker) walk(sg kg.Subgraph, q string, hops int) {
	adjQ, nbrs := neighbours(sg, q, hops >= 2)
	for _, i1 := range adjQ {
		s1 := w.step(sg.Edges[i1], q)
		w.offer(s1.To, &cand{s1: s1, relevant: s1.Relevance})
		n, ok := nbrs[s1.To]
		if hops < 2 || !ok || n.hub || w.isRoot[s1.To] {
			continue
		}
		for _, i2 := range n.edges {
			s2 := w.step(sg.Edges[i2], s1.To)
			if s2.To == q {
				continue
			}
			if v := (via{s2.To, s1.To}); !w.seenVia[v] {
				w.seenVia[v] = true
				w.vias[s2.To]++
			}
			w.offer(s2.To, &cand{s1: s1, s2: s2, two: true, relevant: (s1.Relevance+s2.Relevance)/2 - TwoHopPenalty})
		}
	}
}

// step is edge e walked from from, with its relation's relevance.
func (w *walker) step(e kg.Edge, from string) Step {
	back := e.To == from && e.From != from
	to := e.To
	if back {
		to = e.From
	}
	if k := (relKey{pid: e.PID, label: e.Label, backward: back}); !w.haveLast || k != w.last {
		w.last, w.haveLast = k, true
		w.lastRV = w.rel[relKey{pid: e.PID, label: e.Label, backward: back && w.directed}] + w.prior[StepKey{PID: e.PID, Backward: back}]
	}
	return Step{From: from, PID: e.PID, Label: e.Label, To: to, Backward: back, Relevance: w.lastRV}
}

// offer keeps c as entity's best path when it beats the one held.
func (w *walker) offer(entity string, c *cand) {
	if w.mentioned[entity] || entity == c.s1.From {
		return
	}
	i, ok := w.best[entity]
	if !ok {
		w.best[entity] = len(w.cands)
		w.cands = append(w.cands, *c)
		return
	}
	if b := &w.cands[i]; c.relevant > b.relevant || (c.relevant == b.relevant && w.before(c, b)) {
		*b = *c
	}
}

// before orders two equally relevant paths by their texts.
func (w *walker) before(a, b *cand) bool {
	return comparePieces(a.parts(&w.bufA), b.parts(&w.bufB)) < 0
}

// parts are the pieces of the path's String, in order.
func (c *cand) parts(buf *[11]string) []string {
	out := appendStep(append(buf[:0], c.s1.From), c.s1)
	if c.two {
		out = appendStep(out, c.s2)
	}
	return out
}

// paths are the best paths, with the intermediates' bonus, best first.
// Their steps are cut from one slice (each capped so that nothing appends
// into another's).
func (w *walker) paths() []Path {
	out := make([]Path, 0, len(w.best))
	steps := make([]Step, 0, 2*len(w.cands))
	for i := range w.cands {
		c := &w.cands[i]
		lo := len(steps)
		steps = append(steps, c.s1)
		entity := c.s1.To
		if c.two {
			steps, entity = append(steps, c.s2), c.s2.To
		}
		p := Path{Entity: entity, Steps: steps[lo:len(steps):len(steps)], Relevance: c.relevant}
		if n := w.vias[p.Entity]; len(p.Steps) == 2 && n > 1 {
			p.Relevance += ViaBonus * math.Log(float64(n))
		}
		out = append(out, p)
	}
	// Entities are distinct, so the order is total.
	slices.SortFunc(out, func(a, b Path) int {
		if a.Relevance != b.Relevance {
			return cmp.Compare(b.Relevance, a.Relevance)
		}
		return strings.Compare(a.Entity, b.Entity)
	})
	return out
}

// Warm embeds the relation texts of every edge of subs that the cache
// lacks, in one encoder call, and returns how many relation texts are
// cached: a server warms it at start so that first requests do not pay for
// it.
func (r *Relations) Warm(ctx context.Context, subs map[string]kg.Subgraph) (int, error) {
	roots := make([]string, 0, len(subs))
	for q := range subs {
		roots = append(roots, q)
	}
	if _, err := r.vectors(ctx, r.edgeKeys(roots, subs)); err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.vecs), nil
}

// relevances is cos(q, text) of every relation text on the subgraphs'
// edges (one encoder call for those not cached), by key.
func (r *Relations) relevances(ctx context.Context, qvec []float32, roots []string, subs map[string]kg.Subgraph) (map[relKey]float64, error) {
	vecs, err := r.vectors(ctx, r.edgeKeys(roots, subs))
	if err != nil {
		return nil, err
	}
	rel := make(map[relKey]float64, len(vecs))
	for k, v := range vecs {
		rel[k] = vec.Cosine64(qvec, v)
	}
	return rel, nil
}

// edgeKeys are the distinct relation keys of the roots' subgraph edges, in
// both directions when r is directed.
func (r *Relations) edgeKeys(roots []string, subs map[string]kg.Subgraph) []relKey {
	dirs := []bool{false}
	if r.Directed {
		dirs = []bool{false, true}
	}
	var keys []relKey
	seenKey := map[relKey]bool{}
	var last relKey
	for _, q := range roots {
		for _, e := range subs[q].Edges {
			for _, b := range dirs {
				k := relKey{pid: e.PID, label: e.Label, backward: b}
				if len(keys) > 0 && k == last {
					continue // edges come sorted by head, then property: runs repeat
				}
				last = k
				if !seenKey[k] {
					seenKey[k] = true
					keys = append(keys, k)
				}
			}
		}
	}
	return keys
}

// near is a neighbour of the root: whether it is a hub, and its edges.
type near struct {
	hub   bool
	edges []int
}

// neighbours are the indices of the root's edges in sg (loops left out), in
// edge order, and, when second is set, each neighbour's own edges (loops
// left out, in edge order) and whether it is a hub. Entities two hops away
// need no edge lists: a walk ends there.
func neighbours(sg kg.Subgraph, root string, second bool) ([]int, map[string]*near) {
	var adj []int
	ns := map[string]*near{}
	for i, e := range sg.Edges {
		switch {
		case e.From == e.To:
		case e.From == root:
			adj = append(adj, i)
			ns[e.To] = nil
		case e.To == root:
			adj = append(adj, i)
			ns[e.From] = nil
		}
	}
	if !second {
		return adj, nil
	}
	all := make([]near, len(ns)) // one allocation for every neighbour
	k := 0
	for n := range ns {
		ns[n] = &all[k]
		k++
	}
	for _, n := range sg.Nodes {
		if x, ok := ns[n.QID]; ok {
			x.hub = n.Hub
		}
	}
	var from *near // ns[e.From] for the run of edges with one head
	lastFrom, have := "", false
	for i, e := range sg.Edges {
		if e.From == e.To {
			continue
		}
		if !have || e.From != lastFrom {
			from, lastFrom, have = ns[e.From], e.From, true
		}
		if from != nil {
			from.edges = append(from.edges, i)
		}
		if x, ok := ns[e.To]; ok {
			x.edges = append(x.edges, i)
		}
	}
	return adj, ns
}

// Better orders paths as Reach does: higher relevance, then the path's
// text.
func Better(a, b Path) bool {
	if a.Relevance != b.Relevance {
		return a.Relevance > b.Relevance
	}
	return a.String() < b.String()
}
