// Package memkg is dmar's embedded knowledge graph: the whole graph in memory,
// built from a KG bundle and kept in a snapshot file so that a restart does
// not re-parse text. It implements kg.Graph.
package memkg

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
)

var (
	_ kg.Graph  = (*Graph)(nil)
	_ kg.Pinger = (*Graph)(nil)

	_ kg.CandidateLinker     = (*Graph)(nil)
	_ kg.NeighbourhoodReader = (*Graph)(nil)
	_ kg.DegreeReader        = (*Graph)(nil)
)

// Graph is an immutable in-memory knowledge graph, safe for concurrent use.
//
// Edges are held as compressed sparse rows: entity i's half-edges (both
// directions) are adj[off[i]:off[i+1]], each one uint64 packing the
// neighbour's index (high 32 bits) and the property's index times two plus
// one for an incoming edge (low 32 bits). Entities are sorted by QID and
// properties by PID, so sorting the packed values sorts a row by
// neighbour QID, then PID, then outgoing first. That is 16 bytes per triple,
// against about 70 for per-entity slices of structs holding the PID string.
type Graph struct {
	ents []kg.Entity      // sorted by QID
	idx  map[string]int32 // QID -> index into ents
	// relations is the properties' metadata; pids is the property table adj
	// indexes (every PID of a relation or a triple, sorted).
	relations map[string]kg.Relation
	pids      []string
	pidx      map[string]uint32
	labels    []string // labels[i] is pids[i]'s label (set with pids, after relations)
	off       []int64  // len(ents)+1
	adj       []uint64
	dict      kg.Dictionary
	// cdict is the context linker's dictionary, built on first use.
	cdict     *kg.ContextDictionary
	cdictOnce sync.Once
	nTrip     int
	// marks are the subgraph walks' scratch sets (subgraph.go), reused.
	marks sync.Pool
	// stats is the bundle read's report, for a graph built from a bundle or
	// from a snapshot of one.
	stats    bundle.Stats
	hasStats bool
}

func pack(other int32, pid uint32, out bool) uint64 {
	r := uint64(pid) << 1
	if !out {
		r |= 1
	}
	return uint64(uint32(other))<<32 | r
}

// halfEdge unpacks one entry of adj.
func halfEdge(e uint64) (other int32, pid uint32, out bool) {
	return int32(e >> 32), uint32(e) >> 1, e&1 == 0
}

// snapshot is what Save writes. It holds no map: gob writes a map's entries
// in Go's random iteration order, and two saves of one graph must be the
// same bytes. Version 3 holds the rows (Adj, each entity's Degree long)
// instead of triples of strings, so that a graph of tens of millions of
// edges loads without parsing or sorting; Load refuses other versions by
// their number, so callers rebuild them from the bundle.
type snapshot struct {
	Version      int
	Entities     []kg.Entity   // sorted by QID, Degree set
	RelationList []kg.Relation // sorted by PID
	PIDs         []string      // the property table Adj indexes
	Adj          []uint64      // the rows, concatenated in entity order
	NTriples     int           // a new name: versions 1 and 2 held Triples []kg.Triple
	// Stats is what reading the bundle reported (HasStats: there was one).
	Stats    bundle.Stats
	HasStats bool
}

const snapshotVersion = 3

