package kg

import (
	"context"
	"fmt"
)

// The graph channel's neighbourhoods (docs/method.md, "Beyond the paper:
// graph recall"). The channel walks a query entity's neighbourhood whole,
// with hubs kept but never expanded. The subgraph rule never expands a hub
// root either, which would leave a hub query entity ("United States") with
// no neighbour at all; the channel walks such a root's one-hop star instead.

// NeighbourhoodReader is implemented by backends that extract the channel's
// neighbourhoods in one round trip (memkg, neo4jkg); for any other graph
// Neighbourhoods composes them from Subgraphs.
type NeighbourhoodReader interface {
	// Neighbourhoods is Neighbourhoods(ctx, g, roots, p) in one call, with
	// the error contract of Graph.Subgraphs.
	Neighbourhoods(ctx context.Context, roots []string, p SubgraphParams) (map[string]Subgraph, error)
}

// NeighbourhoodDegreeReader is implemented by backends that read, in the
// round trip of the channel's neighbourhoods, the degree of every entity in
// them (neo4jkg: its statement reads them anyway, for the hub rule), so that
// the channel's popularity term needs no Entities call of its own. The
// embedded graph answers Entities from memory and does not implement it.
type NeighbourhoodDegreeReader interface {
	// NeighbourhoodDegrees is Neighbourhoods(ctx, g, roots, p) and the
	// degree of every node of those neighbourhoods by QID (Entity.Degree),
	// in one call, with the error contract of Graph.Subgraphs.
	NeighbourhoodDegrees(ctx context.Context, roots []string, p SubgraphParams) (map[string]Subgraph, map[string]int, error)
}

// DegreeReader is implemented by backends that read entities' degrees
// alone (memkg: from memory, without copying the rest of each entity), for
// the graph channel's popularity term over thousands of reached entities.
type DegreeReader interface {
	// Degrees is Entity.Degree of each of qids the graph knows, by QID,
	// with the error contract of Graph.Entities.
	Degrees(ctx context.Context, qids []string) (map[string]int, error)
}

// NeighbourhoodsWithDegrees is Neighbourhoods and, when g is a
// NeighbourhoodDegreeReader, the degrees of their nodes from the same round
// trip; degrees is nil for another graph (the caller asks Entities for the
// ones it needs).
func NeighbourhoodsWithDegrees(ctx context.Context, g Graph, roots []string, p SubgraphParams) (subs map[string]Subgraph, degrees map[string]int, err error) {
	if dr, ok := g.(NeighbourhoodDegreeReader); ok {
		return dr.NeighbourhoodDegrees(ctx, roots, p)
	}
	subs, err = Neighbourhoods(ctx, g, roots, p)
	return subs, nil, err
}

// Neighbourhoods are the graph channel's neighbourhoods of roots on g:
// Subgraphs(roots, p) with only the edges that have an end at a walked node
// (Walked: a non-hub short of the last hop), the only ones a walk of p.Hops
// through non-hubs can take; except that a hub root (degree above
// p.HubDegree, p.Hops >= 1) gets its one-hop star: the root (hop 0, a hub),
// its neighbours (hop 1, in QID order, cut at p.MaxNodes with Truncated set,
// flagged as hubs by their degree) and every edge between the root and one
// of them, hub or not, sorted as in a subgraph; no edge between two
// neighbours, so no path goes on through a neighbour of a hub. Roots unknown
// to the graph are absent.
//
// The edge rule is what makes a two-hop neighbourhood cheap to read: most of
// its nodes are on the last hop, and the edges among them, most of the
// subgraph's, are on no walk (Neo4j read 69k relationships for 42k edges of 5
// roots before, about a quarter after).
//
// A backend that is a NeighbourhoodReader answers in one round trip; for
// another graph it takes a Subgraphs call, and when a root is a hub one more
// Subgraphs and one Entities call (its neighbours' degrees).
func Neighbourhoods(ctx context.Context, g Graph, roots []string, p SubgraphParams) (map[string]Subgraph, error) {
	if nr, ok := g.(NeighbourhoodReader); ok {
		return nr.Neighbourhoods(ctx, roots, p)
	}
	subs, err := g.Subgraphs(ctx, roots, p)
	if err != nil {
		return nil, err
	}
	var hubRoots []string
	for _, q := range roots {
		if sg, ok := subs[q]; ok && p.Hops >= 1 && len(sg.Nodes) > 0 && sg.Nodes[0].Hub {
			hubRoots = append(hubRoots, q)
		}
	}
	for q, sg := range subs {
		sg.Edges = WalkedEdges(sg, p)
		subs[q] = sg
	}
	if len(hubRoots) == 0 {
		return subs, nil
	}
	// HubDegree 0: nothing is a hub, so every edge of the root is read.
	stars, err := g.Subgraphs(ctx, hubRoots, SubgraphParams{Hops: 1, MaxNodes: p.MaxNodes})
	if err != nil {
		return nil, err
	}
	var nbrs []string
	for _, sg := range stars {
		for _, n := range sg.Nodes[1:] {
			nbrs = append(nbrs, n.QID)
		}
	}
	ents, err := g.Entities(ctx, nbrs)
	if err != nil {
		return nil, fmt.Errorf("degrees of the hub roots' neighbours: %w", err)
	}
	for q, sg := range stars {
		star := sg.Edges[:0:0]
		for _, e := range sg.Edges {
			if e.From == q || e.To == q {
				star = append(star, e)
			}
		}
		sg.Edges = star
		sg.Nodes[0].Hub = true
		for i := range sg.Nodes[1:] {
			n := &sg.Nodes[i+1]
			n.Hub = ents[n.QID].Degree > p.HubDegree
		}
		subs[q] = sg
	}
	return subs, nil
}

// Walked reports whether a walk of p.Hops from a subgraph's root goes on
// from n: a non-hub short of the last hop, the nodes the subgraph rule
// expands.
func Walked(n Node, p SubgraphParams) bool { return !n.Hub && n.Hop < p.Hops }

// WalkedEdges are sg's edges with an end at a walked node, in sg's order.
func WalkedEdges(sg Subgraph, p SubgraphParams) []Edge {
	walked := map[string]bool{}
	for _, n := range sg.Nodes {
		if Walked(n, p) {
			walked[n.QID] = true
		}
	}
	var out []Edge
	for _, e := range sg.Edges {
		if walked[e.From] || walked[e.To] {
			out = append(out, e)
		}
	}
	return out
}
