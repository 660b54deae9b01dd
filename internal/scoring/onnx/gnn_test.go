package onnx_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/gnnref"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

const gnnModel = "../../../models/gnn/gnn.onnx"

func testGNN(tb testing.TB) *onnx.GraphEncoder {
	tb.Helper()
	rt := onnxtest.Runtime(tb)
	g, err := onnx.NewGraphEncoder(rt, gnnModel)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.Close() })
	return g
}

// fixtureGraphs are hand-made and real (codexm-film) subgraphs, the largest
// last (64 nodes).
func fixtureGraphs(tb testing.TB) []kg.Subgraph {
	tb.Helper()
	raw, err := os.ReadFile("../gnnref/testdata/graphs.json")
	if err != nil {
		tb.Fatal(err)
	}
	var gs []kg.Subgraph
	if err := json.Unmarshal(raw, &gs); err != nil {
		tb.Fatal(err)
	}
	return gs
}

// The committed GNN run by ONNX Runtime agrees with the pure-Go float64
// reference to 1e-4, through chunking (more than MaxGNNBatch graphs) and
// size-sorted padding, in input order.
func TestGraphEncoderMatchesReference(t *testing.T) {
	g := testGNN(t)
	ref, err := gnnref.Load(gnnModel)
	if err != nil {
		t.Fatal(err)
	}
	fx := fixtureGraphs(t)
	var gs []kg.Subgraph
	for i := 0; i < onnx.MaxGNNBatch+37; i++ {
		gs = append(gs, fx[(i*7)%len(fx)])
	}
	got, err := g.EncodeGraphs(context.Background(), gs)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := graphfeat.Featurize(gs, graphfeat.DefaultN)
	want := ref.Forward(b)
	worst := 0.0
	for i := range want {
		if len(got[i]) != g.Dim() || len(want[i]) != g.Dim() {
			t.Fatalf("graph %d: dims %d and %d, want %d", i, len(got[i]), len(want[i]), g.Dim())
		}
		for k := range want[i] {
			worst = math.Max(worst, math.Abs(float64(got[i][k])-want[i][k]))
		}
	}
	if worst > 1e-4 {
		t.Fatalf("ONNX Runtime and reference differ by %g (> 1e-4)", worst)
	}
	t.Logf("%d graphs, max |ort - reference| = %.2g", len(gs), worst)
	if empty, err := g.EncodeGraphs(context.Background(), nil); err != nil || len(empty) != 0 {
		t.Fatalf("EncodeGraphs(nil) = %v, %v", empty, err)
	}
}

// BenchmarkGNN reports subgraphs/s for 64-node subgraphs at batch 1, 64 and
// 256, ONNX Runtime beside the pure-Go float64 reference, in one run:
//
//	go test -run '^$' -bench GNN ./internal/scoring/onnx/
func BenchmarkGNN(b *testing.B) {
	g := testGNN(b)
	ref, err := gnnref.Load(gnnModel)
	if err != nil {
		b.Fatal(err)
	}
	fx := fixtureGraphs(b)
	big := fx[len(fx)-1]
	if len(big.Nodes) < graphfeat.DefaultN {
		b.Fatalf("fixture's last graph has %d nodes, want %d", len(big.Nodes), graphfeat.DefaultN)
	}
	ctx := context.Background()
	for _, bs := range []int{1, 64, 256} {
		batch := make([]kg.Subgraph, bs)
		for i := range batch {
			batch[i] = big
		}
		b.Run(fmt.Sprintf("ort/batch=%d", bs), func(b *testing.B) {
			if _, err := g.EncodeGraphs(ctx, batch); err != nil { // warm-up
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := g.EncodeGraphs(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(bs*b.N)/b.Elapsed().Seconds(), "subgraphs/s")
		})
		b.Run(fmt.Sprintf("reference/batch=%d", bs), func(b *testing.B) {
			for b.Loop() {
				fb, _ := graphfeat.Featurize(batch, graphfeat.DefaultN)
				ref.Forward(fb)
			}
			b.ReportMetric(float64(bs*b.N)/b.Elapsed().Seconds(), "subgraphs/s")
		})
	}
}
