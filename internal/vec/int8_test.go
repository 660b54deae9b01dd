package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Every component comes back within half a step (Scale/2) of what it was,
// the largest exactly; Dot is the dot product with the vector decoded, and
// off the float32 one by at most the sum of |q| times half a step.
func TestInt8RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	for n := range 300 {
		v, q := make([]float32, 1+n%400), make([]float32, 1+n%400)
		for i := range v {
			v[i], q[i] = float32(rng.NormFloat64()*float64(n+1)), float32(rng.NormFloat64())
		}
		c := Quantize(v)
		back := c.Float32()
		maxAbs := 0.0
		for _, f := range v {
			maxAbs = max(maxAbs, math.Abs(float64(f)))
		}
		if got := float64(c.Scale); math.Abs(got-maxAbs/127) > 1e-6*maxAbs {
			t.Fatalf("n %d: scale %v, want %v", n, got, maxAbs/127)
		}
		half := float64(c.Scale) / 2 * (1 + 1e-5)
		l1 := 0.0
		for i := range v {
			if d := math.Abs(float64(back[i] - v[i])); d > half {
				t.Fatalf("n %d: component %d %v came back %v, off by %v > half a step %v", n, i, v[i], back[i], d, half)
			}
			if math.Abs(float64(v[i])) == maxAbs && math.Abs(float64(back[i]-v[i])) > 1e-5*maxAbs {
				t.Fatalf("n %d: the largest component %v came back %v", n, v[i], back[i])
			}
			l1 += math.Abs(float64(q[i]))
		}
		got, decoded, exact := float64(c.Dot(q)), float64(Dot(q, back)), Dot64(q, v)
		if math.Abs(got-decoded) > 1e-4*(1+math.Abs(decoded)) {
			t.Fatalf("n %d: Dot %v, dot with the decoded vector %v", n, got, decoded)
		}
		if bound := l1*half + 1e-4*(1+math.Abs(exact)); math.Abs(got-exact) > bound {
			t.Fatalf("n %d: Dot %v, exact %v: off by more than %v", n, got, exact, bound)
		}
	}
	if c := Quantize([]float32{0, 0, 0}); c.Scale != 0 || c.Dot([]float32{1, 2, 3}) != 0 {
		t.Errorf("zero vector: %+v", c)
	}
}
