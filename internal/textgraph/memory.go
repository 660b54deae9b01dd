package textgraph

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/vec"
)

var _ Store = (*Memory)(nil)

// Memory is the text graph in memory, the embedded default: built at load
// (Put over the corpus, snapshotted by internal/state) and kept exact by the
// document store's writes (Put, Delete). Safe for concurrent use.
type Memory struct {
	mu    sync.RWMutex
	keys  []string
	label []string
	idx   map[string]int32
	adj   [][]half
	// passages[i] is how many passages hold node i (Contains edges).
	passages []int32
	// parts are each passage's contributions, to take them back.
	parts map[string]Part
	// vecs are the unit vectors of phrase and entity nodes, vecOf a node's
	// row in them (-1: none); words index phrase and entity nodes by their
	// key's words, for synonym candidates.
	vecs  [][]float32
	vecOf []int32
	rows  []int32 // node of each row of vecs
	words map[string][]int32
	dim   int
	// order caches keyRanks; orderMu serialises its rebuilding by readers.
	order   atomic.Pointer[[]int32]
	orderMu sync.Mutex
}

// half is one end of an edge as its other end holds it.
type half struct {
	to   int32
	kind EdgeKind
	w    float32
}

// NewMemory is an empty graph.
func NewMemory() *Memory {
	return &Memory{idx: map[string]int32{}, parts: map[string]Part{}, words: map[string][]int32{}}
}

// Put adds or replaces docs' passages, built by b: new nodes are embedded,
// joined to their synonyms and, for entities, to the entities the KG
// relates them to.
func (m *Memory) Put(ctx context.Context, b Builder, docs []retrieval.Document) error {
	p, err := b.Prepare(ctx, docs, m.known)
	if err != nil {
		return err
	}
	m.apply(p, b)
	return nil
}

// known reports which of keys are nodes.
func (m *Memory) known(_ context.Context, keys []string) (map[string]bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	have := map[string]bool{}
	for _, k := range keys {
		if _, ok := m.idx[k]; ok {
			have[k] = true
		}
	}
	return have, nil
}

// apply writes a prepared share: the passages' old parts are taken back,
// the new nodes added (unless a write in between added them), the parts
// and the KG's edges added, and the new nodes joined to their synonyms.
func (m *Memory) apply(p Prepared, b Builder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, pp := range p.Parts {
		m.remove(pp.ID)
	}
	var added []int32
	for _, f := range p.Fresh {
		if _, ok := m.idx[f.Key]; ok {
			continue
		}
		id := m.node(f.Key, f.Label)
		m.setVector(id, f.Vector, f.Words)
		added = append(added, id)
	}
	for _, pp := range p.Parts {
		m.node(PassageKey(pp.ID), pp.Title)
		for _, q := range pp.Pairs {
			a, c := m.node(q.A, ""), m.node(q.B, "")
			m.addEdge(a, c, q.Kind, q.W)
			if q.Kind == Contains {
				m.passages[c]++
			}
		}
		m.parts[pp.ID] = pp
	}
	for _, e := range p.KGEdges {
		a, okA := m.idx[e[0]]
		c, okC := m.idx[e[1]]
		if okA && okC && !m.hasEdge(a, c, KGEdge) {
			m.addEdge(a, c, KGEdge, 1)
		}
	}
	m.synonyms(added, b.SynonymMinimum(), b.SynonymCount())
}

// Delete removes passages; their phrases stay as nodes (a phrase no passage
// holds is reached by no walk but its synonyms').
func (m *Memory) Delete(ctx context.Context, ids []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		m.remove(id)
	}
	return nil
}

// remove takes back a passage's contributions.
func (m *Memory) remove(id string) {
	pp, ok := m.parts[id]
	if !ok {
		return
	}
	for _, p := range pp.Pairs {
		a, c := m.idx[p.A], m.idx[p.B]
		m.addEdge(a, c, p.Kind, -p.W)
		if p.Kind == Contains {
			m.passages[c]--
		}
	}
	delete(m.parts, id)
}

// node is the index of key, added with label when new.
func (m *Memory) node(key, label string) int32 {
	if i, ok := m.idx[key]; ok {
		if m.label[i] == "" && label != "" {
			m.label[i] = label
		}
		return i
	}
	i := int32(len(m.keys))
	m.keys = append(m.keys, key)
	m.label = append(m.label, label)
	m.adj = append(m.adj, nil)
	m.passages = append(m.passages, 0)
	m.vecOf = append(m.vecOf, -1)
	m.idx[key] = i
	return i
}

