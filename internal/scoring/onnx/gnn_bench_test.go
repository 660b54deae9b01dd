package onnx_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/gnnref"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat/graphfeattest"
)

// BenchmarkGNN reports subgraphs/s for 256 distinct real 64-node codexm
// subgraphs at batch 1, 64 and 256, in one run, ONNX Runtime beside the
// naive pure-Go float64 reference (gnnref):
//
//   - forward: the model alone on batches featurised beforehand
//     (GraphEncoder.Forward, in calls of at most MaxGNNBatch graphs, against
//     gnnref.Model.Forward);
//   - end-to-end: featurisation and model (GraphEncoder.EncodeGraphs against
//     graphfeat.Featurize then gnnref.Model.Forward).
//
// Each ORT line also reports x-reference, its rate over the reference line
// just before it. DMAR_ORT_THREADS sets ORT's threads (default: ORT's
// choice). scripts/bench/gnn.sh prints the figures as a table:
//
//	go test -run '^$' -bench GNN ./internal/scoring/onnx/
func BenchmarkGNN(b *testing.B) {
	g := testGNN(b)
	ref, err := gnnref.Load(gnnModel)
	if err != nil {
		b.Fatal(err)
	}
	graphs := realGraphs(b, 256, graphfeat.DefaultN)
	ctx := context.Background()
	for _, bs := range []int{1, 64, 256} {
		// The batches cycled through, raw and featurised beforehand.
		var raw [][]kg.Subgraph
		var feat []graphfeat.Batch
		for lo := 0; lo+bs <= len(graphs); lo += bs {
			fb, err := graphfeat.Featurize(graphs[lo:lo+bs], graphfeat.DefaultN)
			if err != nil {
				b.Fatal(err)
			}
			raw, feat = append(raw, graphs[lo:lo+bs]), append(feat, fb)
		}
		var refRate float64
		run := func(name string, ort bool, f func(i int) error) {
			b.Run(fmt.Sprintf("batch=%d/%s", bs, name), func(b *testing.B) {
				if err := f(0); err != nil { // warm-up
					b.Fatal(err)
				}
				b.ResetTimer()
				n := 0
				for i := 0; b.Loop(); i++ {
					if err := f(i); err != nil {
						b.Fatal(err)
					}
					n += bs
				}
				rate := float64(n) / b.Elapsed().Seconds()
				b.ReportMetric(rate, "subgraphs/s")
				if ort && refRate > 0 {
					b.ReportMetric(rate/refRate, "x-reference")
				} else {
					refRate = rate
				}
			})
		}
		run("forward/reference", false, func(i int) error {
			ref.Forward(feat[i%len(feat)])
			return nil
		})
		run("forward/ort", true, func(i int) error {
			_, err := g.Forward(feat[i%len(feat)])
			return err
		})
		run("end-to-end/reference", false, func(i int) error {
			fb, err := graphfeat.Featurize(raw[i%len(raw)], graphfeat.DefaultN)
			if err != nil {
				return err
			}
			ref.Forward(fb)
			return nil
		})
		run("end-to-end/ort", true, func(i int) error {
			_, err := g.EncodeGraphs(ctx, raw[i%len(raw)])
			return err
		})
	}
}

// realGraphs returns count distinct default (1-hop) codexm subgraphs that
// hold exactly n nodes, in entity order.
func realGraphs(tb testing.TB, count, n int) []kg.Subgraph {
	tb.Helper()
	kgraph := graphfeattest.Codexm(tb)
	var roots []string
	for _, e := range kgraph.AllEntities() {
		roots = append(roots, e.QID)
	}
	subs, err := kgraph.Subgraphs(context.Background(), roots, kg.SubgraphParams{Hops: 1, MaxNodes: n, HubDegree: 500})
	if err != nil {
		tb.Fatal(err)
	}
	var out []kg.Subgraph
	for _, r := range roots {
		if s := subs[r]; len(s.Nodes) == n && len(out) < count {
			out = append(out, s)
		}
	}
	if len(out) < count {
		tb.Fatalf("codexm has %d subgraphs of %d nodes, want %d", len(out), n, count)
	}
	return out
}
