package onnx_test

import (
	"context"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

const relPriorModel = "../../../models/relprior/relprior.onnx"

// The committed prior, on questions shaped like kgqa/train's, puts its
// mass on the relation they ask for, and its output is a distribution over
// its classes (at most 1: questions without a labelled neighbour carry none).
func TestRelPriorPicksTheAskedRelation(t *testing.T) {
	enc := testEncoder(t)
	p := onnxtest.Open(t, onnx.NewRelPrior, relPriorModel)
	for q, want := range map[string]pathrel.StepKey{
		"where was johann koerbecke born":            {PID: "P19"},
		"what kind of music does crimson glass play": {PID: "P136"},
		"what country is pedro alvar a citizen of":   {PID: "P27"},
	} {
		vs, err := enc.Encode(context.Background(), []string{q})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := p.Prior(context.Background(), vs[0])
		if err != nil {
			t.Fatal(err)
		}
		sum, above := 0.0, 0
		for k, v := range pr {
			if v < 0 || v > 1 {
				t.Fatalf("%q: prior %v of %v outside [0, 1]", q, v, k)
			}
			sum += v
			if v > pr[want] {
				above++
			}
		}
		if sum > 1+1e-4 || sum < 0.5 {
			t.Errorf("%q: the prior sums to %v, want at most 1 and most of it on labelled steps", q, sum)
		}
		// The prior is a soft neighbour vote: the asked relation must be
		// among its top three (it is a weak signal; docs/method.md).
		if above > 2 {
			t.Errorf("%q: %v has prior %.3f, below %d other steps", q, want, pr[want], above)
		}
	}
	if _, err := p.Prior(context.Background(), make([]float32, 7)); err == nil {
		t.Error("a 7-dimensional query vector was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Prior(ctx, make([]float32, 384)); err == nil {
		t.Error("a cancelled context was not honoured")
	}
	if _, err := onnx.NewRelPrior(onnxtest.Runtime(t), "../../../models/gate/gate.onnx"); err == nil {
		t.Error("the gate model was accepted as a relation prior")
	}
}
