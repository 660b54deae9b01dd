package onnx_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/gnnref"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat/graphfeattest"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

const gnnModel = "../../../models/gnn/gnn.onnx"

func testGNN(tb testing.TB) *onnx.GraphEncoder {
	tb.Helper()
	return onnxtest.Open(tb, func(rt *onnx.Runtime, p string) (*onnx.GraphEncoder, error) { return onnx.NewGraphEncoder(rt, p) }, gnnModel)
}

// fixtureGraphs are hand-made and real (codexm-film) subgraphs, the largest
// last (64 nodes).
func fixtureGraphs(tb testing.TB) []kg.Subgraph { return graphfeattest.Fixture(tb) }

// cycled are n of the fixture graphs, every step-th in turn, round the
// list: more graphs than one model call takes, in mixed sizes.
func cycled(tb testing.TB, n, step int) []kg.Subgraph {
	fx := fixtureGraphs(tb)
	gs := make([]kg.Subgraph, n)
	for i := range gs {
		gs[i] = fx[(i*step)%len(fx)]
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
	gs := cycled(t, onnx.MaxGNNBatch+37, 7)
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

// Forward on a batch featurised by the caller gives what EncodeGraphs gives,
// through several model calls, and the vectors, which share one allocation, cannot grow into each other.
func TestGraphEncoderForward(t *testing.T) {
	g := testGNN(t)
	gs := cycled(t, onnx.MaxGNNBatch+5, 5) // more than one model call
	want, err := g.EncodeGraphs(context.Background(), gs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := graphfeat.Featurize(gs, graphfeat.DefaultN)
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Forward(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		for k := range want[i] {
			if d := math.Abs(float64(got[i][k] - want[i][k])); d > 1e-5 {
				t.Fatalf("graph %d: Forward and EncodeGraphs differ by %g at %d", i, d, k)
			}
		}
	}
	keep := want[1][0]
	_ = append(want[0], 42)
	if want[1][0] != keep {
		t.Fatal("appending to one vector overwrote the next")
	}
	b.Mask = b.Mask[:1]
	if _, err := g.Forward(b); err == nil {
		t.Fatal("Forward with a short mask: want an error")
	}
	if empty, err := g.Forward(graphfeat.Batch{N: 4}); err != nil || len(empty) != 0 {
		t.Fatalf("Forward(empty batch) = %v, %v", empty, err)
	}
}

// Concurrent EncodeGraphs calls share the encoder's pooled buffers safely
// (run with -race) and give what one call gives.
func TestGraphEncoderConcurrent(t *testing.T) {
	g := testGNN(t)
	gs := cycled(t, onnx.MaxGNNBatch+3, 3)
	want, err := g.EncodeGraphs(context.Background(), gs)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func() {
			for r := 0; r < 5; r++ {
				got, err := g.EncodeGraphs(context.Background(), gs[w:])
				if err != nil {
					errc <- err
					return
				}
				for i := range got {
					for k := range got[i] {
						// Chunks differ (gs[w:]), so padding and float
						// rounding may too.
						if math.Abs(float64(got[i][k]-want[w+i][k])) > 1e-5 {
							errc <- fmt.Errorf("worker %d graph %d: %v, want %v", w, w+i, got[i][k], want[w+i][k])
							return
						}
					}
				}
			}
			errc <- nil
		}()
	}
	for w := 0; w < 4; w++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// A cancelled context stops a request of several chunks with its error.
func TestGraphEncoderCancelled(t *testing.T) {
	g := testGNN(t)
	fx := fixtureGraphs(t)
	gs := make([]kg.Subgraph, 3*onnx.MaxGNNBatch)
	for i := range gs {
		gs[i] = fx[i%len(fx)]
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.EncodeGraphs(ctx, gs); !errors.Is(err, context.Canceled) {
		t.Fatalf("EncodeGraphs with a cancelled context: %v, want context.Canceled", err)
	}
}
