package onnx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/scoring"
)

var _ scoring.Gate = (*Gate)(nil)

// Gate model input and output (models/gate/train.py writes them): x is
// concat(enc(Q), enc(D)) [B,2d], weights the softmax [alpha, beta] [B,2].
var (
	gateInputs  = []string{"x"}
	gateOutputs = []string{"weights"}
)

// MaxGateBatch is the most documents one model call takes.
const MaxGateBatch = 1024

// GateModelFile is the committed gate's path inside the repository: the
// gate of the default encoder. Left at it, the configuration means the
// committed gate of the configured encoder (GateFileFor).
const GateModelFile = "models/gate/gate.onnx"

// GateFileFor is the committed gate trained on encoder's vectors:
// GateModelFile for the default encoder, models/gate/gate-NAME.onnx for
// another (models/gate/train.sh writes both).
func GateFileFor(encoder string) string { return committedFile(GateModelFile, encoder) }

// findUp returns rel under the first directory at or above the working
// directory that has it, else rel.
func findUp(rel string) string {
	dir, err := os.Getwd()
	if err != nil {
		return rel
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return rel
		}
		dir = parent
	}
}

// Gate is DMAR's trained gating network run by ONNX Runtime: one call per
// at most MaxGateBatch documents. Safe for concurrent use.
type Gate struct {
	trained
	dim int // encoder dimension d; the model takes 2d
}

// NewGate loads the gate model at path.
func NewGate(rt *Runtime, path string) (*Gate, error) {
	version, ins, outs, err := modelFile(path, "gate", "gate")
	if err != nil {
		return nil, err
	}
	g := &Gate{trained: trained{version: version}}
	for _, in := range ins {
		if in.Name == "x" && len(in.Dimensions) == 2 && in.Dimensions[1] > 0 && in.Dimensions[1]%2 == 0 {
			g.dim = int(in.Dimensions[1] / 2)
		}
	}
	if g.dim == 0 {
		return nil, fmt.Errorf("gate: %s has no input \"x\" of shape [B,2d]", path)
	}
	okOut := false
	for _, o := range outs {
		okOut = okOut || (o.Name == "weights" && len(o.Dimensions) == 2 && o.Dimensions[1] == 2)
	}
	if !okOut {
		return nil, fmt.Errorf("gate: %s has no output \"weights\" of shape [B,2]", path)
	}
	md, err := metadata(path, "gate", "encoder")
	if err != nil {
		return nil, err
	}
	g.encoder = md["encoder"]
	if g.sess, err = rt.NewSession(path, gateInputs, gateOutputs); err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	return g, nil
}

// Dim is the encoder dimension the gate expects for queries and documents.
func (g *Gate) Dim() int { return g.dim }

// Weights implements scoring.Gate.
func (g *Gate) Weights(ctx context.Context, query []float32, docs [][]float32) ([][2]float64, error) {
	if len(query) != g.dim {
		return nil, fmt.Errorf("gate: query vector has %d dimensions, the model takes %d", len(query), g.dim)
	}
	for i, d := range docs {
		if len(d) != g.dim {
			return nil, fmt.Errorf("gate: document %d's vector has %d dimensions, the model takes %d", i, len(d), g.dim)
		}
	}
	out := make([][2]float64, 0, len(docs))
	for lo := 0; lo < len(docs); lo += MaxGateBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w, err := g.run(query, docs[lo:min(lo+MaxGateBatch, len(docs))])
		if err != nil {
			return nil, err
		}
		out = append(out, w...)
	}
	return out, nil
}

func (g *Gate) run(query []float32, docs [][]float32) ([][2]float64, error) {
	B, w := len(docs), 2*g.dim
	x := make([]float32, B*w)
	for i, d := range docs {
		copy(x[i*w:], query)
		copy(x[i*w+g.dim:], d)
	}
	return runWeights(g.sess, "gate", x, B, w)
}

// runWeights runs a gate session on x [B,width] and returns its weights
// [B,2], each pair renormalised in float64 so that it sums to 1 exactly.
func runWeights(sess *Session, what string, x []float32, B, width int) ([][2]float64, error) {
	return run(sess, what, x, B, width, 2, func(flat []float32) [][2]float64 {
		res := make([][2]float64, B)
		for i := range res {
			a, b := float64(flat[2*i]), float64(flat[2*i+1])
			res[i] = [2]float64{a / (a + b), b / (a + b)}
		}
		return res
	})
}
