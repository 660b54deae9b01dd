package pipeline

import (
	"math/rand/v2"
	"testing"
)

// The graph channel's cosiner ranks by the same numbers as cosine, bit for
// bit: the channel's order and ties must not move with the faster loop.
func TestCosinerEqualsCosine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	q := vec(384)
	c := newCosiner(q)
	for i := 0; i < 2000; i++ {
		d := vec(384)
		if i%100 == 0 {
			clear(d)
		}
		if got, want := c.cosine(d), cosine(q, d); got != want {
			t.Fatalf("vector %d: cosiner %v, cosine %v", i, got, want)
		}
	}
	if got := c.cosine(vec(12)); got != 0 {
		t.Fatalf("vectors of other lengths: %v, want 0", got)
	}
	if got := newCosiner(make([]float32, 384)).cosine(q); got != 0 {
		t.Fatalf("a zero query: %v, want 0", got)
	}
}
