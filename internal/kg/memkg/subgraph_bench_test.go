package memkg_test

import (
	"math/rand/v2"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
)

// BenchmarkSubgraph compares the walk with the plain rule (refSubgraph) on
// codexm, side by side: the graph channel's two-hop neighbourhoods and the
// structural stage's subgraphs, from 64 seeded roots per op.
//
//	go test -run '^$' -bench BenchmarkSubgraph ./internal/kg/memkg/
func BenchmarkSubgraph(b *testing.B) {
	if _, err := datapath.Root(); err != nil {
		b.Skip(err)
	}
	g, _ := load(b, "codexm")
	rng := rand.New(rand.NewPCG(1, 2))
	roots := make([]int32, 64)
	for i := range roots {
		roots[i] = int32(rng.IntN(len(g.AllEntities())))
	}
	for _, shape := range []struct {
		name string
		p    kg.SubgraphParams
	}{
		{"channel", kg.SubgraphParams{Hops: 2, MaxNodes: 4000, HubDegree: kg.DefaultSubgraphParams().HubDegree}},
		{"structural", kg.DefaultSubgraphParams()},
	} {
		for _, impl := range []struct {
			name string
			f    func(int32, kg.SubgraphParams) kg.Subgraph
		}{
			{"walk", func(r int32, p kg.SubgraphParams) kg.Subgraph { return g.SubgraphAt(r, p, false) }},
			{"walked-edges", func(r int32, p kg.SubgraphParams) kg.Subgraph { return g.SubgraphAt(r, p, true) }},
			{"plain", g.RefSubgraphAt},
		} {
			b.Run(shape.name+"/"+impl.name, func(b *testing.B) {
				for b.Loop() {
					for _, r := range roots {
						if g.IsHub(r, shape.p) {
							continue
						}
						impl.f(r, shape.p)
					}
				}
			})
		}
	}
}