// New builds a graph from entities, relations and triples. Triples naming an
// unknown entity are skipped; Degree is recomputed from the triples.
func New(ents []kg.Entity, rels map[string]kg.Relation, triples []kg.Triple) *Graph {
	g := &Graph{idx: make(map[string]int32, len(ents))}
	g.ents = append([]kg.Entity(nil), ents...)
	sort.Slice(g.ents, func(i, j int) bool { return g.ents[i].QID < g.ents[j].QID })
	for i := range g.ents {
		g.idx[g.ents[i].QID] = int32(i)
	}
	g.setRelations(rels, triples)
	// Two passes over the triples: count each entity's half-edges, then
	// place them; duplicates are dropped after each row is sorted.
	g.off = make([]int64, len(g.ents)+1)
	type end struct{ h, t int32 }
	ends := make([]end, len(triples))
	for k, t := range triples {
		h, ok1 := g.idx[t.Head]
		tl, ok2 := g.idx[t.Tail]
		if !ok1 || !ok2 {
			ends[k] = end{-1, -1}
			continue
		}
		ends[k] = end{h, tl}
		g.off[h+1]++
		g.off[tl+1]++
	}
	for i := 1; i < len(g.off); i++ {
		g.off[i] += g.off[i-1]
	}
	g.adj = make([]uint64, g.off[len(g.ents)])
	fill := append([]int64(nil), g.off[:len(g.ents)]...)
	for k, t := range triples {
		e := ends[k]
		if e.h < 0 {
			continue
		}
		pid := g.pidx[t.PID]
		g.adj[fill[e.h]] = pack(e.t, pid, true)
		fill[e.h]++
		g.adj[fill[e.t]] = pack(e.h, pid, false)
		fill[e.t]++
	}
	g.compact()
	g.dict = kg.NewDictionary(g.ents)
	return g
}

// setRelations keeps the relations' metadata and fixes the property
// table: every PID of rels or of a triple, sorted.
func (g *Graph) setRelations(rels map[string]kg.Relation, triples []kg.Triple) {
	g.relations = rels
	g.pidx = make(map[string]uint32, len(rels))
	for pid := range rels {
		g.pidx[pid] = 0
	}
	for _, t := range triples {
		g.pidx[t.PID] = 0
	}
	g.setPIDs(slices.Sorted(maps.Keys(g.pidx)))
}

func (g *Graph) setPIDs(pids []string) {
	g.pids = pids
	g.pidx = make(map[string]uint32, len(pids))
	g.labels = make([]string, len(pids))
	for i, p := range pids {
		g.pidx[p] = uint32(i)
		g.labels[i] = g.relations[p].Label
	}
}

// compact sorts each row, drops repeated half-edges (a repeated triple),
// closes the gaps and sets Degree and the triple count.
func (g *Graph) compact() {
	w := int64(0)
	g.nTrip = 0
	for i := range g.ents {
		row := g.adj[g.off[i]:g.off[i+1]]
		slices.Sort(row)
		start := w
		for k, e := range row {
			if k > 0 && e == row[k-1] {
				continue
			}
			g.adj[w] = e
			w++
			if _, _, out := halfEdge(e); out {
				g.nTrip++
			}
		}
		g.off[i] = start
		g.ents[i].Degree = int(w - start)
	}
	g.off[len(g.ents)] = w
	g.adj = slices.Clip(g.adj[:w])
}

// row is entity i's half-edges.
func (g *Graph) row(i int32) []uint64 { return g.adj[g.off[i]:g.off[i+1]] }

// FromBundle builds a graph from a parsed bundle; the graph keeps the
// bundle's read statistics (BundleStats), and so does its snapshot.
func FromBundle(b *bundle.KG) *Graph {
	g := New(b.Entities, b.Relations, b.Triples)
	g.stats, g.hasStats = b.Stats, true
	return g
}

// BundleStats returns what reading the bundle reported (counts, bad and
// repeated lines), for a graph built by FromBundle or loaded from its
// snapshot, so that a rerun from the snapshot reports the same. ok is false
// for a graph built by New.
func (g *Graph) BundleStats() (st bundle.Stats, ok bool) { return g.stats, g.hasStats }

