// Package scoring holds dmar's scoring: the model ports (sentence encoder,
// graph encoder, gate), the structural score with exact and Monte Carlo
// Shapley values, and z-normalisation. Model backends (the ONNX Runtime one)
// live in sibling packages and implement these ports.
package scoring

import (
	"context"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Encoder embeds texts (the semantic path). Vectors are L2-normalised, so a
// dot product is a cosine.
type Encoder interface {
	Encode(ctx context.Context, texts []string) ([][]float32, error)
	Dim() int
	// Version identifies the model, for caches and stored vectors.
	Version() string
}

// GraphEncoder embeds subgraphs (the Siamese GNN). Vectors are L2-normalised.
type GraphEncoder interface {
	EncodeGraphs(ctx context.Context, gs []kg.Subgraph) ([][]float32, error)
	Version() string
}

// Gate returns per-document fusion weights [semantic, structural], each pair
// summing to 1, from the query's and the documents' encoder vectors.
type Gate interface {
	Weights(ctx context.Context, query []float32, docs [][]float32) ([][2]float64, error)
	Version() string
}
