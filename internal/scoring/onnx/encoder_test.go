package onnx_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

func testEncoder(tb testing.TB, opts ...onnx.EncoderOption) *onnx.Encoder {
	tb.Helper()
	dir := onnx.DefaultEncoderDir()
	onnxtest.NeedFile(tb, filepath.Join(dir, "manifest.json"), "the sentence encoder")
	rt := onnxtest.Runtime(tb)
	e, err := onnx.NewEncoder(rt, dir, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// The published all-MiniLM-L6-v2 embedding of "hello".
func TestEncoderHelloMatchesPublishedReference(t *testing.T) {
	e := testEncoder(t)
	if e.Dim() != 384 {
		t.Fatalf("Dim() = %d, want 384", e.Dim())
	}
	v, err := e.Encode(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	got := v[0]
	want := map[int]float32{0: -0.06277175, 1: 0.054958846, 2: 0.052164856, 382: 0.051483486, 383: 0.0070921564}
	for i, w := range want {
		if d := math.Abs(float64(got[i] - w)); d > 1e-4 {
			t.Errorf("embedding[%d] = %.8f, want %.8f (|diff| %.2g > 1e-4)", i, got[i], w, d)
		}
	}
	t.Logf("hello: %v ... %v", got[:3], got[382:])
}
