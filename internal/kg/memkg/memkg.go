// Package memkg is dmar's embedded knowledge graph: the whole graph in memory,
// built from a KG bundle and kept in a snapshot file so that a restart does
// not re-parse text. It implements kg.Graph.
package memkg

import (
	"bufio"
	"context"
	"encoding/gob"
	"fmt"
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

	_ kg.CandidateLinker = (*Graph)(nil)
)

// Graph is an immutable in-memory knowledge graph, safe for concurrent use.
type Graph struct {
	ents      []kg.Entity      // sorted by QID
	idx       map[string]int32 // QID -> index into ents
	relations map[string]kg.Relation
	// adj[i] lists the edges touching entity i (both directions), sorted by
	// the neighbour's QID, then PID, then direction.
	adj  [][]halfEdge
	dict kg.Dictionary
	// cdict is the context linker's dictionary, built on first use.
	cdict     *kg.ContextDictionary
	cdictOnce sync.Once
	nTrip     int
	// stats is the bundle read's report, for a graph built from a bundle or
	// from a snapshot of one.
	stats    bundle.Stats
	hasStats bool
}

type halfEdge struct {
	other int32
	pid   string
	out   bool // true: i -[pid]-> other
}

// snapshot is what Save writes. It holds no map: gob writes a map's entries
// in Go's random iteration order, and two saves of one graph must be the
// same bytes. Version 1 held a Relations map (and no stats): gob skips that
// field when it decodes one, and Load refuses it by its Version, so callers
// rebuild it from the bundle.
type snapshot struct {
	Version      int
	Entities     []kg.Entity
	RelationList []kg.Relation // sorted by PID
	Triples      []kg.Triple
	// Stats is what reading the bundle reported (HasStats: there was one).
	Stats    bundle.Stats
	HasStats bool
}

const snapshotVersion = 2

// New builds a graph from entities, relations and triples. Triples naming an
// unknown entity are skipped; Degree is recomputed from the triples.
func New(ents []kg.Entity, rels map[string]kg.Relation, triples []kg.Triple) *Graph {
	g := &Graph{relations: rels, idx: make(map[string]int32, len(ents))}
	g.ents = append([]kg.Entity(nil), ents...)
	sort.Slice(g.ents, func(i, j int) bool { return g.ents[i].QID < g.ents[j].QID })
	for i := range g.ents {
		g.ents[i].Degree = 0
		g.idx[g.ents[i].QID] = int32(i)
	}
	g.adj = make([][]halfEdge, len(g.ents))
	seen := map[kg.Triple]bool{}
	for _, t := range triples {
		h, ok1 := g.idx[t.Head]
		tl, ok2 := g.idx[t.Tail]
		if !ok1 || !ok2 || seen[t] {
			continue
		}
		seen[t] = true
		g.nTrip++
		g.adj[h] = append(g.adj[h], halfEdge{other: tl, pid: t.PID, out: true})
		g.adj[tl] = append(g.adj[tl], halfEdge{other: h, pid: t.PID, out: false})
		g.ents[h].Degree++
		g.ents[tl].Degree++
	}
	for i := range g.adj {
		a := g.adj[i]
		sort.Slice(a, func(x, y int) bool {
			qx, qy := g.ents[a[x].other].QID, g.ents[a[y].other].QID
			if qx != qy {
				return qx < qy
			}
			if a[x].pid != a[y].pid {
				return a[x].pid < a[y].pid
			}
			return a[x].out && !a[y].out
		})
	}
	g.dict = kg.NewDictionary(g.ents)
	return g
}

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
	s := snapshot{Version: snapshotVersion, Entities: g.ents, RelationList: rels, Triples: g.Triples(), Stats: g.stats, HasStats: g.hasStats}
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
	rels := make(map[string]kg.Relation, len(s.RelationList))
	for _, r := range s.RelationList {
		rels[r.PID] = r
	}
	g := New(s.Entities, rels, s.Triples)
	g.stats, g.hasStats = s.Stats, s.HasStats
	return g, nil
}

// Triples lists the graph's statements sorted by (head, pid, tail).
func (g *Graph) Triples() []kg.Triple {
	out := make([]kg.Triple, 0, g.nTrip)
	for i, a := range g.adj {
		for _, e := range a {
			if e.out {
				out = append(out, kg.Triple{Head: g.ents[i].QID, PID: e.pid, Tail: g.ents[e.other].QID})
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
		i, ok := g.idx[r]
		if !ok {
			continue
		}
		out[r] = g.subgraph(i, p)
	}
	return out, nil
}

func (g *Graph) hub(i int32, p kg.SubgraphParams) bool {
	return p.HubDegree > 0 && g.ents[i].Degree > p.HubDegree
}

func (g *Graph) subgraph(root int32, p kg.SubgraphParams) kg.Subgraph {
	maxNodes := p.MaxNodes
	if maxNodes <= 0 {
		maxNodes = 1 << 30
	}
	hop := map[int32]int{root: 0}
	order := []int32{root}
	frontier := []int32{root}
	truncated := false
	for h := 1; h <= p.Hops && len(frontier) > 0; h++ {
		var cands []int32
		seen := map[int32]bool{}
		for _, u := range frontier {
			if g.hub(u, p) {
				continue
			}
			for _, e := range g.adj[u] {
				if _, vis := hop[e.other]; !vis && !seen[e.other] {
					seen[e.other] = true
					cands = append(cands, e.other)
				}
			}
		}
		// Indices follow QID order because ents is sorted by QID.
		sort.Slice(cands, func(a, b int) bool { return cands[a] < cands[b] })
		frontier = frontier[:0:0]
		for _, v := range cands {
			if len(order) >= maxNodes {
				truncated = true
				break
			}
			hop[v] = h
			order = append(order, v)
			frontier = append(frontier, v)
		}
	}
	sg := kg.Subgraph{Root: g.ents[root].QID, Truncated: truncated, Nodes: make([]kg.Node, len(order))}
	for k, v := range order {
		e := g.ents[v]
		sg.Nodes[k] = kg.Node{QID: e.QID, Label: e.Label, Hop: hop[v], Hub: g.hub(v, p)}
	}
	type key struct {
		from, to int32
		pid      string
	}
	seenE := map[key]bool{}
	for _, u := range order {
		if g.hub(u, p) {
			continue
		}
		for _, e := range g.adj[u] {
			if _, in := hop[e.other]; !in {
				continue
			}
			k := key{u, e.other, e.pid}
			if !e.out {
				k = key{e.other, u, e.pid}
			}
			if seenE[k] {
				continue
			}
			seenE[k] = true
			sg.Edges = append(sg.Edges, kg.Edge{From: g.ents[k.from].QID, To: g.ents[k.to].QID, PID: k.pid, Label: g.relations[k.pid].Label})
		}
	}
	kg.SortEdges(sg.Edges)
	return sg
}
