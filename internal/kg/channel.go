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

// Neighbourhoods are the graph channel's neighbourhoods of roots on g:
// Subgraphs(roots, p), except that a hub root (degree above p.HubDegree,
// p.Hops >= 1) gets its one-hop star: the root (hop 0, a hub), its
// neighbours (hop 1, in QID order, cut at p.MaxNodes with Truncated set,
// flagged as hubs by their degree) and every edge between the root and one
// of them, hub or not, sorted as in a subgraph; no edge between two
// neighbours, so no path goes on through a neighbour of a hub. Roots unknown
// to the graph are absent.
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
