package graphfeat

import (
	"fmt"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat/graphfeattest"
)

// BenchmarkFeaturize measures the featurisation alone (64-node graphs), the
// part of the GNN's cost outside the model: the first map-based
// implementation ("first", the baseline, kept in equiv_test.go), Featurize
// (fresh buffers per call) and FeaturizeInto (a reused buffer, as the ONNX
// Runtime encoder calls it), on a synthetic graph and on the 64-node real
// codexm-film subgraph of the GNN fixtures, in one run:
//
//	go test -run '^$' -bench Featurize -benchmem ./internal/scoring/graphfeat/
func BenchmarkFeaturize(b *testing.B) {
	synth := kg.Subgraph{Root: "Q0"}
	for i := 0; i < DefaultN; i++ {
		synth.Nodes = append(synth.Nodes, kg.Node{QID: fmt.Sprintf("Q%d", i), Hop: min(i, 1)})
		if i > 0 {
			synth.Edges = append(synth.Edges, kg.Edge{From: "Q0", To: fmt.Sprintf("Q%d", i), PID: fmt.Sprintf("P%d", i%7)},
				kg.Edge{From: fmt.Sprintf("Q%d", i), To: fmt.Sprintf("Q%d", (i*5)%DefaultN), PID: "P31"})
		}
	}
	graphs := []struct {
		name string
		g    kg.Subgraph
	}{{"synthetic", synth}, {"real", fixtureBig(b)}}
	for _, gr := range graphs {
		for _, bs := range []int{1, 256} {
			gs := make([]kg.Subgraph, bs)
			for i := range gs {
				gs[i] = gr.g
			}
			run := func(name string, f func()) {
				b.Run(fmt.Sprintf("%s/%s/batch=%d", gr.name, name, bs), func(b *testing.B) {
					for b.Loop() {
						f()
					}
					b.ReportMetric(float64(bs*b.N)/b.Elapsed().Seconds(), "subgraphs/s")
				})
			}
			run("first", func() { oldFeaturize(gs, DefaultN) })
			run("Featurize", func() {
				if _, err := Featurize(gs, DefaultN); err != nil {
					b.Fatal(err)
				}
			})
			var buf Batch
			run("FeaturizeInto", func() {
				if err := FeaturizeInto(&buf, gs, DefaultN); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// fixtureBig is the 64-node real subgraph of the GNN test fixtures.
func fixtureBig(tb testing.TB) kg.Subgraph {
	gs := graphfeattest.Fixture(tb)
	big := gs[len(gs)-1]
	if len(big.Nodes) != DefaultN {
		tb.Fatalf("fixture's last graph has %d nodes, want %d", len(big.Nodes), DefaultN)
	}
	return big
}
