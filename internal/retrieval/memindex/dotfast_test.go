package memindex

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dmar-kg/dmar/internal/vec"
)

// dotFast (AVX where the CPU has it) agrees with dot up to rounding, for
// every length, including those that are not multiples of 32.
func TestDotFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for n := 0; n < 200; n++ {
		a, b := make([]float32, n), make([]float32, n+3)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		got, want := float64(dotFast(a, b)), float64(vec.Dot(a, b[:n]))
		if math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
			t.Fatalf("n %d: dotFast %v, dot %v", n, got, want)
		}
	}
}
