package onnx

import (
	"context"
	"fmt"

	"github.com/dmar-kg/dmar/internal/scoring"
)

var _ scoring.EvidenceGate = (*EvidenceGate)(nil)

// EvidenceGateModelFile is the committed evidence-aware gate's path inside
// the repository (models/evgate/train.py writes it).
const EvidenceGateModelFile = "models/evgate/evgate.onnx"

// EvidenceGateFileFor is the committed evidence gate trained with encoder's
// scores: EvidenceGateModelFile for the default encoder,
// models/evgate/evgate-NAME.onnx for another.
func EvidenceGateFileFor(encoder string) string {
	if encoder == "" || encoder == DefaultEncoderName {
		return EvidenceGateModelFile
	}
	return "models/evgate/evgate-" + encoder + ".onnx"
}

// EvidenceGate is the evidence-aware gate run by ONNX Runtime: features
// [B,F] (scoring.Evidence.Vector rows) in, weights [B,2] ([alpha, beta]) out.
// The model's "features" metadata must name scoring.EvidenceFeatures in
// order, so that a model trained on other columns is refused at start-up
// rather than fed the wrong ones. Safe for concurrent use.
type EvidenceGate struct {
	sess    *Session
	version string
	encoder string // the registry name of the encoder whose scores it was trained on ("" unrecorded)
}

// NewEvidenceGate loads the evidence-aware gate model at path.
func NewEvidenceGate(rt *Runtime, path string) (*EvidenceGate, error) {
	version, ins, outs, err := modelFile(path, "evidence gate", "evgate")
	if err != nil {
		return nil, err
	}
	g := &EvidenceGate{version: version}
	nf := int64(len(scoring.EvidenceFeatures))
	if !hasTensor(ins, "features", nf) || !hasTensor(outs, "weights", 2) {
		return nil, fmt.Errorf("evidence gate: %s needs an input \"features\" [B,%d] and an output \"weights\" [B,2]", path, nf)
	}
	if g.encoder, err = featuresOf(path, "evidence gate", scoring.EvidenceFeatures); err != nil {
		return nil, err
	}
	if g.sess, err = rt.NewSession(path, []string{"features"}, []string{"weights"}); err != nil {
		return nil, fmt.Errorf("evidence gate: %w", err)
	}
	return g, nil
}

// Encoder is the registry name of the encoder whose scores the gate was
// trained on ("" when the model does not record it).
func (g *EvidenceGate) Encoder() string { return g.encoder }

// Version implements scoring.EvidenceGate: "evgate-" and the start of the
// model file's SHA-256.
func (g *EvidenceGate) Version() string { return g.version }

// Close frees the session.
func (g *EvidenceGate) Close() error { return g.sess.Close() }

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
