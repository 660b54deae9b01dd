package onnx_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/gnnref"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
)

const rankerModel = "../../../models/ranker/ranker.onnx"

// rankerFixture is ONNX Runtime's output for the committed ranker on fixed
// feature rows (models/evgate/check_onnx.py --output scores).
type rankerFixture struct {
	ModelSHA256 string      `json:"model_sha256"`
	Features    [][]float32 `json:"features"`
	Scores      [][]float64 `json:"scores"`
}

// refRanker is an independent float64 forward pass of the ranker from the
// ONNX file's initializers: standardise ((x - mu) / sd), the ReLU layers
// w0/b0, w1/b1, ..., the output layer (wout, bout).
func refRanker(t *testing.T, rows [][]float32) []float64 {
	t.Helper()
	model, err := os.ReadFile(rankerModel)
	if err != nil {
		t.Fatal(err)
	}
	w, err := gnnref.Initializers(model)
	if err != nil {
		t.Fatal(err)
	}
	mu, sd := w["mu"].Data, w["sd"].Data
	out := make([]float64, len(rows))
	for k, r := range rows {
		if len(r) != len(mu) {
			t.Fatalf("row of %d features, the model standardises %d", len(r), len(mu))
		}
		x := make([]float64, len(r))
		for i, v := range r {
			x[i] = (float64(v) - float64(mu[i])) / float64(sd[i])
		}
		for i := 0; ; i++ {
			W, ok := w[fmt.Sprintf("w%d", i)]
			if !ok {
				break
			}
			x = denseLayer(t, x, W, w[fmt.Sprintf("b%d", i)], true)
		}
		out[k] = denseLayer(t, x, w["wout"], w["bout"], false)[0]
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
	var fx rankerFixture
	readFixture(t, "testdata/ranker_ort.json", rankerModel, &fx, func() string { return fx.ModelSHA256 }, "bash models/ranker/train.sh")
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
	out := make([]scoring.RankInput, n)
	for i := range out {
		f := float64(i%17) / 16
		out[i] = scoring.RankInput{
			Semantic: 0.3 + 0.5*f, ZSemantic: 3*f - 1.5, SemanticGap: -0.4 * (1 - f), Search1: f * float64(i%2), InvRank1: f / 2,
			Search2: f * float64(i%3) / 2, InvRank2: f / 3, Reached: i%2 == 0, Graph: 0.6 * f * float64((i+1)%2),
			PathRelevance: 0.5 * f * float64((i+1)%2), InvRank: f * float64((i+1)%2), TwoHop: i%4 == 0, Own: float64(i%5) / 4,
			ZStructural: 1 - 2*f, LinkConfMax: 0.5 + 0.5*f, Linked: i % 3, ChannelBestRel: 0.6 * f, ChannelDocs: i % 50,
			Agreement: f, TextBestSemantic: 0.5 + 0.3*f, OwnInvRank1: f, Question: i%3 != 0,
		}
	}
	return out
}

// The Go ORT ranker agrees with the reference to 1e-4, across more
// documents than one model call takes; its scores move with the inputs; it
// passes the port's conformance check.
func TestRankerMatchesReference(t *testing.T) {
	rt := onnxtest.Runtime(t)
	r, err := onnx.NewRanker(rt, rankerModel)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	docs := variedRank(onnx.MaxGateBatch + 5)
	got, err := r.Scores(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]float32, len(docs))
	for i, d := range docs {
		rows[i] = d.Vector()
	}
	if d := worstScoreDiff(got, refRanker(t, rows)); d > 1e-4 {
		t.Fatalf("onnxruntime ranker vs reference: max diff %.3g > 1e-4", d)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range got {
		lo, hi = math.Min(lo, s), math.Max(hi, s)
	}
	if hi-lo < 1e-2 {
		t.Errorf("scores %.4f..%.4f over varied inputs", lo, hi)
	}
	if r.Encoder() != onnx.DefaultEncoderName {
		t.Errorf("the committed ranker records encoder %q, want %q", r.Encoder(), onnx.DefaultEncoderName)
	}
	scoringtest.Ranker(t, r, docs[:20])
}

// A model trained on other columns, or without the shapes, is refused.
func TestRankerRejectsOtherModels(t *testing.T) {
	rt := onnxtest.Runtime(t)
	if _, err := onnx.NewRanker(rt, "testdata/ranker_otherfeatures.onnx"); err == nil || !strings.Contains(err.Error(), "trained on features") {
		t.Errorf("a model with other feature names: %v", err)
	}
	if _, err := onnx.NewRanker(rt, evGateModel); err == nil || !strings.Contains(err.Error(), "features") {
		t.Errorf("the evidence gate as a ranker: %v", err)
	}
	if _, err := onnx.NewRanker(rt, "testdata/missing.onnx"); err == nil {
		t.Error("missing model: no error")
	}
}
