package onnx

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

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
	okIn, okOut := false, false
	for _, in := range ins {
		okIn = okIn || (in.Name == "features" && len(in.Dimensions) == 2 && in.Dimensions[1] == nf)
	}
	for _, o := range outs {
		okOut = okOut || (o.Name == "weights" && len(o.Dimensions) == 2 && o.Dimensions[1] == 2)
	}
	if !okIn || !okOut {
		return nil, fmt.Errorf("evidence gate: %s needs an input \"features\" [B,%d] and an output \"weights\" [B,2]", path, nf)
	}
	md, err := metadata(path, "evidence gate", "features", "encoder")
	if err != nil {
		return nil, err
	}
	g.encoder = md["encoder"]
	names, ok := md["features"]
	if !ok {
		return nil, fmt.Errorf("evidence gate: %s has no \"features\" metadata", path)
	}
	var got []string
	if err := json.Unmarshal([]byte(names), &got); err != nil {
		return nil, fmt.Errorf("evidence gate: features of %s: %w", path, err)
	}
	if !slices.Equal(got, scoring.EvidenceFeatures) {
		return nil, fmt.Errorf("evidence gate: %s was trained on features %v, this build computes %v", path, got, scoring.EvidenceFeatures)
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
