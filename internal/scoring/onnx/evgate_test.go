package onnx_test

import (
	"context"
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

// refEvGate is an independent float64 forward pass of the evidence gate
// from the ONNX file's initializers: standardise ((x - mu) / sd), an
// optional ReLU layer (w1, b1), the output layer (wout, bout), softmax.
func refEvGate(t *testing.T, rows [][]float32) [][2]float64 {
	t.Helper()
	model, err := os.ReadFile(evGateModel)
	if err != nil {
		t.Fatal(err)
	}
	w, err := gnnref.Initializers(model)
	if err != nil {
		t.Fatal(err)
	}
	mu, sd := w["mu"].Data, w["sd"].Data
	res := make([][2]float64, len(rows))
	for k, r := range rows {
		if len(r) != len(mu) {
			t.Fatalf("row of %d features, the model standardises %d", len(r), len(mu))
		}
		x := make([]float64, len(r))
		for i, v := range r {
			x[i] = (float64(v) - float64(mu[i])) / float64(sd[i])
		}
		if W1, ok := w["w1"]; ok {
			x = denseLayer(t, x, W1, w["b1"], true)
		}
		res[k] = softmax2(denseLayer(t, x, w["wout"], w["bout"], false))
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
	lo, hi := 1.0, 0.0
	for _, w := range got {
		lo, hi = math.Min(lo, w[0]), math.Max(hi, w[0])
	}
	if hi-lo < 1e-3 {
		t.Errorf("alpha is %.4f..%.4f over varied evidence", lo, hi)
	}
	scoringtest.EvidenceGate(t, g, docs[:20])
}

// A model trained on other columns, or without the shapes, is refused.
func TestEvidenceGateRejectsOtherModels(t *testing.T) {
	rt := onnxtest.Runtime(t)
	if _, err := onnx.NewEvidenceGate(rt, "testdata/evgate_otherfeatures.onnx"); err == nil || !strings.Contains(err.Error(), "trained on features") {
		t.Errorf("a model with other feature names: %v", err)
	}
	if _, err := onnx.NewEvidenceGate(rt, gateModel); err == nil || !strings.Contains(err.Error(), "features") {
		t.Errorf("the paper's gate as an evidence gate: %v", err)
	}
	if _, err := onnx.NewEvidenceGate(rt, "testdata/missing.onnx"); err == nil {
		t.Error("missing model: no error")
	}
}
