package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// The cosiner ranks by the same numbers as Cosine, bit for bit: the graph
// channel's order and ties must not move with the faster loop.
func TestCosinerEqualsCosine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	q := randVec(rng, 384)
	c := NewCosiner(q)
	for i := 0; i < 2000; i++ {
		d := randVec(rng, 384)
		if i%100 == 0 {
			clear(d)
		}
		if got, want := c.Cosine(d), Cosine(q, d); got != want {
			t.Fatalf("vector %d: cosiner %v, Cosine %v", i, got, want)
		}
	}
	if got := c.Cosine(randVec(rng, 12)); got != 0 {
		t.Fatalf("vectors of other lengths: %v, want 0", got)
	}
	if got := NewCosiner(make([]float32, 384)).Cosine(q); got != 0 {
		t.Fatalf("a zero query: %v, want 0", got)
	}
}

// Dot4 is Dot four times, bit for bit.
func TestDot4EqualsDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 6))
	for n := 0; n < 200; n++ {
		a := randVec(rng, 1+rng.IntN(400))
		b := [4][]float32{randVec(rng, len(a)), randVec(rng, len(a)), randVec(rng, len(a)+3), randVec(rng, len(a))}
		s0, s1, s2, s3 := Dot4(a, b[0], b[1], b[2], b[3])
		for i, got := range []float32{s0, s1, s2, s3} {
			if want := Dot(a, b[i]); got != want {
				t.Fatalf("length %d, vector %d: %v, Dot %v", len(a), i, got, want)
			}
		}
	}
}

// The orders differ in the last bits only: every dot and cosine agrees with
// the float64 sum to float32 precision.
func TestOrdersAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 3, 4, 7, 384, 385} {
		a, b := randVec(rng, n), randVec(rng, n)
		want := Dot64(a, b)
		tol := 1e-5 * math.Sqrt(float64(n)) * (1 + math.Abs(want))
		if got := float64(Dot(a, b)); math.Abs(got-want) > tol {
			t.Errorf("n %d: Dot %v, float64 sum %v", n, got, want)
		}
		if got := DotLanes(a, b); math.Abs(got-want) > tol {
			t.Errorf("n %d: DotLanes %v, float64 sum %v", n, got, want)
		}
		if c, c64 := Cosine(a, b), Cosine64(a, b); math.Abs(c-c64) > 1e-5 {
			t.Errorf("n %d: Cosine %v, Cosine64 %v", n, c, c64)
		}
	}
}

func TestCosine(t *testing.T) {
	for _, tc := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{0, 1}, 0},
		{[]float32{1, 1}, []float32{2, 2}, 1},
		{[]float32{1, 0}, []float32{-3, 0}, -1},
		{[]float32{3, 4}, []float32{4, 3}, 24.0 / 25},
		{[]float32{0, 0}, []float32{1, 2}, 0},    // a zero vector
		{[]float32{1, 2}, []float32{1, 2, 3}, 0}, // lengths differ
		{nil, nil, 0},
	} {
		for name, f := range map[string]func(a, b []float32) float64{"Cosine": Cosine, "Cosine64": Cosine64} {
			if got := f(tc.a, tc.b); math.Abs(got-tc.want) > 1e-6 {
				t.Errorf("%s(%v, %v) = %v, want %v", name, tc.a, tc.b, got, tc.want)
			}
		}
	}
}

func TestMeanStd(t *testing.T) {
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	if got := Mean(xs); got != 5 {
		t.Errorf("Mean = %v, want 5", got)
	}
	if got := Std(xs); got != 2 {
		t.Errorf("Std = %v, want 2 (population)", got)
	}
	if Mean(nil) != 0 || Std(nil) != 0 {
		t.Errorf("no values: Mean %v, Std %v, want 0 and 0", Mean(nil), Std(nil))
	}
	if got := Norm([]float32{3, 4}); got != 5 {
		t.Errorf("Norm(3, 4) = %v, want 5", got)
	}
}

var sink float64

// The library kernels (gonum's blas32.Dot, vek32.Dot) were measured beside
// these in a scratch module: docs/architecture.md has the figures.
func BenchmarkDot(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	x, y := randVec(rng, 384), randVec(rng, 384)
	b.Run("Dot", func(b *testing.B) {
		for b.Loop() {
			sink += float64(Dot(x, y))
		}
	})
	b.Run("DotLanes", func(b *testing.B) {
		for b.Loop() {
			sink += DotLanes(x, y)
		}
	})
	b.Run("Dot64", func(b *testing.B) {
		for b.Loop() {
			sink += Dot64(x, y)
		}
	})
	ys := [4][]float32{y, randVec(rng, 384), randVec(rng, 384), randVec(rng, 384)}
	b.Run("Dot4 (per vector)", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if i%4 == 0 {
				s0, _, _, _ := Dot4(x, ys[0], ys[1], ys[2], ys[3])
				sink += float64(s0)
			}
		}
	})
	b.Run("Cosiner", func(b *testing.B) {
		c := NewCosiner(x)
		for b.Loop() {
			sink += c.Cosine(y)
		}
	})
}
