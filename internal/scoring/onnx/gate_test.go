package onnx_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/gnnref"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
	"github.com/dmar-kg/dmar/internal/testfile"
)

const gateModel = "../../../models/gate/gate.onnx"

// gateFixture is ONNX Runtime's output for the committed gate on fixed
// inputs (models/gate/check_onnx.py).
type gateFixture struct {
	Query   []float32    `json:"query"`
	Docs    [][]float32  `json:"docs"`
	Weights [][2]float64 `json:"weights"`
}

func loadGateFixture(t *testing.T) gateFixture {
	return readFixture[gateFixture](t, "testdata/gate_ort.json", gateModel, "bash models/gate/train.sh (step 3)")
}

// readFixture decodes the ONNX Runtime fixture file and fails when it was
// made for another version of model (its model_sha256; retrain says how to
// make it again).
func readFixture[F any](t *testing.T, file, model, retrain string) F {
	t.Helper()
	raw := testfile.Read(t, file)
	var fx F
	var made struct {
		ModelSHA256 string `json:"model_sha256"`
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &made); err != nil {
		t.Fatal(err)
	}
	m := testfile.Read(t, model)
	if sum := sha256.Sum256(m); hex.EncodeToString(sum[:]) != made.ModelSHA256 {
		t.Fatalf("%s was made for another %s: rerun %s", file, model, retrain)
	}
	return fx
}

// denseLayer is x W + b in float64 (W [in,out] row-major), optionally
// through a ReLU: the reference forward passes' one layer.
func denseLayer(t *testing.T, x []float64, W, b gnnref.Tensor, relu bool) []float64 {
	t.Helper()
	if len(W.Dims) != 2 || W.Dims[0] != len(x) || len(b.Data) != W.Dims[1] {
		t.Fatalf("layer: weights %v, bias %d, input %d", W.Dims, len(b.Data), len(x))
	}
	out := make([]float64, W.Dims[1])
	for j := range out {
		s := float64(b.Data[j])
		for i, xi := range x {
			s += xi * float64(W.Data[i*W.Dims[1]+j])
		}
		if relu && s < 0 {
			s = 0
		}
		out[j] = s
	}
	return out
}

// softmax2 is the softmax of two logits.
func softmax2(l []float64) [2]float64 {
	m := math.Max(l[0], l[1])
	e0, e1 := math.Exp(l[0]-m), math.Exp(l[1]-m)
	return [2]float64{e0 / (e0 + e1), e1 / (e0 + e1)}
}

// refGate is an independent float64 forward pass of the gate MLP
// (768 -> 32 -> ReLU -> 32 -> ReLU -> 2, softmax) from the ONNX file's
// initializers, read without any ML framework.
func refGate(t *testing.T, query []float32, docs [][]float32) [][2]float64 {
	t.Helper()
	w := initializers(t, gateModel)
	dense := func(x []float64, name string, relu bool) []float64 {
		return denseLayer(t, x, w["w"+name], w["b"+name], relu)
	}
	res := make([][2]float64, len(docs))
	for k, d := range docs {
		x := make([]float64, 0, len(query)+len(d))
		for _, v := range append(append([]float32(nil), query...), d...) {
			x = append(x, float64(v))
		}
		res[k] = softmax2(dense(dense(dense(x, "1", true), "2", true), "3", false))
	}
	return res
}

// cycledRows are n rows made by row from their index i and f, which cycles
// over [0, 1] in 17 steps, so that rows spread over the features' ranges.
func cycledRows[T any](n int, row func(i int, f float64) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = row(i, float64(i%17)/16)
	}
	return out
}

// matchesReference runs a feature-row model (what) on docs and fails unless
// its outputs are within 1e-4 of the reference forward pass's on the same
// rows (diff: the largest difference); it returns the model's.
func matchesReference[D interface{ Vector() []float32 }, O any](t *testing.T, what string, docs []D,
	run func(context.Context, []D) ([]O, error), ref func(*testing.T, [][]float32) []O, diff func(a, b []O) float64) []O {
	t.Helper()
	got, err := run(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]float32, len(docs))
	for i, d := range docs {
		rows[i] = d.Vector()
	}
	if d := diff(got, ref(t, rows)); d > 1e-4 {
		t.Fatalf("onnxruntime %s vs reference: max diff %.3g > 1e-4", what, d)
	}
	return got
}

