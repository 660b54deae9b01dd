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
