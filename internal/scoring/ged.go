package scoring

import "github.com/dmar-kg/dmar/internal/kg"

// GEDSimilarity is the heuristic the paper's GNN replaces: an approximation
// of graph edit distance by the multiset differences of node identities and
// of typed edges, normalised by the size of the two graphs,
//
//	sim = 1 - (|N1 Δ N2| + |E1 Δ E2|) / (|N1| + |N2| + |E1| + |E2|)
//
// where edges are (from, pid, to) triples. It is exact for node/edge
// insertions and deletions and ignores substitutions, so it is an upper bound
// on the true edit distance's similarity. Used by the "ged" ablation.
func GEDSimilarity(a, b kg.Subgraph) float64 {
	total := len(a.Nodes) + len(b.Nodes) + len(a.Edges) + len(b.Edges)
	if total == 0 {
		return 1
	}
	nodes := map[string]int{}
	for _, n := range a.Nodes {
		nodes[n.QID]++
	}
	for _, n := range b.Nodes {
		nodes[n.QID]--
	}
	edges := map[kg.Edge]int{}
	for _, e := range a.Edges {
		edges[kg.Edge{From: e.From, To: e.To, PID: e.PID}]++
	}
	for _, e := range b.Edges {
		edges[kg.Edge{From: e.From, To: e.To, PID: e.PID}]--
	}
	diff := 0
	for _, c := range nodes {
		diff += abs(c)
	}
	for _, c := range edges {
		diff += abs(c)
	}
	return 1 - float64(diff)/float64(total)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