// Save writes the graph's snapshot to path atomically: to a temporary file
// beside it, renamed into place once complete (removed on failure). The
// same graph always gives the same bytes.
func (g *Graph) Save(path string) (err error) {
	rels := make([]kg.Relation, 0, len(g.relations))
	for _, r := range g.relations {
		rels = append(rels, r)
	}
	sort.Slice(rels, func(i, j int) bool { return rels[i].PID < rels[j].PID })
	s := snapshot{Version: snapshotVersion, Entities: g.ents, RelationList: rels, PIDs: g.pids, Adj: g.adj, NTriples: g.nTrip,
		Stats: g.stats, HasStats: g.hasStats}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save graph: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return fmt.Errorf("save graph: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("save graph: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := gob.NewEncoder(w).Encode(&s); err != nil {
		return fmt.Errorf("save graph: encode: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("save graph: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("save graph: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save graph: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("save graph: %w", err)
	}
	return nil
}

// Load reads a snapshot written by Save.
func Load(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load graph snapshot: %w", err)
	}
	defer f.Close()
	var s snapshot
	if err := gob.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&s); err != nil {
		return nil, fmt.Errorf("load graph snapshot %s: %w", path, err)
	}
	if s.Version != snapshotVersion {
		return nil, fmt.Errorf("graph snapshot %s has version %d, want %d (reload the KG)", path, s.Version, snapshotVersion)
	}
	g, err := fromSnapshot(&s)
	if err != nil {
		return nil, fmt.Errorf("load graph snapshot %s: %w (reload the KG)", path, err)
	}
	return g, nil
}

// fromSnapshot rebuilds a graph from its rows, checking that they are
// rows of this graph: a damaged file is an error, not a panic later.
func fromSnapshot(s *snapshot) (*Graph, error) {
	rels := make(map[string]kg.Relation, len(s.RelationList))
	for _, r := range s.RelationList {
		rels[r.PID] = r
	}
	g := &Graph{ents: s.Entities, relations: rels, adj: s.Adj, nTrip: s.NTriples, stats: s.Stats, hasStats: s.HasStats}
	g.setPIDs(s.PIDs)
	if !slices.IsSorted(g.pids) {
		return nil, errors.New("property table not sorted")
	}
	n := len(g.ents)
	g.idx = make(map[string]int32, n)
	g.off = make([]int64, n+1)
	for i, e := range g.ents {
		if i > 0 && g.ents[i-1].QID >= e.QID {
			return nil, fmt.Errorf("entity %d (%q) out of order", i, e.QID)
		}
		g.idx[e.QID] = int32(i)
		g.off[i+1] = g.off[i] + int64(e.Degree)
	}
	if g.off[n] != int64(len(g.adj)) {
		return nil, fmt.Errorf("degrees sum to %d, %d half-edges held", g.off[n], len(g.adj))
	}
	outs := 0
	for i := range g.ents {
		row := g.row(int32(i))
		for k, e := range row {
			other, pid, out := halfEdge(e)
			if other < 0 || int(other) >= n || int(pid) >= len(g.pids) || (k > 0 && row[k-1] >= e) {
				return nil, fmt.Errorf("entity %s: half-edge %d is not valid", g.ents[i].QID, k)
			}
			if out {
				outs++
			}
		}
	}
	if outs != g.nTrip {
		return nil, fmt.Errorf("%d outgoing half-edges for %d triples", outs, g.nTrip)
	}
	g.dict = kg.NewDictionary(g.ents)
	return g, nil
}

// Triples lists the graph's statements sorted by (head, pid, tail).
func (g *Graph) Triples() []kg.Triple {
	out := make([]kg.Triple, 0, g.nTrip)
	for i := range g.ents {
		for _, e := range g.row(int32(i)) {
			if other, pid, isOut := halfEdge(e); isOut {
				out = append(out, kg.Triple{Head: g.ents[i].QID, PID: g.pids[pid], Tail: g.ents[other].QID})
			}
		}
	}
	slices.SortFunc(out, kg.CompareTriples)
	return out
}

// Stats reports the graph's size.
func (g *Graph) Stats() (entities, triples, relations int) {
	return len(g.ents), g.nTrip, len(g.relations)
}

// AllEntities returns every entity, sorted by QID. Callers must not modify it.
func (g *Graph) AllEntities() []kg.Entity { return g.ents }

// Relation returns a property's metadata.
func (g *Graph) Relation(pid string) (kg.Relation, bool) {
	r, ok := g.relations[pid]
	return r, ok
}

// Ping always succeeds: the graph is in process.
func (g *Graph) Ping(ctx context.Context) error { return ctx.Err() }

// Entities implements kg.Graph.
func (g *Graph) Entities(ctx context.Context, qids []string) (map[string]kg.Entity, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]kg.Entity, len(qids))
	for _, q := range qids {
		if i, ok := g.idx[q]; ok {
			out[q] = g.ents[i]
		}
	}
	return out, nil
}

