// Package scoringtest is the conformance suite of the scoring ports
// (Encoder, Gate, EvidenceGate, Ranker). Every implementation runs it: the ONNX
// models in CI after setup, and the fixed gate always.
package scoringtest

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/vec"
)

// Encoder checks a sentence encoder.
func Encoder(t *testing.T, e scoring.Encoder) {
	ctx := context.Background()
	texts := []string{"Which films did Christopher Nolan direct?", "Inception is a 2010 science fiction film.", "Paris is the capital of France.", ""}
	batch, err := e.Encode(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(batch), len(texts))
	}
	for i, v := range batch {
		if len(v) != e.Dim() {
			t.Errorf("vector %d has %d dimensions, Dim() = %d", i, len(v), e.Dim())
		}
		if n := norm(v); math.Abs(n-1) > 1e-3 {
			t.Errorf("vector %d has norm %v, want 1 (L2-normalised)", i, n)
		}
	}
	// A batch must give what single calls give (padding must not leak).
	for i, s := range texts[:3] {
		one, err := e.Encode(ctx, []string{s})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(one[0], batch[i]); d > 1e-4 {
			t.Errorf("text %d: batched and single embeddings differ by %v", i, d)
		}
	}
	// Related texts are closer than unrelated ones.
	if vec.Dot64(batch[0], batch[1]) <= vec.Dot64(batch[0], batch[2]) {
		t.Errorf("cos(Nolan question, Inception) = %.3f <= cos(Nolan question, Paris) = %.3f", vec.Dot64(batch[0], batch[1]), vec.Dot64(batch[0], batch[2]))
	}
	if e.Version() == "" {
		t.Error("Version() is empty")
	}
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Encode(c, texts); !errors.Is(err, context.Canceled) {
		t.Errorf("Encode with a cancelled context: %v, want context.Canceled", err)
	}
}

// Gate checks a gate on the given query and document vectors.
func Gate(t *testing.T, g scoring.Gate, query []float32, docs [][]float32) {
	w, err := g.Weights(context.Background(), query, docs)
	if err != nil {
		t.Fatal(err)
	}
	distributions(t, w, len(docs), g.Version())
}

// distributions checks a gate's answer: one pair per document, each a
// distribution, and a version.
func distributions(t *testing.T, w [][2]float64, n int, version string) {
	t.Helper()
	if len(w) != n {
		t.Fatalf("%d weight pairs for %d documents", len(w), n)
	}
	for i, p := range w {
		if p[0] < 0 || p[1] < 0 || math.Abs(p[0]+p[1]-1) > 1e-6 {
			t.Errorf("document %d: weights %v are not a distribution", i, p)
		}
	}
	if version == "" {
		t.Error("Version() is empty")
	}
}

func norm(v []float32) float64 { return math.Sqrt(vec.Dot64(v, v)) }

func maxDiff(a, b []float32) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(float64(a[i]-b[i])))
	}
	return m
}

// EvidenceGate checks an evidence-aware gate: one weight pair per document,
// each a distribution, a version, and a cancelled context honoured.
func EvidenceGate(t *testing.T, g scoring.EvidenceGate, docs []scoring.Evidence) {
	t.Helper()
	w, err := g.EvidenceWeights(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	distributions(t, w, len(docs), g.Version())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.EvidenceWeights(ctx, docs); err == nil {
		t.Error("a cancelled context gave weights")
	}
}

// Ranker checks the port's contract on docs: one finite score per
// document, the same scores for the same inputs in another order, none for
// no documents, and a cancelled context refused.
func Ranker(t *testing.T, r scoring.Ranker, docs []scoring.RankInput) {
	t.Helper()
	s, err := r.Scores(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != len(docs) {
		t.Fatalf("%s: %d scores for %d documents", r.Version(), len(s), len(docs))
	}
	for i, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%s: score %d is %v", r.Version(), i, v)
		}
	}
	rev := make([]scoring.RankInput, len(docs))
	for i := range docs {
		rev[len(docs)-1-i] = docs[i]
	}
	s2, err := r.Scores(context.Background(), rev)
	if err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		if math.Abs(s2[len(docs)-1-i]-s[i]) > 1e-6 {
			t.Fatalf("%s: a document's score depends on the others in the call (%v vs %v)", r.Version(), s[i], s2[len(docs)-1-i])
		}
	}
	if e, err := r.Scores(context.Background(), nil); err != nil || len(e) != 0 {
		t.Errorf("%s: no documents gave %v, %v", r.Version(), e, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Scores(ctx, docs); err == nil {
		t.Error("a cancelled context gave scores")
	}
}
