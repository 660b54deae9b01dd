package onnx

import (
	"context"

	"github.com/dmar-kg/dmar/internal/scoring"
)

var _ scoring.Ranker = (*Ranker)(nil)

// RankerModelFile is the committed learned ranker's path inside the
// repository (models/ranker/train.py writes it).
const RankerModelFile = "models/ranker/ranker.onnx"

// RankerFileFor is the committed ranker trained with encoder's scores:
// RankerModelFile for the default encoder, models/ranker/ranker-NAME.onnx
// for another.
func RankerFileFor(encoder string) string { return committedFile(RankerModelFile, encoder) }

// Ranker is the learned ranker of the final pool run by ONNX Runtime:
// features [B,F] (scoring.RankInput.Vector rows) in, scores [B,1] out. The
// model's "features" metadata must name scoring.RankFeatures in order.
// Safe for concurrent use.
type Ranker struct{ trained }

// NewRanker loads the learned ranker model at path.
func NewRanker(rt *Runtime, path string) (*Ranker, error) {
	t, err := openFeatures(rt, path, "ranker", "ranker", scoring.RankFeatures, "scores", 1)
	if err != nil {
		return nil, err
	}
	return &Ranker{t}, nil
}

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
		s, err := run(r.sess, "ranker", x, len(part), nf, 1, func(flat []float32) []float64 {
			res := make([]float64, len(flat))
			for i, v := range flat {
				res[i] = float64(v)
			}
			return res
		})
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}
