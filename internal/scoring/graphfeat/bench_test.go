package graphfeat

import (
	"fmt"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

// BenchmarkFeaturize measures the featurisation alone (64-node graphs), the
// part of the GNN's cost outside the model.
func BenchmarkFeaturize(b *testing.B) {
	g := kg.Subgraph{Root: "Q0"}
	for i := 0; i < DefaultN; i++ {
		g.Nodes = append(g.Nodes, kg.Node{QID: fmt.Sprintf("Q%d", i), Hop: min(i, 1)})
		if i > 0 {
			g.Edges = append(g.Edges, kg.Edge{From: "Q0", To: fmt.Sprintf("Q%d", i), PID: fmt.Sprintf("P%d", i%7)})
			g.Edges = append(g.Edges, kg.Edge{From: fmt.Sprintf("Q%d", i), To: fmt.Sprintf("Q%d", (i*5)%DefaultN), PID: "P31"})
		}
	}
	for _, bs := range []int{1, 256} {
		gs := make([]kg.Subgraph, bs)
		for i := range gs {
			gs[i] = g
		}
		b.Run(fmt.Sprintf("batch=%d", bs), func(b *testing.B) {
			for b.Loop() {
				if _, err := Featurize(gs, DefaultN); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(bs*b.N)/b.Elapsed().Seconds(), "subgraphs/s")
		})
	}
}
