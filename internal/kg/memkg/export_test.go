package memkg

import "github.com/dmar-kg/dmar/internal/kg"

// What the external benchmark (subgraph_bench_test.go) reaches inside a
// Graph: the hub rule and the walks, by entity index (0 to the number of
// entities, in AllEntities' order).

// IsHub is the hub rule.
func (g *Graph) IsHub(i int32, p kg.SubgraphParams) bool { return g.hub(i, p) }

// SubgraphAt is the walk.
func (g *Graph) SubgraphAt(root int32, p kg.SubgraphParams, walkedOnly bool) kg.Subgraph {
	return g.subgraph(root, p, walkedOnly)
}

// RefSubgraphAt is the plain rule of subgraph_test.go.
func (g *Graph) RefSubgraphAt(root int32, p kg.SubgraphParams) kg.Subgraph {
	return g.refSubgraph(root, p)
}
