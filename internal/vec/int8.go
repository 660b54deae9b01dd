package vec

import "math"

// Int8 is a vector in a quarter of float32's bytes: component i is
// Codes[i]·Scale, Scale being the largest magnitude over 127, so that each
// component is off by at most Scale/2. A graph can walk such vectors and
// leave the last word to the float32 ones (Rescore).
type Int8 struct {
	Codes []int8
	Scale float32
}

// Quantize is v rounded to an Int8 (all codes 0 for a zero vector).
func Quantize(v []float32) Int8 {
	var m float64
	for _, f := range v {
		m = max(m, math.Abs(float64(f)))
	}
	c := Int8{Codes: make([]int8, len(v))}
	if m == 0 {
		return c
	}
	c.Scale = float32(m / 127)
	inv := 127 / m
	for i, f := range v {
		c.Codes[i] = int8(math.Round(float64(f) * inv))
	}
	return c
}

// Float32 is the vector c stands for.
func (c Int8) Float32() []float32 {
	out := make([]float32, len(c.Codes))
	for i, k := range c.Codes {
		out[i] = float32(k) * c.Scale
	}
	return out
}

// Dot is q·c, the codes' sum in order times the scale; q is read up to
// len(c.Codes).
func (c Int8) Dot(q []float32) float32 {
	q = q[:len(c.Codes)]
	var s float32
	for i, k := range c.Codes {
		s += q[i] * float32(k)
	}
	return s * c.Scale
}
