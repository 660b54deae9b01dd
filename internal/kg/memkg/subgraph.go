package memkg

import (
	"cmp"
	"slices"

	"github.com/dmar-kg/dmar/internal/kg"
)

// marks is a walk's scratch: per entity, whether the walk holds it and at
// which hop, valid where stamp[i] equals the walk's epoch. Reusing one
// across walks (through Graph.marks) costs nothing per walk, where maps keyed
// by entity index were half of a two-hop subgraph's time.
type marks struct {
	epoch uint32
	stamp []uint32
	hop   []uint8 // hop[i], where stamp[i] == epoch
	// seen marks a hop's candidates, valid where seen[i] == hopEpoch (each
	// hop starts a new one)
	seen     []uint32
	hopEpoch uint32
}

// takeMarks is a scratch for a walk with a fresh epoch; give it back with
// g.marks.Put.
func (g *Graph) takeMarks() *marks {
	m, _ := g.marks.Get().(*marks)
	if m == nil || len(m.stamp) != len(g.ents) {
		m = &marks{stamp: make([]uint32, len(g.ents)), hop: make([]uint8, len(g.ents)), seen: make([]uint32, len(g.ents))}
	}
	m.epoch++
	if m.epoch == 0 { // wrapped: old stamps could match again
		clear(m.stamp)
		m.epoch = 1
	}
	return m
}

// nextHop starts a new set of candidates.
func (m *marks) nextHop() {
	m.hopEpoch++
	if m.hopEpoch == 0 {
		clear(m.seen)
		m.hopEpoch = 1
	}
}

func (m *marks) held(i int32) bool { return m.stamp[i] == m.epoch }

func (m *marks) hold(i int32, hop int) { m.stamp[i], m.hop[i] = m.epoch, uint8(hop) }

// subgraph is root's hop-limited neighbourhood (kg.Graph's Subgraphs rule):
// breadth-first, each hop's new entities in QID order up to the node cap,
// hubs held but never expanded, and every edge between held entities; with
// walkedOnly (kg.Neighbourhoods), only the edges with an end at an expanded
// entity (a non-hub short of the last hop).
func (g *Graph) subgraph(root int32, p kg.SubgraphParams, walkedOnly bool) kg.Subgraph {
	maxNodes := p.MaxNodes
	if maxNodes <= 0 {
		maxNodes = 1 << 30
	}
	if p.Hops > 255 {
		p.Hops = 255 // marks keep hops in a byte; no graph is that deep
	}
	m := g.takeMarks()
	defer g.marks.Put(m)
	m.hold(root, 0)
	order := []int32{root}
	frontier := []int32{root}
	truncated := false
	for h := 1; h <= p.Hops && len(frontier) > 0; h++ {
		var cands []int32
		m.nextHop()
		for _, u := range frontier {
			if g.hub(u, p) {
				continue
			}
			for _, e := range g.row(u) {
				other, _, _ := halfEdge(e)
				if !m.held(other) && m.seen[other] != m.hopEpoch {
					m.seen[other] = m.hopEpoch
					cands = append(cands, other)
				}
			}
		}
		// Indices follow QID order because ents is sorted by QID.
		slices.Sort(cands)
		frontier = frontier[:0:0]
		for _, v := range cands {
			if len(order) >= maxNodes {
				truncated = true
				break
			}
			m.hold(v, h)
			order = append(order, v)
			frontier = append(frontier, v)
		}
	}
	sg := kg.Subgraph{Root: g.ents[root].QID, Truncated: truncated, Nodes: make([]kg.Node, len(order))}
	for k, v := range order {
		e := g.ents[v]
		sg.Nodes[k] = kg.Node{QID: e.QID, Label: e.Label, Hop: int(m.hop[v]), Hub: g.hub(v, p)}
	}
	// Each edge between held entities once: from its head's row, or from
	// its tail's when the head's row is not read (a hub's, or with
	// walkedOnly an entity not expanded). Rows hold no repeated half-edge,
	// and a loop is in its row twice (out and in): the out half counts.
	read := func(u int32) bool {
		return !g.hub(u, p) && (!walkedOnly || int(m.hop[u]) < p.Hops)
	}
	var keys []edgeKey
	for _, u := range order {
		if !read(u) {
			continue
		}
		for _, e := range g.row(u) {
			other, pid, out := halfEdge(e)
			if !m.held(other) {
				continue
			}
			if out {
				keys = append(keys, edgeKey{u, other, pid})
			} else if !read(other) {
				keys = append(keys, edgeKey{other, u, pid})
			}
		}
	}
	sg.Edges = g.edges(keys)
	return sg
}

// edgeKey is an edge by entity and property index.
type edgeKey struct {
	from, to int32
	pid      uint32
}

// edges are keys (no two equal) as kg.Edges in kg.CompareEdges order.
// Entities and properties are indexed in QID and PID order, so sorting the
// indices orders the strings, without comparing them; where the indices fit,
// they are packed into one integer (from, pid, to), which sorts fastest.
func (g *Graph) edges(keys []edgeKey) []kg.Edge {
	if len(keys) == 0 {
		return nil
	}
	out := make([]kg.Edge, len(keys))
	set := func(i int, from, to int32, pid uint32) {
		out[i] = kg.Edge{From: g.ents[from].QID, To: g.ents[to].QID, PID: g.pids[pid], Label: g.labels[pid]}
	}
	if len(g.ents) <= 1<<24 && len(g.pids) <= 1<<16 {
		packed := make([]uint64, len(keys))
		for i, k := range keys {
			packed[i] = uint64(k.from)<<40 | uint64(k.pid)<<24 | uint64(k.to)
		}
		slices.Sort(packed)
		for i, v := range packed {
			set(i, int32(v>>40), int32(v&(1<<24-1)), uint32(v>>24&(1<<16-1)))
		}
		return out
	}
	slices.SortFunc(keys, func(a, b edgeKey) int {
		if a.from != b.from {
			return cmp.Compare(a.from, b.from)
		}
		if a.pid != b.pid {
			return cmp.Compare(a.pid, b.pid)
		}
		return cmp.Compare(a.to, b.to)
	})
	for i, k := range keys {
		set(i, k.from, k.to, k.pid)
	}
	return out
}
