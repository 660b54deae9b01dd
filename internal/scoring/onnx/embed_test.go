package onnx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

// With no texts, Embed reads one per line of its input.
func TestEmbedReadsLines(t *testing.T) {
	onnxtest.NeedFile(t, onnxtest.Config().LibPath, "the ONNX Runtime library")
	onnxtest.NeedFile(t, filepath.Join(onnxtest.EncoderDir(), "manifest.json"), "the sentence encoder")
	var out bytes.Buffer
	if err := onnx.Embed(context.Background(), onnxtest.Config(), onnxtest.EncoderDir(), 2, nil, strings.NewReader("a <b>\nsecond\n"), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"text":"a <b>","embedding":[`) {
		t.Fatalf("output:\n%s", out.String())
	}
	var o struct {
		Text      string
		Embedding []float32
	}
	if err := json.Unmarshal([]byte(lines[1]), &o); err != nil || o.Text != "second" || len(o.Embedding) == 0 {
		t.Fatalf("line 2 %q: %v", lines[1], err)
	}
}
