package onnx

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/dmar-kg/dmar/internal/scoring"
)

var _ scoring.Ranker = (*Ranker)(nil)

// RankerModelFile is the committed learned ranker's path inside the
// repository (models/ranker/train.py writes it).
const RankerModelFile = "models/ranker/ranker.onnx"

// RankerFileFor is the committed ranker trained with encoder's scores:
// RankerModelFile for the default encoder, models/ranker/ranker-NAME.onnx
// for another.
func RankerFileFor(encoder string) string {
	if encoder == "" || encoder == DefaultEncoderName {
		return RankerModelFile
	}
	return "models/ranker/ranker-" + encoder + ".onnx"
}

// Ranker is the learned ranker of the final pool run by ONNX Runtime:
// features [B,F] (scoring.RankInput.Vector rows) in, scores [B,1] out. The
// model's "features" metadata must name scoring.RankFeatures in order.
// Safe for concurrent use.
type Ranker struct {
	sess    *Session
	version string
	encoder string
}

// NewRanker loads the learned ranker model at path.
func NewRanker(rt *Runtime, path string) (*Ranker, error) {
	version, ins, outs, err := modelFile(path, "ranker", "ranker")
	if err != nil {
		return nil, err
	}
	nf := int64(len(scoring.RankFeatures))
	if !hasTensor(ins, "features", nf) || !hasTensor(outs, "scores", 1) {
		return nil, fmt.Errorf("ranker: %s needs an input \"features\" [B,%d] and an output \"scores\" [B,1]", path, nf)
	}
	enc, err := featuresOf(path, "ranker", scoring.RankFeatures)
	if err != nil {
		return nil, err
	}
	r := &Ranker{version: version, encoder: enc}
	if r.sess, err = rt.NewSession(path, []string{"features"}, []string{"scores"}); err != nil {
		return nil, fmt.Errorf("ranker: %w", err)
	}
	return r, nil
}

// hasTensor says one of ts is named name with shape [B, width].
func hasTensor(ts []ort.InputOutputInfo, name string, width int64) bool {
	for _, t := range ts {
		if t.Name == name && len(t.Dimensions) == 2 && t.Dimensions[1] == width {
			return true
		}
	}
	return false
}

// featuresOf checks that the model at path was trained on the columns want,
// in order (its "features" metadata), and returns the encoder it records.
func featuresOf(path, what string, want []string) (string, error) {
	md, err := metadata(path, what, "features", "encoder")
	if err != nil {
		return "", err
	}
	names, ok := md["features"]
	if !ok {
		return "", fmt.Errorf("%s: %s has no \"features\" metadata", what, path)
	}
	var got []string
	if err := json.Unmarshal([]byte(names), &got); err != nil {
		return "", fmt.Errorf("%s: features of %s: %w", what, path, err)
	}
	if !slices.Equal(got, want) {
		return "", fmt.Errorf("%s: %s was trained on features %v, this build computes %v", what, path, got, want)
	}
	return md["encoder"], nil
}

// Encoder is the registry name of the encoder whose scores the ranker was
// trained on ("" when the model does not record it).
func (r *Ranker) Encoder() string { return r.encoder }

// Version implements scoring.Ranker: "ranker-" and the start of the model
// file's SHA-256.
func (r *Ranker) Version() string { return r.version }

// Close frees the session.
func (r *Ranker) Close() error { return r.sess.Close() }

// Scores implements scoring.Ranker.
func (r *Ranker) Scores(ctx context.Context, docs []scoring.RankInput) ([]float64, error) {
	out := make([]float64, 0, len(docs))
	nf := len(scoring.RankFeatures)
	for lo := 0; lo < len(docs); lo += MaxGateBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		part := docs[lo:min(lo+MaxGateBatch, len(docs))]
		x := make([]float32, 0, len(part)*nf)
		for _, d := range part {
			x = append(x, d.Vector()...)
		}
		s, err := runScores(r.sess, x, len(part), nf)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

func runScores(sess *Session, x []float32, B, width int) ([]float64, error) {
	in, err := ort.NewTensor(ort.NewShape(int64(B), int64(width)), x)
	if err != nil {
		return nil, fmt.Errorf("ranker: input tensor: %w", err)
	}
	defer in.Destroy()
	outT, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(B), 1))
	if err != nil {
		return nil, fmt.Errorf("ranker: output tensor: %w", err)
	}
	defer outT.Destroy()
	if err := sess.Run([]ort.Value{in}, []ort.Value{outT}); err != nil {
		return nil, fmt.Errorf("ranker: %w", err)
	}
	flat := outT.GetData()
	if len(flat) != B {
		return nil, fmt.Errorf("ranker: output of unexpected size")
	}
	res := make([]float64, B)
	for i, v := range flat {
		res[i] = float64(v)
	}
	return res, nil
}
