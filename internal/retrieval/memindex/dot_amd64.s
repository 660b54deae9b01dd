#include "textflag.h"

// func dot32AVX(q []float32, blk []float32, out *[32]float32)
//
// Lane j of the four accumulators is document j's sum, added one dimension
// at a time: a multiply, then an add, each rounded to float32 (no fused
// multiply-add), which is what dot does for one document.
TEXT ·dot32AVX(SB), NOSPLIT, $0-56
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), CX
	MOVQ blk_base+24(FP), DI
	MOVQ out+48(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ CX, CX
	JZ done

loop:
	VBROADCASTSS (SI), Y4
	VMULPS 0(DI), Y4, Y5
	VADDPS Y5, Y0, Y0
	VMULPS 32(DI), Y4, Y6
	VADDPS Y6, Y1, Y1
	VMULPS 64(DI), Y4, Y7
	VADDPS Y7, Y2, Y2
	VMULPS 96(DI), Y4, Y8
	VADDPS Y8, Y3, Y3
	ADDQ $4, SI
	ADDQ $128, DI
	DECQ CX
	JNZ loop

done:
	VMOVUPS Y0, 0(DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VZEROUPPER
	RET

// func dotAVX(a, b []float32) float32
//
// The dot product of a and b (len(a) a multiple of 32, b at least as long)
// with four eight-lane accumulators, summed at the end: not dot's order,
// for the vector graph's walk only (dotFast).
TEXT ·dotAVX(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ $5, CX
	JZ sum

loop32:
	VMOVUPS 0(SI), Y4
	VMULPS 0(DI), Y4, Y4
	VADDPS Y4, Y0, Y0
	VMOVUPS 32(SI), Y5
	VMULPS 32(DI), Y5, Y5
	VADDPS Y5, Y1, Y1
	VMOVUPS 64(SI), Y6
	VMULPS 64(DI), Y6, Y6
	VADDPS Y6, Y2, Y2
	VMOVUPS 96(SI), Y7
	VMULPS 96(DI), Y7, Y7
	VADDPS Y7, Y3, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ CX
	JNZ loop32

sum:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET
