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

// Dot is q·c: the codes' products in four running sums (a search ranks
// every document by it), times the scale; q is read up to len(c.Codes).
func (c Int8) Dot(q []float32) float32 {
	k := c.Codes
	q = q[:len(k)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(k); i += 4 {
		s0 += q[i] * float32(k[i])
		s1 += q[i+1] * float32(k[i+1])
		s2 += q[i+2] * float32(k[i+2])
		s3 += q[i+3] * float32(k[i+3])
	}
	for ; i < len(k); i++ {
		s0 += q[i] * float32(k[i])
	}
	return ((s0 + s1) + (s2 + s3)) * c.Scale
}
