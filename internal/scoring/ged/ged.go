// Package ged is the heuristic graph-edit-distance similarity of subgraphs,
// the ablation that replaces the Siamese GNN ("a heuristic GED approximation
// instead of the GNN").
//
// The approximation fixes the node correspondence by identity: a node of one
// subgraph maps to the node with the same QID in the other, and an edge
// matches only an edge with the same (From, PID, To). With unit costs for
// inserting and deleting nodes and edges, the edit distance under that one
// mapping is
//
//	ged = |V1 Δ V2| + |E1 Δ E2|
//
// which is an upper bound on the exact unit-cost GED (that minimises over all
// node mappings, an NP-hard problem); it is exact when the graphs' entities
// are the identities that matter, as in a KG. It is normalised by the cost of
// deleting one graph and inserting the other:
//
//	sim = 1 - ged / (|V1| + |V2| + |E1| + |E2|) = 2(|V1 ∩ V2| + |E1 ∩ E2|) / (|V1| + |V2| + |E1| + |E2|)
//
// so sim is in [0, 1], 1 for identical graphs and 0 for disjoint ones. Edge
// direction and relation type count, so A->B->C and A->C->B differ.
package ged

import (
	"context"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Similarity is the normalised edit similarity of two subgraphs; two empty
// graphs are identical (1).
func Similarity(a, b kg.Subgraph) float64 {
	return compile(a).sim(compile(b))
}

type edge struct{ from, pid, to string }

type sets struct {
	nodes map[string]struct{}
	edges map[edge]struct{}
}

func compile(g kg.Subgraph) sets {
	s := sets{nodes: g.NodeSet(), edges: make(map[edge]struct{}, len(g.Edges))}
	for _, e := range g.Edges {
		s.edges[edge{e.From, e.PID, e.To}] = struct{}{}
	}
	return s
}

func (s sets) sim(o sets) float64 {
	total := len(s.nodes) + len(o.nodes) + len(s.edges) + len(o.edges)
	if total == 0 {
		return 1
	}
	common := 0
	for n := range s.nodes {
		if _, ok := o.nodes[n]; ok {
			common++
		}
	}
	for e := range s.edges {
		if _, ok := o.edges[e]; ok {
			common++
		}
	}
	return 2 * float64(common) / float64(total)
}

// Matrix returns sim[i][j] = Similarity(qs[i], ds[j]): the pairwise
// similarities the structural score needs, in the role the GNN's cosines
// play. Each graph is compiled to sets once.
func Matrix(ctx context.Context, qs, ds []kg.Subgraph) ([][]float64, error) {
	dc := make([]sets, len(ds))
	for j, d := range ds {
		dc[j] = compile(d)
	}
	out := make([][]float64, len(qs))
	for i, q := range qs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		qc := compile(q)
		out[i] = make([]float64, len(ds))
		for j := range dc {
			out[i][j] = qc.sim(dc[j])
		}
	}
	return out, nil
}