// Degrees implements kg.DegreeReader.
func (g *Graph) Degrees(ctx context.Context, qids []string) (map[string]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]int, len(qids))
	for _, q := range qids {
		if i, ok := g.idx[q]; ok {
			out[q] = g.ents[i].Degree
		}
	}
	return out, nil
}

// Link implements kg.Graph.
func (g *Graph) Link(ctx context.Context, text string) ([]kg.Mention, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return g.dict.Link(text), nil
}

// LinkCandidates implements kg.CandidateLinker: every span of text with
// candidates, exact forms before derived ones (kg.ContextDictionary).
func (g *Graph) LinkCandidates(ctx context.Context, text string) ([]kg.Token, []kg.SpanCandidates, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	g.cdictOnce.Do(func() { g.cdict = kg.NewContextDictionary(g.ents, g.dict) })
	toks, spans := g.cdict.Candidates(text)
	return toks, spans, nil
}

// Subgraphs implements kg.Graph with the rules documented on kg.SubgraphParams.
func (g *Graph) Subgraphs(ctx context.Context, roots []string, p kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	return g.each(ctx, roots, func(i int32) kg.Subgraph { return g.subgraph(i, p, false) })
}

// Neighbourhoods implements kg.NeighbourhoodReader: Subgraphs, with a hub
// root's one-hop star and the walked entities' edges only (kg.Neighbourhoods).
func (g *Graph) Neighbourhoods(ctx context.Context, roots []string, p kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	return g.each(ctx, roots, func(i int32) kg.Subgraph {
		if p.Hops >= 1 && g.hub(i, p) {
			return g.star(i, p)
		}
		return g.subgraph(i, p, true)
	})
}

// each extracts f of every known root once, checking ctx as it goes.
func (g *Graph) each(ctx context.Context, roots []string, f func(int32) kg.Subgraph) (map[string]kg.Subgraph, error) {
	out := make(map[string]kg.Subgraph, len(roots))
	for n, r := range roots {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if _, done := out[r]; done {
			continue
		}
		if i, ok := g.idx[r]; ok {
			out[r] = f(i)
		}
	}
	return out, nil
}

// star is a hub root's one-hop star: its neighbours in QID order up to the
// node cap, and its own edges to them.
func (g *Graph) star(root int32, p kg.SubgraphParams) kg.Subgraph {
	e := g.ents[root]
	sg := kg.Subgraph{Root: e.QID, Nodes: []kg.Node{{QID: e.QID, Label: e.Label, Hub: true}}}
	m := g.takeMarks()
	defer g.marks.Put(m)
	m.hold(root, 0)
	row := g.row(root)
	// The row is sorted by neighbour index, which is QID order.
	for _, h := range row {
		other, _, _ := halfEdge(h)
		if m.held(other) {
			continue
		}
		if p.MaxNodes > 0 && len(sg.Nodes) >= p.MaxNodes {
			sg.Truncated = true
			break
		}
		m.hold(other, 1)
		n := g.ents[other]
		sg.Nodes = append(sg.Nodes, kg.Node{QID: n.QID, Label: n.Label, Hop: 1, Hub: g.hub(other, p)})
	}
	sg.Edges = g.edges(starEdges(root, row, m.held))
	return sg
}

// starEdges are the keys of root's edges in its row to the entities held;
// they are unique: a row holds no repeated half-edge.
func starEdges(root int32, row []uint64, held func(int32) bool) []edgeKey {
	var keys []edgeKey
	for _, h := range row {
		other, pid, out := halfEdge(h)
		if !held(other) {
			continue
		}
		from, to := root, other
		if !out {
			from, to = other, root
		}
		if other == root && !out {
			continue // a loop is in the row twice, once each way
		}
		keys = append(keys, edgeKey{from, to, pid})
	}
	return keys
}

func (g *Graph) hub(i int32, p kg.SubgraphParams) bool {
	return p.HubDegree > 0 && g.ents[i].Degree > p.HubDegree
}
