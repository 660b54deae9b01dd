package pipeline

import (
	"math/rand/v2"
	"slices"
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

// scoreFloor is the k-th best score added, and below is strict.
func TestScoreFloor(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, k := range []int{0, 1, 3, 50} {
		f := newScoreFloor(k)
		var all []float64
		for i := 0; i < 500; i++ {
			s := float64(rng.IntN(40)) / 4 // ties
			if !f.below(s) {
				f.add(s)
			}
			all = append(all, s)
			sorted := append([]float64(nil), all...)
			slices.Sort(sorted)
			slices.Reverse(sorted)
			for _, b := range []float64{s - 0.25, s, s + 0.25} {
				want := k <= 0 || (len(sorted) >= k && b < sorted[k-1])
				if got := f.below(b); got != want {
					t.Fatalf("k %d after %d scores: below(%v) = %v, want %v (k-th best %v)", k, len(all), b, got, want, sorted[min(k, len(sorted))-1])
				}
			}
		}
	}
}
