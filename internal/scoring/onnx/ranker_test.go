package onnx_test

import (
	"math"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
)

const rankerModel = "../../../models/ranker/ranker.onnx"

// rankerFixture is ONNX Runtime's output for the committed ranker on fixed
// feature rows (models/evgate/check_onnx.py --output scores).
type rankerFixture struct {
	Features [][]float32 `json:"features"`
	Scores   [][]float64 `json:"scores"`
}

// refRanker is the reference forward pass of the ranker: one score a row.
func refRanker(t *testing.T, rows [][]float32) []float64 {
	t.Helper()
	out := make([]float64, len(rows))
	for k, o := range refStandardisedMLP(t, rankerModel, rows) {
		out[k] = o[0]
	}
	return out
}

func worstScoreDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// The pure-Go reference reproduces ONNX Runtime's output (computed in
// Python) on fixed rows; this needs no runtime library.
func TestRankerReferenceMatchesFixture(t *testing.T) {
	fx := readFixture[rankerFixture](t, "testdata/ranker_ort.json", rankerModel, "bash models/ranker/train.sh")
	want := make([]float64, len(fx.Scores))
	for i, s := range fx.Scores {
		want[i] = s[0]
	}
	if d := worstScoreDiff(refRanker(t, fx.Features), want); d > 1e-4 {
		t.Fatalf("reference vs onnxruntime fixture: max diff %.3g > 1e-4", d)
	}
}

// variedRank are ranker inputs spread over the features' ranges: text hits
// and graph documents, own pages, questions and claims.
func variedRank(n int) []scoring.RankInput {
	return cycledRows(n, func(i int, f float64) scoring.RankInput {
		return scoring.RankInput{
			Semantic: 0.3 + 0.5*f, ZSemantic: 3*f - 1.5, SemanticGap: -0.4 * (1 - f), Search1: f * float64(i%2), InvRank1: f / 2,
			Search2: f * float64(i%3) / 2, InvRank2: f / 3, Reached: i%2 == 0, Graph: 0.6 * f * float64((i+1)%2),
			PathRelevance: 0.5 * f * float64((i+1)%2), InvRank: f * float64((i+1)%2), TwoHop: i%4 == 0, Own: float64(i%5) / 4,
			ZStructural: 1 - 2*f, LinkConfMax: 0.5 + 0.5*f, Linked: i % 3, ChannelBestRel: 0.6 * f, ChannelDocs: i % 50,
			Agreement: f, TextBestSemantic: 0.5 + 0.3*f, OwnInvRank1: f, Question: i%3 != 0,
		}
	})
}

// The Go ORT ranker agrees with the reference to 1e-4, across more
// documents than one model call takes; its scores move with the inputs; it
// passes the port's conformance check.
func TestRankerMatchesReference(t *testing.T) {
	r := onnxtest.Open(t, onnx.NewRanker, rankerModel)
	docs := variedRank(onnx.MaxGateBatch + 5)
	got := matchesReference(t, "ranker", docs, r.Scores, refRanker, worstScoreDiff)
	if s := spread(got); s < 1e-2 {
		t.Errorf("scores spread %.4f over varied inputs", s)
	}
	if r.Encoder() != onnx.DefaultEncoderName {
		t.Errorf("the committed ranker records encoder %q, want %q", r.Encoder(), onnx.DefaultEncoderName)
	}
	scoringtest.Ranker(t, r, docs[:20])
}

// A feature-row model trained on other columns, or without the shapes, is
// refused.
func TestFeatureModelsRejectOtherModels(t *testing.T) {
	rt := onnxtest.Runtime(t)
	for _, tc := range []struct {
		name          string
		load          func(string) error
		otherFeatures string // the model trained on other feature names
		other         string // another committed model, with other features
	}{
		{"evidence gate", func(p string) error { _, err := onnx.NewEvidenceGate(rt, p); return err }, "testdata/evgate_otherfeatures.onnx", gateModel},
		{"ranker", func(p string) error { _, err := onnx.NewRanker(rt, p); return err }, "testdata/ranker_otherfeatures.onnx", evGateModel},
	} {
		if err := tc.load(tc.otherFeatures); err == nil || !strings.Contains(err.Error(), "trained on features") {
			t.Errorf("%s: a model with other feature names: %v", tc.name, err)
		}
		if err := tc.load(tc.other); err == nil || !strings.Contains(err.Error(), "features") {
			t.Errorf("%s: %s: %v", tc.name, tc.other, err)
		}
		if err := tc.load("testdata/missing.onnx"); err == nil {
			t.Errorf("%s: missing model: no error", tc.name)
		}
	}
}
