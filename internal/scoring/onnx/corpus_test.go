package onnx_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

// chunked is today's load path (corpus.Prepare before EncodeCorpus): Encode
// on consecutive chunks of 32 documents in corpus order.
func chunked(tb testing.TB, e *onnx.Encoder, texts []string) [][]float32 {
	tb.Helper()
	var out [][]float32
	for lo := 0; lo < len(texts); lo += 32 {
		v, err := e.Encode(context.Background(), texts[lo:min(lo+32, len(texts))])
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, v...)
	}
	return out
}

// vecDiff is the largest |difference| of two lists of vectors, and fails
// when their shapes differ.
func vecDiff(tb testing.TB, got, want [][]float32) float64 {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("%d vectors, want %d", len(got), len(want))
	}
	worst := 0.0
	for i := range want {
		if len(got[i]) != len(want[i]) {
			tb.Fatalf("vector %d: %d values, want %d", i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			worst = max(worst, math.Abs(float64(got[i][j]-want[i][j])))
		}
	}
	return worst
}

// The fast corpus path gives today's vectors, in input order, on real
// codexm documents truncated as at load time: several windows, many
// batches of mixed lengths, concurrent model calls. 1e-5 keeps existing
// snapshots and eval figures where they are.
func TestEncodeCorpusMatchesTodaysPath(t *testing.T) {
	defer onnx.SetCorpusWindow(50, 1)()
	e := testEncoder(t, onnx.WithBatchSize(8)).Truncated(128).Passage()
	docs := codexmExtracts(t, 120)
	docs = append(docs, "short", "  a text with outer space \n", "")
	want := chunked(t, e, docs)
	var sb strings.Builder
	m := progress.New(&sb, "embed", "docs", len(docs))
	got, err := e.EncodeCorpus(context.Background(), docs, m)
	if err != nil {
		t.Fatal(err)
	}
	if d := vecDiff(t, got, want); d > 1e-5 {
		t.Errorf("largest |difference| from today's path %.2g, want <= 1e-5", d)
	} else {
		t.Logf("%d documents: largest |difference| from today's path %.2g", len(docs), d)
	}
	if line := m.Line(); !strings.Contains(line, "123/123 docs") {
		t.Errorf("progress %q: want every document counted", line)
	}
}

// Encoders that pool in Go ([CLS] for bge, the mean for e5) take the same
// path and hold the same 1e-5, int8 ones included (their activations are
// quantised per row, so a text's company does not matter).
func TestEncodeCorpusRegistryEncoders(t *testing.T) {
	defer onnx.SetCorpusWindow(16, 1)()
	docs := codexmExtracts(t, 40)
	for _, name := range []string{"bge-small-en-v1.5", "e5-small-v2-int8"} {
		t.Run(name, func(t *testing.T) {
			e := registryEncoder(t, name, onnx.WithBatchSize(4)).Truncated(64).Passage()
			got, err := e.EncodeCorpus(context.Background(), docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := vecDiff(t, got, chunked(t, e, docs)); d > 1e-5 {
				t.Errorf("largest |difference| from today's path %.2g, want <= 1e-5", d)
			}
		})
	}
}

func TestEncodeCorpusEmptyAndCancelled(t *testing.T) {
	e := testEncoder(t)
	got, err := e.EncodeCorpus(context.Background(), nil, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("no texts: %d vectors, %v; want none and no error", len(got), err)
	}
	defer onnx.SetCorpusWindow(8, 1)()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.EncodeCorpus(ctx, codexmExtracts(t, 64), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: error %v, want context.Canceled", err)
	}
}
