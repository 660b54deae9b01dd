package scoring

import (
	"context"
	"fmt"
)

// FixedGate gives every document the same weights: Semantic for the semantic
// path and 1-Semantic for the structural one. It is the method's fallback (docs/method.md) when
// no gate model is configured, and an ablation.
type FixedGate struct{ Semantic float64 }

var _ Gate = FixedGate{}

// Weights implements Gate.
func (f FixedGate) Weights(ctx context.Context, _ []float32, docs [][]float32) ([][2]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][2]float64, len(docs))
	for i := range out {
		out[i] = [2]float64{f.Semantic, 1 - f.Semantic}
	}
	return out, nil
}

// Version implements Gate.
func (f FixedGate) Version() string { return fmt.Sprintf("fixed-%.3f", f.Semantic) }
