package memindex

import "golang.org/x/sys/cpu"

// haveDot32 says dot32 runs on the CPU's vector unit (AVX): eight documents
// an instruction instead of one.
var haveDot32 = cpu.X86.HasAVX

//go:noescape
func dot32AVX(q, blk []float32, out *[32]float32)

func dot32(q, blk []float32, out *[32]float32) {
	_ = blk[len(q)*blockDocs-1] // the assembly reads this far
	dot32AVX(q, blk, out)
}

//go:noescape
func dotAVX(a, b []float32) float32

// dotFast is a dot product in any order of additions (the vector graph's
// walk): AVX over the first multiple of 32 components, then the rest.
func dotFast(a, b []float32) float32 {
	b = b[:len(a)]
	n := len(a) &^ 31
	var s float32
	if haveDot32 && n > 0 {
		s = dotAVX(a[:n], b[:n])
	} else {
		n = 0
	}
	return s + dotGo(a[n:], b[n:])
}