// initializers reads the weights of the ONNX file model.
func initializers(t *testing.T, model string) map[string]gnnref.Tensor {
	t.Helper()
	raw := testfile.Read(t, model)
	w, err := gnnref.Initializers(raw)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// refStandardisedMLP is an independent float64 forward pass, from the ONNX
// file's initializers, of the feature-row models (the evidence gate and the
// ranker): standardise ((x - mu) / sd), the ReLU layers w0/b0, w1/b1, ...
// present, the output layer (wout, bout). It returns each row's outputs.
func refStandardisedMLP(t *testing.T, model string, rows [][]float32) [][]float64 {
	t.Helper()
	w := initializers(t, model)
	mu, sd := w["mu"].Data, w["sd"].Data
	out := make([][]float64, len(rows))
	for k, r := range rows {
		if len(r) != len(mu) {
			t.Fatalf("row of %d features, the model standardises %d", len(r), len(mu))
		}
		x := make([]float64, len(r))
		for i, v := range r {
			x[i] = (float64(v) - float64(mu[i])) / float64(sd[i])
		}
		for i := 0; i < 10; i++ {
			if W, ok := w[fmt.Sprintf("w%d", i)]; ok {
				x = denseLayer(t, x, W, w[fmt.Sprintf("b%d", i)], true)
			}
		}
		out[k] = denseLayer(t, x, w["wout"], w["bout"], false)
	}
	return out
}

// spread is the range (max - min) of xs.
func spread(xs []float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return hi - lo
}

// alphas are the first weights (alpha) of ws.
func alphas(ws [][2]float64) []float64 {
	a := make([]float64, len(ws))
	for i, w := range ws {
		a[i] = w[0]
	}
	return a
}

func worstDiff(a, b [][2]float64) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Max(math.Abs(a[i][0]-b[i][0]), math.Abs(a[i][1]-b[i][1])))
	}
	return m
}

// The pure-Go reference reproduces ONNX Runtime's output (computed in
// Python) on fixed inputs; this needs no runtime library.
func TestGateReferenceMatchesFixture(t *testing.T) {
	fx := loadGateFixture(t)
	ref := refGate(t, fx.Query, fx.Docs)
	if d := worstDiff(ref, fx.Weights); d > 1e-4 {
		t.Fatalf("reference vs onnxruntime fixture: max diff %.3g > 1e-4", d)
	}
}

// The Go ORT gate agrees with the reference to 1e-4, across more documents
// than one model call takes, and passes the scoring conformance check.
func TestGateMatchesReference(t *testing.T) {
	g := onnxtest.Open(t, onnx.NewGate, gateModel)
	fx := loadGateFixture(t)
	var docs [][]float32
	for i := 0; i < onnx.MaxGateBatch+5; i++ {
		docs = append(docs, fx.Docs[i%len(fx.Docs)])
	}
	got, err := g.Weights(context.Background(), fx.Query, docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(docs) {
		t.Fatalf("%d weights for %d documents", len(got), len(docs))
	}
	ref := refGate(t, fx.Query, docs)
	if d := worstDiff(got, ref); d > 1e-4 {
		t.Fatalf("onnxruntime gate vs reference: max diff %.3g > 1e-4", d)
	}
	scoringtest.Gate(t, g, fx.Query, fx.Docs)
	// The gate is trained, not constant: inputs move the weights.
	if s := spread(alphas(got[:len(fx.Docs)])); s < 1e-4 {
		t.Errorf("alpha spreads %.6f over the inputs", s)
	}
}

func TestGateRejectsBadInput(t *testing.T) {
	rt := onnxtest.Runtime(t)
	g := onnxtest.Open(t, onnx.NewGate, gateModel)
	q := make([]float32, g.Dim())
	for _, tc := range []struct {
		name  string
		query []float32
		docs  [][]float32
	}{
		{"short query", q[:10], [][]float32{q}},
		{"short document", q, [][]float32{q, q[:3]}},
	} {
		if _, err := g.Weights(context.Background(), tc.query, tc.docs); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := onnx.NewGate(rt, "testdata/missing.onnx"); err == nil {
		t.Error("missing model: no error")
	}
	if _, err := onnx.NewGate(rt, "testdata/affine.onnx"); err == nil {
		t.Error("a model without input x [B,2d]: no error")
	}
}
