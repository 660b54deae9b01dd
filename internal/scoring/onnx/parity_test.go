package onnx_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

// testdata/minilm_reference.json holds embeddings computed once with
// sentence-transformers (models/encoder/reference_embeddings.py) for tricky
// hand-written inputs and real sentences from the shared data (kgqa
// questions, codexm titles and whole extracts, some past the 256-token
// limit, HotpotQA questions).
func TestEncoderMatchesSentenceTransformers(t *testing.T) {
	onnxtest.NeedFile(t, filepath.Join(onnxtest.MiniLMDir(), "manifest.json"), "the sentence encoder")
	var fix struct {
		Items []struct {
			onnxtest.Item
			Embedding []float32 `json:"embedding"`
		} `json:"items"`
	}
	onnxtest.ReadFixture(t, "testdata/minilm_reference.json", &fix)
	texts := onnxtest.TextsOf(t, fix.Items)
	// Batch sizes 1 and 7 put each text in different company and padding.
	for _, batch := range []int{7, 1} {
		e := testEncoder(t, onnx.WithBatchSize(batch))
		got, err := e.Encode(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i, it := range fix.Items {
			if len(got[i]) != len(it.Embedding) {
				t.Fatalf("%s: %d values, want %d", it.Label(), len(got[i]), len(it.Embedding))
			}
			for j, w := range it.Embedding {
				d := math.Abs(float64(got[i][j] - w))
				worst = max(worst, d)
				if d > 1e-4 {
					t.Errorf("batch %d, %s: [%d] = %.8f, want %.8f", batch, it.Label(), j, got[i][j], w)
					break
				}
			}
		}
		t.Logf("batch %d: %d texts, largest |difference| from sentence-transformers %.2g", batch, len(texts), worst)
	}
}
