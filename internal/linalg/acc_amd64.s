//go:build amd64 && !purego

#include "textflag.h"

// func accRowAVX2(c, a *float64, as int, b *float64, ldb, k, n int)
//
// c[j] += a[l·as]·b[l·ldb+j] for l = 0 … k−1 in order, each product
// rounded (VMULPD) before it is added (VADDPD), a zero (or −0) factor
// skipped, a NaN one not: gonum's AxpyUnitary, row after row. Columns in
// blocks of 16 (four registers kept over all l), then 4, then 1.
TEXT ·accRowAVX2(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ as+16(FP), R8
	SHLQ $3, R8
	MOVQ b+24(FP), DX
	MOVQ ldb+32(FP), R9
	SHLQ $3, R9
	MOVQ k+40(FP), R10
	MOVQ n+48(FP), R11
	VXORPD X15, X15, X15

block16:
	CMPQ R11, $16
	JLT  block4
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	MOVQ    SI, R13
	MOVQ    DX, R14
	MOVQ    R10, CX
	TESTQ   CX, CX
	JZ      store16

loop16:
	MOVSD   (R13), X4
	UCOMISD X15, X4
	JNE     mul16
	JPS     mul16
	JMP     next16

mul16:
	VBROADCASTSD (R13), Y4
	VMULPD       (R14), Y4, Y5
	VADDPD       Y5, Y0, Y0
	VMULPD       32(R14), Y4, Y6
	VADDPD       Y6, Y1, Y1
	VMULPD       64(R14), Y4, Y7
	VADDPD       Y7, Y2, Y2
	VMULPD       96(R14), Y4, Y8
	VADDPD       Y8, Y3, Y3

next16:
	ADDQ R8, R13
	ADDQ R9, R14
	DECQ CX
	JNZ  loop16

store16:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $128, DX
	SUBQ    $16, R11
	JMP     block16

block4:
	CMPQ    R11, $4
	JLT     block1
	VMOVUPD (DI), Y0
	MOVQ    SI, R13
	MOVQ    DX, R14
	MOVQ    R10, CX
	TESTQ   CX, CX
	JZ      store4

loop4:
	MOVSD   (R13), X4
	UCOMISD X15, X4
	JNE     mul4
	JPS     mul4
	JMP     next4

mul4:
	VBROADCASTSD (R13), Y4
	VMULPD       (R14), Y4, Y5
	VADDPD       Y5, Y0, Y0

next4:
	ADDQ R8, R13
	ADDQ R9, R14
	DECQ CX
	JNZ  loop4

store4:
	VMOVUPD Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, DX
	SUBQ    $4, R11
	JMP     block4

block1:
	TESTQ R11, R11
	JZ    done
	MOVSD (DI), X0
	MOVQ  SI, R13
	MOVQ  DX, R14
	MOVQ  R10, CX
	TESTQ CX, CX
	JZ    store1

loop1:
	MOVSD   (R13), X4
	UCOMISD X15, X4
	JNE     mul1
	JPS     mul1
	JMP     next1

mul1:
	MOVSD (R14), X5
	MULSD X4, X5
	ADDSD X5, X0

next1:
	ADDQ R8, R13
	ADDQ R9, R14
	DECQ CX
	JNZ  loop1

store1:
	MOVSD X0, (DI)
	ADDQ  $8, DI
	ADDQ  $8, DX
	DECQ  R11
	JMP   block1

done:
	VZEROUPPER
	RET
