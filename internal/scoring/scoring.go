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

// Span is the bytes [Start, End) of a text.
type Span struct{ Start, End int }

// QuestionEncoder encodes a question once for both of its uses: the vector
// the index searches with and, from the same model call, the question in
// the relation encoder's space with any of its spans left out (the graph
// channel's masked question), so that a request runs one encoder call
// instead of one per encoder.
type QuestionEncoder interface {
	EncodeQuestion(ctx context.Context, q string) (EncodedQuestion, error)
}

// EncodedQuestion is one question encoded by a QuestionEncoder.
type EncodedQuestion interface {
	// Vector is the question's vector, as the encoder's Encode gives it.
	Vector() []float32
	// Relation is the question without leaveOut (spans of the question
	// as given) in the relation encoder's space; ok is false when this
	// encoding cannot give it (a span that cuts a word piece, nothing
	// left): then encode the masked text with the relation encoder.
	Relation(ctx context.Context, leaveOut []Span) (v []float32, ok bool, err error)
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
