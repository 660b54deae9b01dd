package onnx_test

import (
	"context"
	"strings"
	"testing"
)

func TestTruncatedCutsAtTheLimit(t *testing.T) {
	e := testEncoder(t)
	short := e.Truncated(16)
	if short.Version() == e.Version() || short.MaxTokens() != 16 {
		t.Fatalf("Truncated(16): version %q, max %d", short.Version(), short.MaxTokens())
	}
	if e.Truncated(100000) != e {
		t.Error("a limit above the model's must return the encoder itself")
	}
	base := "Christopher Nolan is a British-American film director, producer and screenwriter whose films"
	longer := base + strings.Repeat(" have grossed billions of dollars worldwide", 5)
	v, err := short.Encode(context.Background(), []string{base, longer})
	if err != nil {
		t.Fatal(err)
	}
	// Both texts share their first 14 word pieces, so truncated at 16 they are equal.
	for i := range v[0] {
		if d := v[0][i] - v[1][i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("truncated embeddings differ at %d: %v vs %v", i, v[0][i], v[1][i])
		}
	}
	full, err := e.Encode(context.Background(), []string{longer})
	if err != nil {
		t.Fatal(err)
	}
	same := true
	for i := range full[0] {
		same = same && abs32(full[0][i]-v[1][i]) < 1e-5
	}
	if same {
		t.Error("the untruncated embedding of the longer text equals the truncated one")
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
