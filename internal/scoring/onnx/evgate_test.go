package onnx_test

import (
	"context"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
)

const evGateModel = "../../../models/evgate/evgate.onnx"

// evGateFixture is ONNX Runtime's output for the committed evidence gate on
// fixed feature rows (models/evgate/check_onnx.py).
type evGateFixture struct {
	ModelSHA256 string       `json:"model_sha256"`
	Features    [][]float32  `json:"features"`
	Weights     [][2]float64 `json:"weights"`
}

func loadEvGateFixture(t *testing.T) evGateFixture {
	t.Helper()
	var fx evGateFixture
	readFixture(t, "testdata/evgate_ort.json", evGateModel, &fx, func() string { return fx.ModelSHA256 }, "bash models/evgate/train.sh")
	return fx
}

// refEvGate is the reference forward pass of the evidence gate (an
// optional ReLU layer w1/b1), through softmax.
func refEvGate(t *testing.T, rows [][]float32) [][2]float64 {
	t.Helper()
	logits := refStandardisedMLP(t, evGateModel, rows)
	res := make([][2]float64, len(logits))
	for k, l := range logits {
		res[k] = softmax2(l)
	}
	return res
}

// The pure-Go reference reproduces ONNX Runtime's output (computed in
// Python) on fixed rows; this needs no runtime library.
func TestEvidenceGateReferenceMatchesFixture(t *testing.T) {
	fx := loadEvGateFixture(t)
	if d := worstDiff(refEvGate(t, fx.Features), fx.Weights); d > 1e-4 {
		t.Fatalf("reference vs onnxruntime fixture: max diff %.3g > 1e-4", d)
	}
}

// varied are evidence rows spread over the features' ranges: weak and
// strong links, reached and not, hubs and not.
func varied(n int) []scoring.Evidence {
	out := make([]scoring.Evidence, n)
	for i := range out {
		f := float64(i%17) / 16
		out[i] = scoring.Evidence{
			ZSemantic: 3*f - 1.5, ZStructural: 1.5 - 3*f, Semantic: 0.2 + 0.5*f, Structural: f * float64(i%2),
			LinkConfMean: 0.9 + 0.1*f, LinkConfMin: 0.9 + 0.05*f, Linked: 1 + i%4, QueryHubShare: float64(i%3) / 2,
			PathRelevance: 0.6 * float64(i%2) * f, Reached: i%2 == 1, DocEntities: i % 5, DocHub: i%7 == 0,
			EntNonzeroShare: f,
		}
	}
	return out
}

// The Go ORT evidence gate agrees with the reference to 1e-4, across more
// documents than one model call takes; its weights move with the evidence;
// it passes the port's conformance check.
func TestEvidenceGateMatchesReference(t *testing.T) {
	rt := onnxtest.Runtime(t)
	g, err := onnx.NewEvidenceGate(rt, evGateModel)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	docs := varied(onnx.MaxGateBatch + 5)
	got, err := g.EvidenceWeights(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]float32, len(docs))
	for i, d := range docs {
		rows[i] = d.Vector()
	}
	if d := worstDiff(got, refEvGate(t, rows)); d > 1e-4 {
		t.Fatalf("onnxruntime evidence gate vs reference: max diff %.3g > 1e-4", d)
	}
	if s := spread(alphas(got)); s < 1e-3 {
		t.Errorf("alpha spreads %.4f over varied evidence", s)
	}
	scoringtest.EvidenceGate(t, g, docs[:20])
}
