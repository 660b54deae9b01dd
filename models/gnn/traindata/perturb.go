package main

import (
	"math/rand/v2"

	"github.com/dmar-kg/dmar/internal/kg"
)

// pool is what perturbations draw new material from: the KG's entities and
// its statements' properties (so added edges follow the real PID frequencies).
type pool struct {
	ents []kg.Entity
	pids []string // one per statement
	hub  int
}

func clone(g kg.Subgraph) kg.Subgraph {
	c := g
	c.Nodes = append([]kg.Node(nil), g.Nodes...)
	c.Edges = append([]kg.Edge(nil), g.Edges...)
	return c
}

// dropNodes removes each non-root node with probability p, and its edges.
func dropNodes(g kg.Subgraph, p float64, r *rand.Rand) kg.Subgraph {
	keep := map[string]bool{}
	var nodes []kg.Node
	for _, n := range g.Nodes {
		if n.QID == g.Root || r.Float64() >= p {
			nodes = append(nodes, n)
			keep[n.QID] = true
		}
	}
	var edges []kg.Edge
	for _, e := range g.Edges {
		if keep[e.From] && keep[e.To] {
			edges = append(edges, e)
		}
	}
	g.Nodes, g.Edges = nodes, edges
	return g
}

// dropEdges removes each edge with probability p.
func dropEdges(g kg.Subgraph, p float64, r *rand.Rand) kg.Subgraph {
	var edges []kg.Edge
	for _, e := range g.Edges {
		if r.Float64() >= p {
			edges = append(edges, e)
		}
	}
	g.Edges = edges
	return g
}

// positive is the light perturbation: node drop and edge drop with p1.
func positive(g kg.Subgraph, p1 float64, r *rand.Rand) kg.Subgraph {
	return dropEdges(dropNodes(clone(g), p1, r), p1, r)
}

// positiveChanged is positive, but never identical to g: when the p1 drops
// removed nothing, one random edge goes (nodes and their hops stay). On small
// graphs p1 alone almost never changes anything.
func positiveChanged(g kg.Subgraph, p1 float64, r *rand.Rand) kg.Subgraph {
	p := positive(g, p1, r)
	if len(p.Nodes) == len(g.Nodes) && len(p.Edges) == len(g.Edges) && len(p.Edges) > 0 {
		i := r.IntN(len(p.Edges))
		p.Edges = append(p.Edges[:i:i], p.Edges[i+1:]...)
	}
	return p
}

// perturbHard deletes nodes and edges with p2, then adds about p2*|V| new KG
// entities (each tied to a present node by a random-PID edge) and p2*|E|
// random edges among the nodes.
func perturbHard(g kg.Subgraph, p2 float64, r *rand.Rand, pl *pool) kg.Subgraph {
	n0, e0 := len(g.Nodes), len(g.Edges)
	g = dropEdges(dropNodes(clone(g), p2, r), p2, r)
	have := g.NodeSet()
	addN := int(p2*float64(n0) + r.Float64())
	for k := 0; k < addN; k++ {
		e := pl.ents[r.IntN(len(pl.ents))]
		if _, dup := have[e.QID]; dup {
			continue
		}
		at := g.Nodes[r.IntN(len(g.Nodes))]
		have[e.QID] = struct{}{}
		g.Nodes = append(g.Nodes, kg.Node{QID: e.QID, Label: e.Label, Hop: at.Hop + 1, Hub: e.Degree > pl.hub})
		g.Edges = append(g.Edges, randomEdge(at.QID, e.QID, r, pl))
	}
	addE := int(p2*float64(e0) + r.Float64())
	for k := 0; k < addE && len(g.Nodes) > 1; k++ {
		a, b := r.IntN(len(g.Nodes)), r.IntN(len(g.Nodes))
		if a != b {
			g.Edges = append(g.Edges, randomEdge(g.Nodes[a].QID, g.Nodes[b].QID, r, pl))
		}
	}
	return g
}

