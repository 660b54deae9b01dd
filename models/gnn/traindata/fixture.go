package main

import (
	"encoding/json"
	"fmt"
	"github.com/dmar-kg/dmar/internal/npy"
	"os"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat"
)

// writeFixture featurises the subgraphs of a JSON file into dense x, adj_out,
// adj_in and mask .npy files, for checking the ONNX model with another runtime.
func writeFixture(path, out string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var gs []kg.Subgraph
	if err := json.Unmarshal(raw, &gs); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	n := graphfeat.DefaultN
	b, err := graphfeat.Featurize(gs, n)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		data  []float32
		shape []int
	}{
		{"x.npy", b.X, []int{b.B, n, graphfeat.F}},
		{"adj_out.npy", b.AdjOut, []int{b.B, n, n}},
		{"adj_in.npy", b.AdjIn, []int{b.B, n, n}},
		{"mask.npy", b.Mask, []int{b.B, n}},
	} {
		if err := npy.Write(filepath.Join(out, f.name), f.data, f.shape...); err != nil {
			return err
		}
	}
	return nil
}
