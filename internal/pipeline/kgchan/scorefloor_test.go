package kgchan

import (
	"math/rand/v2"
	"slices"
	"testing"
)

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