// rewire keeps the node set and moves each edge with probability p2 to a
// random other pair of nodes (same PID, random direction): the same entities
// in another structure, as A->C->B is to A->B->C.
func rewire(g kg.Subgraph, p2 float64, r *rand.Rand) kg.Subgraph {
	g = clone(g)
	if len(g.Nodes) < 3 {
		return g
	}
	for i, e := range g.Edges {
		if r.Float64() >= p2 {
			continue
		}
		for try := 0; try < 8; try++ {
			a, b := g.Nodes[r.IntN(len(g.Nodes))].QID, g.Nodes[r.IntN(len(g.Nodes))].QID
			if a != b && !(a == e.From && b == e.To) {
				g.Edges[i].From, g.Edges[i].To = a, b
				break
			}
		}
	}
	return g
}

func randomEdge(a, b string, r *rand.Rand, pl *pool) kg.Edge {
	pid := pl.pids[r.IntN(len(pl.pids))]
	if r.IntN(2) == 0 {
		a, b = b, a
	}
	return kg.Edge{From: a, To: b, PID: pid}
}

// permute keeps the structure and moves entity identities: about p2 of the
// non-root nodes (at least two) swap their QIDs in a cycle, and edges follow
// the positions. A->B->C becomes A->C->B: the same entities, every binding
// between them changed.
func permute(g kg.Subgraph, p2 float64, r *rand.Rand) kg.Subgraph {
	g = clone(g)
	var pos []int
	for i, n := range g.Nodes {
		if n.QID != g.Root {
			pos = append(pos, i)
		}
	}
	if len(pos) < 2 {
		return g
	}
	r.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
	k := max(2, int(p2*float64(len(pos))+0.5))
	pos = pos[:min(k, len(pos))]
	old := append([]kg.Node(nil), g.Nodes...)
	rename := map[string]string{}
	for i, p := range pos {
		src := old[pos[(i+1)%len(pos)]]
		rename[old[p].QID] = src.QID
		g.Nodes[p].QID, g.Nodes[p].Label, g.Nodes[p].Hub = src.QID, src.Label, src.Hub
	}
	for i, e := range g.Edges {
		if q, ok := rename[e.From]; ok {
			g.Edges[i].From = q
		}
		if q, ok := rename[e.To]; ok {
			g.Edges[i].To = q
		}
	}
	return g
}

// walk is a small anchor: a random walk of up to steps new nodes from the
// root over g's edges (either direction), with every edge of g among the
// visited nodes; hops are re-measured from the root within it.
func walk(g kg.Subgraph, steps int, r *rand.Rand) kg.Subgraph {
	adj := map[string][]string{}
	for _, e := range g.Edges {
		adj[e.From] = append(adj[e.From], e.To)
		adj[e.To] = append(adj[e.To], e.From)
	}
	byQID := map[string]kg.Node{}
	for _, n := range g.Nodes {
		byQID[n.QID] = n
	}
	visited := map[string]bool{g.Root: true}
	order := []string{g.Root}
	cur := g.Root
	for s := 0; s < steps; s++ {
		var next []string
		for _, v := range adj[cur] {
			if !visited[v] {
				next = append(next, v)
			}
		}
		if len(next) == 0 {
			break
		}
		cur = next[r.IntN(len(next))]
		visited[cur] = true
		order = append(order, cur)
	}
	out := kg.Subgraph{Root: g.Root}
	for _, e := range g.Edges {
		if visited[e.From] && visited[e.To] {
			out.Edges = append(out.Edges, e)
		}
	}
	// BFS over the kept edges, either direction.
	hop := map[string]int{g.Root: 0}
	frontier := []string{g.Root}
	for len(frontier) > 0 {
		var nf []string
		for _, u := range frontier {
			for _, e := range out.Edges {
				for _, pair := range [][2]string{{e.From, e.To}, {e.To, e.From}} {
					if pair[0] == u {
						if _, seen := hop[pair[1]]; !seen {
							hop[pair[1]] = hop[u] + 1
							nf = append(nf, pair[1])
						}
					}
				}
			}
		}
		frontier = nf
	}
	for _, q := range order {
		n := byQID[q]
		n.Hop = hop[q]
		out.Nodes = append(out.Nodes, n)
	}
	return out
}
