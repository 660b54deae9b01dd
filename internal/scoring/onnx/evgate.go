package onnx

import (
	"context"

	"github.com/dmar-kg/dmar/internal/scoring"
)

var _ scoring.EvidenceGate = (*EvidenceGate)(nil)

// EvidenceGateModelFile is the committed evidence-aware gate's path inside
// the repository (models/evgate/train.py writes it).
const EvidenceGateModelFile = "models/evgate/evgate.onnx"

// EvidenceGateFileFor is the committed evidence gate trained with encoder's
// scores: EvidenceGateModelFile for the default encoder,
// models/evgate/evgate-NAME.onnx for another.
func EvidenceGateFileFor(encoder string) string { return committedFile(EvidenceGateModelFile, encoder) }

// EvidenceGate is the evidence-aware gate run by ONNX Runtime: features
// [B,F] (scoring.Evidence.Vector rows) in, weights [B,2] ([alpha, beta]) out.
// The model's "features" metadata must name scoring.EvidenceFeatures in
// order. Safe for concurrent use.
type EvidenceGate struct{ trained }

// NewEvidenceGate loads the evidence-aware gate model at path.
func NewEvidenceGate(rt *Runtime, path string) (*EvidenceGate, error) {
	t, err := openFeatures(rt, path, "evidence gate", "evgate", scoring.EvidenceFeatures, "weights", 2)
	if err != nil {
		return nil, err
	}
	return &EvidenceGate{t}, nil
}

// EvidenceWeights implements scoring.EvidenceGate.
func (g *EvidenceGate) EvidenceWeights(ctx context.Context, docs []scoring.Evidence) ([][2]float64, error) {
	out := make([][2]float64, 0, len(docs))
	for lo := 0; lo < len(docs); lo += MaxGateBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w, err := g.run(docs[lo:min(lo+MaxGateBatch, len(docs))])
		if err != nil {
			return nil, err
		}
		out = append(out, w...)
	}
	return out, nil
}

func (g *EvidenceGate) run(docs []scoring.Evidence) ([][2]float64, error) {
	B, nf := len(docs), len(scoring.EvidenceFeatures)
	if B == 0 {
		return nil, nil
	}
	x := make([]float32, 0, B*nf)
	for _, d := range docs {
		x = append(x, d.Vector()...)
	}
	return runWeights(g.sess, "evidence gate", x, B, nf)
}
