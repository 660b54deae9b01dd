package onnx_test

import (
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
	Features [][]float32  `json:"features"`
	Weights  [][2]float64 `json:"weights"`
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
	fx := readFixture[evGateFixture](t, "testdata/evgate_ort.json", evGateModel, "bash models/evgate/train.sh")
	if d := worstDiff(refEvGate(t, fx.Features), fx.Weights); d > 1e-4 {
		t.Fatalf("reference vs onnxruntime fixture: max diff %.3g > 1e-4", d)
	}
}

// varied are evidence rows spread over the features' ranges: weak and
// strong links, reached and not, hubs and not.
func varied(n int) []scoring.Evidence {
	return cycledRows(n, func(i int, f float64) scoring.Evidence {
		return scoring.Evidence{
			ZSemantic: 3*f - 1.5, ZStructural: 1.5 - 3*f, Semantic: 0.2 + 0.5*f, Structural: f * float64(i%2),
			LinkConfMean: 0.9 + 0.1*f, LinkConfMin: 0.9 + 0.05*f, Linked: 1 + i%4, QueryHubShare: float64(i%3) / 2,
			PathRelevance: 0.6 * float64(i%2) * f, Reached: i%2 == 1, DocEntities: i % 5, DocHub: i%7 == 0,
			EntNonzeroShare: f,
		}
	})
}

// The Go ORT evidence gate agrees with the reference to 1e-4, across more
// documents than one model call takes; its weights move with the evidence;
// it passes the port's conformance check.
func TestEvidenceGateMatchesReference(t *testing.T) {
	g := onnxtest.Open(t, onnx.NewEvidenceGate, evGateModel)
	docs := varied(onnx.MaxGateBatch + 5)
	got := matchesReference(t, "evidence gate", docs, g.EvidenceWeights, refEvGate, worstDiff)
	if s := spread(alphas(got)); s < 1e-3 {
		t.Errorf("alpha spreads %.4f over varied evidence", s)
	}
	scoringtest.EvidenceGate(t, g, docs[:20])
}
