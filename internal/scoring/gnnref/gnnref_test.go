package gnnref

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat/graphfeattest"
	"github.com/dmar-kg/dmar/internal/testfile"
)

const modelPath = "../../../models/gnn/gnn.onnx"

func load(t testing.TB) *Model {
	t.Helper()
	m, err := Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fixtureGraphs(t testing.TB) []kg.Subgraph { return graphfeattest.Fixture(t) }

// The committed ONNX model, run by ONNX Runtime (models/gnn/check_onnx.py
// wrote testdata/ort_embeddings.json), agrees with this reference on fixed
// inputs featurised here, so the ONNX graph computes what the reference says
// and the featurisation is the one the fixture was made with.
func TestReferenceMatchesONNXRuntimeFixture(t *testing.T) {
	raw := testfile.Read(t, "testdata/ort_embeddings.json")
	var fx struct {
		ModelSHA256 string      `json:"model_sha256"`
		Embeddings  [][]float64 `json:"embeddings"`
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	model := testfile.Read(t, modelPath)
	sum := sha256.Sum256(model)
	if got := hex.EncodeToString(sum[:]); got != fx.ModelSHA256 {
		t.Fatalf("fixture made for model %s, gnn.onnx is %s: rerun the fixture step of models/gnn/README.md", fx.ModelSHA256, got)
	}
	gs := fixtureGraphs(t)
	b, err := graphfeat.Featurize(gs, graphfeat.DefaultN)
	if err != nil {
		t.Fatal(err)
	}
	got := load(t).Forward(b)
	if len(got) != len(fx.Embeddings) {
		t.Fatalf("%d embeddings, fixture has %d", len(got), len(fx.Embeddings))
	}
	worst := 0.0
	for i := range got {
		if len(got[i]) != len(fx.Embeddings[i]) {
			t.Fatalf("graph %d: dim %d, fixture %d", i, len(got[i]), len(fx.Embeddings[i]))
		}
		for k := range got[i] {
			worst = math.Max(worst, math.Abs(got[i][k]-fx.Embeddings[i][k]))
		}
	}
	if worst > 1e-4 {
		t.Fatalf("reference and ONNX Runtime differ by %g (> 1e-4)", worst)
	}
	t.Logf("max |reference - onnxruntime| = %.2g over %d graphs", worst, len(got))
}

func TestLoadRejectsBadFiles(t *testing.T) {
	for name, data := range map[string][]byte{
		"not protobuf": []byte("\xff\xff\xff"),
		"no graph":     {},
	} {
		if _, err := Initializers(data); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := Load("testdata/graphs.json"); err == nil {
		t.Error("Load of a JSON file: want an error")
	}
}
