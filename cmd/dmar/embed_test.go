package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

func TestEmbedPrintsOneJSONObjectPerText(t *testing.T) {
	onnxtest.NeedFile(t, onnxtest.Config().LibPath, "the ONNX Runtime library")
	onnxtest.NeedFile(t, filepath.Join(onnxtest.MiniLMDir(), "manifest.json"), "the sentence encoder")
	var out, errOut bytes.Buffer
	texts := []string{"hello", "Knowledge graphs & retrieval", "hello"}
	// all-MiniLM-L6-v2, whose published embedding of "hello" is known
	if err := Run(context.Background(), append([]string{"embed", "--encoder", "all-MiniLM-L6-v2", "--batch", "2"}, texts...), &out, &errOut); err != nil {
		t.Fatalf("embed: %v (%s)", err, errOut.String())
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	var got []struct {
		Text      string    `json:"text"`
		Embedding []float64 `json:"embedding"`
	}
	for sc.Scan() {
		var o struct {
			Text      string    `json:"text"`
			Embedding []float64 `json:"embedding"`
		}
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, o)
	}
	if len(got) != len(texts) {
		t.Fatalf("got %d lines, want %d", len(got), len(texts))
	}
	for i, o := range got {
		if o.Text != texts[i] || len(o.Embedding) != 384 {
			t.Errorf("line %d: text %q, %d values; want %q, 384", i, o.Text, len(o.Embedding), texts[i])
		}
	}
	if d := math.Abs(got[0].Embedding[0] - -0.06277175); d > 1e-4 {
		t.Errorf("hello[0] = %v, want -0.06277175", got[0].Embedding[0])
	}
	var dot float64
	for j := range got[0].Embedding {
		dot += got[0].Embedding[j] * got[2].Embedding[j]
	}
	if math.Abs(dot-1) > 1e-5 {
		t.Errorf("the same text twice has cosine %v, want 1", dot)
	}
}

func TestEmbedRejectsBadDevice(t *testing.T) {
	var out, errOut bytes.Buffer
	err := Run(context.Background(), []string{"embed", "--device", "tpu", "x"}, &out, &errOut)
	if err == nil || out.Len() != 0 {
		t.Fatalf("embed --device tpu = %v, output %q; want an error and no output", err, out.String())
	}
}