// addEdge adds w to the (a, b, kind) edge's weight, both ways, removing it
// when it falls to 0.
func (m *Memory) addEdge(a, b int32, kind EdgeKind, w float64) {
	m.adj[a] = addHalf(m.adj[a], b, kind, w)
	m.adj[b] = addHalf(m.adj[b], a, kind, w)
}

func addHalf(hs []half, to int32, kind EdgeKind, w float64) []half {
	for i := range hs {
		if hs[i].to == to && hs[i].kind == kind {
			hs[i].w += float32(w)
			if hs[i].w <= 1e-6 {
				return append(hs[:i], hs[i+1:]...)
			}
			return hs
		}
	}
	if w <= 0 {
		return hs
	}
	return append(hs, half{to: to, kind: kind, w: float32(w)})
}

func (m *Memory) hasEdge(a, b int32, kind EdgeKind) bool {
	for _, h := range m.adj[a] {
		if h.to == b && h.kind == kind {
			return true
		}
	}
	return false
}

// setVector stores node id's unit vector u and indexes it under its words (NodeWords).
func (m *Memory) setVector(id int32, u []float32, words []string) {
	if len(u) == 0 {
		return
	}
	if m.dim == 0 {
		m.dim = len(u)
	}
	m.vecOf[id] = int32(len(m.vecs))
	m.vecs = append(m.vecs, u)
	m.rows = append(m.rows, id)
	for _, w := range words {
		m.words[w] = append(m.words[w], id)
	}
}

// SynonymWordCap leaves out of the synonym candidates the words that more
// phrases hold than this ("university", "river"): a pair that shares only
// such a word is compared no more.
const SynonymWordCap = 2000

// synonyms joins each added node to the phrase and entity nodes that share
// a word with it and whose cosine is at least minCos, its k best
// (BestSynonyms); the cosine is the edge's weight. Comparing only
// word-sharing pairs keeps the cost linear in practice where all pairs
// would be quadratic in the corpus.
func (m *Memory) synonyms(added []int32, minCos float64, k int) {
	for _, a := range added {
		ra := m.vecOf[a]
		if ra < 0 {
			continue
		}
		seen := map[int32]bool{}
		var cands []Candidate
		for _, w := range NodeWords(m.keys[a], m.label[a]) {
			if ids := m.words[w]; len(ids) <= SynonymWordCap {
				for _, id := range ids {
					if id != a && !seen[id] {
						seen[id] = true
						cands = append(cands, Candidate{Key: m.keys[id], Vector: m.vecs[m.vecOf[id]]})
					}
				}
			}
		}
		for _, c := range BestSynonyms(m.vecs[ra], cands, minCos, k) {
			if b := m.idx[c.Key]; !m.hasEdge(a, b, Synonym) {
				m.addEdge(a, b, Synonym, c.Cos)
			}
		}
	}
}

// Candidate is a node that may be a new node's synonym: its key and unit
// vector; Cos, once chosen, their cosine.
type Candidate struct {
	Key    string
	Vector []float32
	Cos    float64
}

// BestSynonyms are the k candidates whose cosine with the unit vector v is
// at least minCos, best first (ties: key), each once: a new node's synonyms
// among the nodes that share a word with it (a word more than
// SynonymWordCap nodes hold left out), in every store.
func BestSynonyms(v []float32, cands []Candidate, minCos float64, k int) []Candidate {
	var best []Candidate
	for _, c := range cands {
		if cos := vec.DotLanes(v, c.Vector); cos >= minCos {
			best = append(best, Candidate{Key: c.Key, Vector: c.Vector, Cos: cos})
		}
	}
	sort.Slice(best, func(i, j int) bool {
		if best[i].Cos != best[j].Cos {
			return best[i].Cos > best[j].Cos
		}
		return best[i].Key < best[j].Key
	})
	return best[:min2(len(best), k)]
}

