package memkg

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

// refSubgraph is the implementation before the scratch marks, the packed
// edge sort and one-sided edges (maps for the held entities and the edges
// seen, a sort of index triples): the walk must give the same subgraphs,
// edge for edge, in the same order.
func (g *Graph) refSubgraph(root int32, p kg.SubgraphParams) kg.Subgraph {
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
			for _, e := range g.row(u) {
				other, _, _ := halfEdge(e)
				if _, vis := hop[other]; !vis && !seen[other] {
					seen[other] = true
					cands = append(cands, other)
				}
			}
		}
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
	seenE := map[edgeKey]bool{}
	var keys []edgeKey
	for _, u := range order {
		if g.hub(u, p) {
			continue
		}
		for _, e := range g.row(u) {
			other, pid, out := halfEdge(e)
			if _, in := hop[other]; !in {
				continue
			}
			k := edgeKey{u, other, pid}
			if !out {
				k = edgeKey{other, u, pid}
			}
			if !seenE[k] {
				seenE[k] = true
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, func(a, b edgeKey) int {
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.pid, b.pid), cmp.Compare(a.to, b.to))
	})
	if len(keys) > 0 {
		sg.Edges = make([]kg.Edge, len(keys))
	}
	for i, k := range keys {
		name := g.pids[k.pid]
		sg.Edges[i] = kg.Edge{From: g.ents[k.from].QID, To: g.ents[k.to].QID, PID: name, Label: g.relations[name].Label}
	}
	return sg
}

// randomGraph has loops, repeated triples, parallel edges with other
// properties and a few hubs.
func randomGraph(seed uint64, n, m int) *Graph {
	rng := rand.New(rand.NewPCG(seed, 7))
	ents := make([]kg.Entity, n)
	for i := range ents {
		ents[i] = kg.Entity{QID: fmt.Sprintf("Q%d", i+1), Label: fmt.Sprintf("e%d", i+1)}
	}
	rels := map[string]kg.Relation{}
	for i := 1; i <= 9; i++ {
		pid := fmt.Sprintf("P%d", i*7)
		rels[pid] = kg.Relation{PID: pid, Label: "rel " + pid}
	}
	var triples []kg.Triple
	for k := 0; k < m; k++ {
		h, t := rng.IntN(n), rng.IntN(n)
		if rng.IntN(4) == 0 { // hubs: the first few entities get many edges
			h = rng.IntN(3)
		}
		if rng.IntN(50) == 0 {
			t = h
		}
		tr := kg.Triple{Head: ents[h].QID, PID: fmt.Sprintf("P%d", 7*(1+rng.IntN(9))), Tail: ents[t].QID}
		triples = append(triples, tr)
		if rng.IntN(20) == 0 {
			triples = append(triples, tr)
		}
	}
	return New(ents, rels, triples)
}

func TestSubgraphMatchesPlainRule(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		g := randomGraph(seed, 400, 2500)
		for _, p := range []kg.SubgraphParams{
			{Hops: 1, MaxNodes: 0, HubDegree: 0},
			{Hops: 2, MaxNodes: 4000, HubDegree: 40},
			{Hops: 2, MaxNodes: 60, HubDegree: 40},
			{Hops: 3, MaxNodes: 150, HubDegree: 25},
			{Hops: 2, MaxNodes: 5, HubDegree: 0},
		} {
			for root := int32(0); root < int32(len(g.ents)); root++ {
				got, want := g.subgraph(root, p, false), g.refSubgraph(root, p)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d, %+v, root %s: subgraph differs from the plain rule:\n got %d nodes %d edges (truncated %v)\nwant %d nodes %d edges (truncated %v)",
						seed, p, g.ents[root].QID, len(got.Nodes), len(got.Edges), got.Truncated, len(want.Nodes), len(want.Edges), want.Truncated)
				}
				// The channel's neighbourhood: the same nodes, the walked
				// nodes' edges.
				walked := g.subgraph(root, p, true)
				want.Edges = kg.WalkedEdges(want, p)
				if !reflect.DeepEqual(walked, want) {
					t.Fatalf("seed %d, %+v, root %s: walked-edge subgraph has %d edges, want %d", seed, p, g.ents[root].QID, len(walked.Edges), len(want.Edges))
				}
			}
		}
	}
}

// The marks' epochs wrap around without a stale mark counting as held.
func TestSubgraphMarksWrap(t *testing.T) {
	g := randomGraph(4, 200, 900)
	p := kg.SubgraphParams{Hops: 2, MaxNodes: 4000, HubDegree: 30}
	m := g.takeMarks()
	m.epoch, m.hopEpoch = ^uint32(0)-1, ^uint32(0)-1
	g.marks.Put(m)
	for root := int32(0); root < 8; root++ {
		if got, want := g.subgraph(root, p, false), g.refSubgraph(root, p); !reflect.DeepEqual(got, want) {
			t.Fatalf("root %s after the epochs wrapped: %d nodes, want %d", g.ents[root].QID, len(got.Nodes), len(want.Nodes))
		}
	}
}

// A hub root's star is what it was with a map for the held entities.
func TestStarMatchesPlainRule(t *testing.T) {
	g := randomGraph(5, 300, 2000)
	for _, p := range []kg.SubgraphParams{{Hops: 2, MaxNodes: 4000, HubDegree: 30}, {Hops: 1, MaxNodes: 40, HubDegree: 30}} {
		hubs := 0
		for root := int32(0); root < int32(len(g.ents)); root++ {
			if !g.hub(root, p) {
				continue
			}
			hubs++
			if got, want := g.star(root, p), g.refStar(root, p); !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v, hub %s: star differs: %d nodes %d edges, want %d and %d", p, g.ents[root].QID, len(got.Nodes), len(got.Edges), len(want.Nodes), len(want.Edges))
			}
		}
		if hubs == 0 {
			t.Fatalf("%+v: the random graph has no hub to test", p)
		}
	}
}

// refStar is star as it was, with a map for the held entities (the edges
// are read alike).
func (g *Graph) refStar(root int32, p kg.SubgraphParams) kg.Subgraph {
	e := g.ents[root]
	sg := kg.Subgraph{Root: e.QID, Nodes: []kg.Node{{QID: e.QID, Label: e.Label, Hub: true}}}
	held := map[int32]bool{root: true}
	row := g.row(root)
	// The row is sorted by neighbour index, which is QID order.
	for _, h := range row {
		other, _, _ := halfEdge(h)
		if held[other] {
			continue
		}
		if p.MaxNodes > 0 && len(sg.Nodes) >= p.MaxNodes {
			sg.Truncated = true
			break
		}
		held[other] = true
		n := g.ents[other]
		sg.Nodes = append(sg.Nodes, kg.Node{QID: n.QID, Label: n.Label, Hop: 1, Hub: g.hub(other, p)})
	}
	sg.Edges = g.edges(starEdges(root, row, func(i int32) bool { return held[i] }))
	return sg
}
