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