func min2(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// NodeWords are the words a node's key (or, for an entity, its label)
// holds, stop words left out: a node's synonym candidates share one.
func NodeWords(key, label string) []string {
	text := strings.TrimPrefix(key, phrasePrefix)
	if strings.HasPrefix(key, entityPrefix) {
		text = kg.NormalizeForm(label)
	}
	var out []string
	for _, w := range strings.Fields(text) {
		if kg.Linkable(w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func unit(v []float32) []float32 {
	if len(v) == 0 {
		return nil
	}
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if s == 0 {
		return out
	}
	n := float32(1 / math.Sqrt(s))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}

// Match implements Store.
func (m *Memory) Match(ctx context.Context, keys []string, v []float32, k int, minCos float64) ([]Match, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := []Match{}
	seen := map[int32]bool{}
	for _, key := range keys {
		if i, ok := m.idx[key]; ok && !seen[i] && KindOf(key) != PassageNode {
			seen[i] = true
			out = append(out, Match{Key: key, Label: m.label[i], Score: 1, Passages: int(m.passages[i])})
		}
	}
	if len(v) == 0 || k <= 0 || len(m.vecs) == 0 {
		return out, nil
	}
	if len(v) != m.dim {
		return nil, fmt.Errorf("text graph: a %d-dimensional query against %d-dimensional phrase vectors", len(v), m.dim)
	}
	u := unit(v)
	var near []Match
	for r, pv := range m.vecs {
		id := m.rows[r]
		if seen[id] || m.passages[id] == 0 {
			continue
		}
		if c := vec.DotLanes(u, pv); c >= minCos {
			near = append(near, Match{Key: m.keys[id], Label: m.label[id], Score: c, Passages: int(m.passages[id])})
		}
	}
	sort.Slice(near, func(i, j int) bool {
		if near[i].Score != near[j].Score {
			return near[i].Score > near[j].Score
		}
		return near[i].Key < near[j].Key
	})
	return append(out, near[:min2(len(near), k)]...), nil
}

// Neighbourhood implements Store: a breadth-first walk from the seeds,
// Params.Hops levels, hubs (degree above Params.HubDegree) kept but not
// expanded unless they are seeds.
func (m *Memory) Neighbourhood(ctx context.Context, seeds []string, p Params) (Subgraph, error) {
	if err := p.Validate(); err != nil {
		return Subgraph{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	// Per-node slices, not maps: a three-hop walk reaches ten thousands of
	// nodes, and the maps were most of its time.
	n := len(m.keys)
	hop := make([]int8, n)
	for i := range hop {
		hop[i] = -1
	}
	walked := make([]bool, n)
	var ids, frontier []int32
	for _, s := range seeds {
		if i, ok := m.idx[s]; ok && hop[i] < 0 {
			hop[i] = 0
			frontier = append(frontier, i)
			ids = append(ids, i)
		}
	}
	for h := 0; h < p.Hops; h++ {
		if err := ctx.Err(); err != nil {
			return Subgraph{}, err
		}
		var next []int32
		for _, i := range frontier {
			if h > 0 && len(m.adj[i]) > p.HubDegree {
				continue
			}
			walked[i] = true
			for _, e := range m.adj[i] {
				if hop[e.to] < 0 {
					hop[e.to] = int8(h + 1)
					next = append(next, e.to)
					ids = append(ids, e.to)
				}
			}
		}
		frontier = next
	}
	return m.subgraph(ids, hop, walked, p), nil
}

// subgraph lists the walk's nodes and edges in their canonical order: nodes
// by (hop, key), edges by their ends' places (the lower first, then the
// higher), then kind, each edge from its end of the lesser key (SortEdges'
// order, which every backend lists them in). The edges are listed from
// each node in place order, so no sort of all of them is needed.
func (m *Memory) subgraph(ids []int32, hop []int8, walked []bool, p Params) Subgraph {
	rank := m.keyRanks()
	slices.SortFunc(ids, func(a, b int32) int {
		if hop[a] != hop[b] {
			return int(hop[a]) - int(hop[b])
		}
		return int(rank[a]) - int(rank[b])
	})
	pos := make([]int32, len(m.keys))
	for i := range pos {
		pos[i] = -1
	}
	sg := Subgraph{Nodes: make([]Node, len(ids))}
	edges := 0
	for n, i := range ids {
		pos[i] = int32(n)
		deg := len(m.adj[i])
		if walked[i] {
			edges += deg
		}
		sg.Nodes[n] = Node{Key: m.keys[i], Kind: KindOf(m.keys[i]), Label: m.label[i], Hop: int(hop[i]), Degree: deg, Hub: deg > p.HubDegree}
	}
	sg.Edges = make([]Edge, 0, edges)
	// order sorts a node's edges to later places by (place, kind): one
	// integer each, the half's index in its low bits.
	var order []uint64
	for a, i := range ids {
		order = order[:0]
		for k, e := range m.adj[i] {
			b := int(pos[e.to])
			if b < 0 || b < a || !(walked[i] || walked[e.to]) {
				continue
			}
			order = append(order, uint64(b)<<40|uint64(e.kind)<<32|uint64(k))
		}
		slices.Sort(order)
		for _, o := range order {
			e := m.adj[i][uint32(o)]
			b := int(o >> 40)
			ed := Edge{A: a, B: b, From: m.keys[i], To: m.keys[e.to], Kind: e.kind, W: float64(e.w)}
			if rank[i] > rank[e.to] {
				ed.A, ed.B, ed.From, ed.To = b, a, m.keys[e.to], m.keys[i]
			}
			sg.Edges = append(sg.Edges, ed)
		}
	}
	return sg
}

// keyRanks are the nodes' places in the order of their keys, for the
// canonical order of a subgraph's nodes without comparing strings. Keys are
// only ever appended, so the ranks are rebuilt when a node was added since.
// The caller holds m.mu for reading.
func (m *Memory) keyRanks() []int32 {
	if o := m.order.Load(); o != nil && len(*o) == len(m.keys) {
		return *o
	}
	m.orderMu.Lock()
	defer m.orderMu.Unlock()
	if o := m.order.Load(); o != nil && len(*o) == len(m.keys) {
		return *o
	}
	byKey := make([]int32, len(m.keys))
	for i := range byKey {
		byKey[i] = int32(i)
	}
	slices.SortFunc(byKey, func(a, b int32) int { return strings.Compare(m.keys[a], m.keys[b]) })
	rank := make([]int32, len(m.keys))
	for r, i := range byKey {
		rank[i] = int32(r)
	}
	m.order.Store(&rank)
	return rank
}

// SortEdges orders a subgraph's edges by their ends' places among its
// nodes (the lower first, then the higher), then kind: the order every
// backend lists them in.
func SortEdges(es []Edge) {
	slices.SortFunc(es, func(a, b Edge) int {
		a1, a2 := min(a.A, a.B), max(a.A, a.B)
		b1, b2 := min(b.A, b.B), max(b.A, b.B)
		if a1 != b1 {
			return a1 - b1
		}
		if a2 != b2 {
			return a2 - b2
		}
		return int(a.Kind) - int(b.Kind)
	})
}

// sortExported orders edges without places (Export's) by (from, to, kind).
func sortExported(es []Edge) {
	slices.SortFunc(es, func(a, b Edge) int {
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		if c := strings.Compare(a.To, b.To); c != 0 {
			return c
		}
		return int(a.Kind) - int(b.Kind)
	})
}

// Stats counts the graph's parts.
func (m *Memory) Stats() Stats {
	m.mu.RLock()
	defer m.mu.RUnlock()
	st := Stats{Edges: map[string]int{}}
	for i, k := range m.keys {
		switch KindOf(k) {
		case PassageNode:
			if _, ok := m.parts[DocumentID(k)]; ok {
				st.Passages++
			}
		case PhraseNode:
			st.Phrases++
		case EntityNode:
			st.Entities++
		}
		for _, e := range m.adj[i] {
			if int32(i) < e.to {
				st.Edges[e.kind.String()]++
			}
		}
	}
	return st
}

// ExportNode is a node as Export lists it, for writing the graph to another
// store.
type ExportNode struct {
	Key, Label string
	Passages   int
	Vector     []float32 // unit length; nil for a passage
}

// Parts are every passage's part, by ID: what a store keeps to take a
// passage's contributions back.
func (m *Memory) Parts() []Part {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Part, 0, len(m.parts))
	for _, p := range m.parts {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Export lists the graph's nodes (in key order) and edges (each once, From
// < To, by (From, To, Kind); A and B are not set).
func (m *Memory) Export() ([]ExportNode, []Edge) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	nodes := make([]ExportNode, len(m.keys))
	for i, k := range m.keys {
		nodes[i] = ExportNode{Key: k, Label: m.label[i], Passages: int(m.passages[i])}
		if r := m.vecOf[i]; r >= 0 {
			nodes[i].Vector = m.vecs[r]
		}
	}
	var edges []Edge
	for i, hs := range m.adj {
		for _, h := range hs {
			if m.keys[i] < m.keys[h.to] {
				edges = append(edges, Edge{From: m.keys[i], To: m.keys[h.to], Kind: h.kind, W: float64(h.w)})
			}
		}
	}
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].Key < nodes[b].Key })
	sortExported(edges)
	return nodes, edges
}
