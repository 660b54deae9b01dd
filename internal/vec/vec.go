// Package vec is dmar's vector arithmetic on embeddings: dot products,
// norms, cosines, and the mean and spread of a score list.
//
// Every ranked score depends on the order in which a sum is added (float32
// rounds each step), so the functions say their order and callers keep the
// one their stored figures and tests were made with: Dot, Dot4 and Cosine
// add the components in order in float32, Cosine64 in float64, DotLanes in
// four running sums. A faster library kernel (gonum's blas32, viterin/vek) adds
// in another order; BenchmarkDot in this package measures what that would
// buy (docs/architecture.md).
package vec

import "math"

// Dot is a·b summed in order in float32; b is read up to len(a).
func Dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Dot4 is a·b0, a·b1, a·b2 and a·b3, each summed in order in float32 as
// Dot sums it (bit for bit), the four in one loop: no addition waits on
// another vector's, about twice Dot's speed a vector. Each b is read up to
// len(a).
func Dot4(a, b0, b1, b2, b3 []float32) (s0, s1, s2, s3 float32) {
	n := len(a)
	b0, b1, b2, b3 = b0[:n], b1[:n], b2[:n], b3[:n] // no bounds checks in the loop
	for i, x := range a {
		s0 += x * b0[i]
		s1 += x * b1[i]
		s2 += x * b2[i]
		s3 += x * b3[i]
	}
	return s0, s1, s2, s3
}

// DotLanes is a·b summed in four running sums, each in order, added as
// (s0+s1)+(s2+s3): about twice Dot's speed (no addition waits on the one
// before), with other last bits. b is read up to len(a).
func DotLanes(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64((s0 + s1) + (s2 + s3))
}

// Dot64 is a·b summed in order in float64.
func Dot64(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// Norm is the Euclidean length of v, from Dot.
func Norm(v []float32) float64 { return math.Sqrt(float64(Dot(v, v))) }

// Cosine is the cosine of a and b from Dot's float32 sums; 0 when either is
// zero, empty, or they differ in length.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	na, nb := Norm(a), Norm(b)
	if na == 0 || nb == 0 {
		return 0
	}
	return float64(Dot(a, b)) / (na * nb)
}

// Cosine64 is the cosine of a and b from float64 sums; 0 as for Cosine.
func Cosine64(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

// Cosiner is Cosine with a fixed first vector, whose norm it computes once.
// Its values are Cosine's, bit for bit: the same sums in the same order.
type Cosiner struct {
	a  []float32
	na float64
}

// NewCosiner fixes a.
func NewCosiner(a []float32) Cosiner {
	return Cosiner{a: a, na: Norm(a)}
}

// Cosine is Cosine(a, b).
func (c Cosiner) Cosine(b []float32) float64 {
	a := c.a
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	// b's norm and the dot product in one pass, each its own sum.
	var bb, ab float32
	b = b[:len(a)]
	for i, x := range b {
		bb += x * x
		ab += a[i] * x
	}
	nb := math.Sqrt(float64(bb))
	if c.na == 0 || nb == 0 {
		return 0
	}
	return float64(ab) / (c.na * nb)
}

// Mean is the arithmetic mean of xs; 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Std is the population standard deviation of xs; 0 for none.
func Std(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m := Mean(xs)
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return math.Sqrt(v / float64(len(xs)))
}
