// Package graphfeattest gives the GNN's tests and benchmarks their input
// graphs: the committed fixture subgraphs, and the real CoDEx-M graph.
package graphfeattest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
)

// Fixture returns the fixed subgraphs of internal/scoring/gnnref/testdata
// (hand-made and real codexm-film ones; the last has 64 nodes), whose ONNX
// Runtime embeddings the reference tests pin.
func Fixture(tb testing.TB) []kg.Subgraph {
	tb.Helper()
	_, here, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "gnnref", "testdata", "graphs.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var gs []kg.Subgraph
	if err := json.Unmarshal(raw, &gs); err != nil {
		tb.Fatal(err)
	}
	return gs
}

// Codexm loads the real CoDEx-M graph from the shared data; it skips the
// test when the data is missing, and fails it under CI=true.
func Codexm(tb testing.TB) *memkg.Graph {
	tb.Helper()
	dir, err := datapath.Dataset("codexm")
	if err == nil {
		_, err = os.Stat(dir)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal(err)
		}
		tb.Skipf("real data missing (%v); see internal/datapath", err)
	}
	b, err := bundle.Read(context.Background(), dir)
	if err != nil {
		tb.Fatal(err)
	}
	return memkg.FromBundle(b)
}
