package onnx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/vec"
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

// dmar embed --encoder NAME follows the encoder to its folder beside the
// default's; --passage applies the passage prefix (e5: "passage: " instead
// of "query: "), and equals the passage view's vector.
func TestEmbedFlagsEncoderAndPassage(t *testing.T) {
	onnxtest.NeedFile(t, onnxtest.Config().LibPath, "the ONNX Runtime library")
	const name = "e5-small-v2-int8"
	dir := filepath.Join(onnxtest.CacheDir(), "models", name)
	onnxtest.NeedFile(t, filepath.Join(dir, "manifest.json"), "encoder "+name+" (DMAR_ENCODERS=all scripts/setup.sh)")
	embed := func(args ...string) []float32 {
		t.Helper()
		var f onnx.EmbedFlags
		fs := flag.NewFlagSet("embed", flag.ContinueOnError)
		f.Register(fs, onnxtest.Config(), onnx.DefaultEncoderName, filepath.Join(onnxtest.CacheDir(), "models", onnx.DefaultEncoderName), 1)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := f.Embed(context.Background(), fs.Args(), nil, &out); err != nil {
			t.Fatal(err)
		}
		var o struct{ Embedding []float32 }
		if err := json.Unmarshal(out.Bytes(), &o); err != nil || len(o.Embedding) != 384 {
			t.Fatalf("%s: %v", out.String(), err)
		}
		return o.Embedding
	}
	q := embed("--encoder", name, "Who directed Inception?")
	p := embed("--encoder", name, "--passage", "Who directed Inception?")
	e := registryEncoder(t, name, onnx.WithBatchSize(1))
	wq, err := e.Encode(context.Background(), []string{"Who directed Inception?"})
	if err != nil {
		t.Fatal(err)
	}
	wp, err := e.Passage().Encode(context.Background(), []string{"Who directed Inception?"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range q {
		if q[i] != wq[0][i] || p[i] != wp[0][i] {
			t.Fatalf("dim %d: query %v/%v, passage %v/%v", i, q[i], wq[0][i], p[i], wp[0][i])
		}
	}
	if vec.Cosine64(q, p) > 0.9999 {
		t.Error("--passage gave the query-side vector")
	}
}
