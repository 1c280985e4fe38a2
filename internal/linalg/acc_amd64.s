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

// LANE0(row, Xt, Yt, Xacc, Yacc) adds the tail term a·b (X4 = a, b at
// row+R8) into lane 0 of Yacc: a VEX scalar operation clears the upper
// lanes of its destination, so it is done on Yt and blended back.
#define LANE0(row, Xt, Yt, Xacc, Yacc) \
	VMULSD   (row)(R8*1), X4, Xt; \
	VADDSD   Xt, Xacc, Xt;        \
	VBLENDPD $1, Yt, Yacc, Yacc

// SUMTO(Yacc, Xacc, off) adds (s1+s3) + (s0+s2) of Yacc = [s0 s1 s2 s3]
// to the float64 at off(DI), in DotUnitary's order.
#define SUMTO(Yacc, Xacc, off) \
	VEXTRACTF128 $1, Yacc, X4; \
	VADDPD       X4, Xacc, Xacc; \
	VUNPCKHPD    Xacc, Xacc, X4; \
	VADDSD       Xacc, X4, Xacc; \
	VADDSD       off(DI), Xacc, Xacc; \
	VMOVSD       Xacc, off(DI)

// func accDotAVX2(c, a, b *float64, ldb, k, n int)
//
// c[j] += dot(a[0:k], b[j·ldb : j·ldb+k]) for j < n, each dot product
// summed as gonum's DotUnitary sums it: the four lanes of a register hold
// the running sums of the terms whose index is 0, 1, 2, 3 modulo 4 (its
// X7 and X8), the k mod 4 last terms go into lane 0 one by one, and the
// result is (s1+s3) + (s0+s2). Four entries at a time (Y0-Y3), then one.
TEXT ·accDotAVX2(SB), NOSPLIT, $0-48
	MOVQ c+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ ldb+24(FP), R9
	SHLQ $3, R9
	MOVQ k+32(FP), R10
	MOVQ n+40(FP), R11
	MOVQ R10, R12
	SHRQ $2, R12       // k/4
	MOVQ R10, R13
	ANDQ $3, R13       // k mod 4

dot4:
	CMPQ   R11, $4
	JLT    dot1
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ   DX, R14          // row j
	LEAQ   (DX)(R9*1), R15  // row j+1
	LEAQ   (R15)(R9*1), BX  // row j+2
	LEAQ   (BX)(R9*1), AX   // row j+3
	XORQ   R8, R8           // byte offset in the rows
	MOVQ   R12, CX
	TESTQ  CX, CX
	JZ     tail4

loop4:
	VMOVUPD (SI)(R8*1), Y4
	VMULPD  (R14)(R8*1), Y4, Y5
	VADDPD  Y5, Y0, Y0
	VMULPD  (R15)(R8*1), Y4, Y6
	VADDPD  Y6, Y1, Y1
	VMULPD  (BX)(R8*1), Y4, Y7
	VADDPD  Y7, Y2, Y2
	VMULPD  (AX)(R8*1), Y4, Y8
	VADDPD  Y8, Y3, Y3
	ADDQ    $32, R8
	DECQ    CX
	JNZ     loop4

tail4:
	MOVQ  R13, CX
	TESTQ CX, CX
	JZ    sum4

tailloop4:
	VMOVSD (SI)(R8*1), X4
	LANE0(R14, X5, Y5, X0, Y0)
	LANE0(R15, X6, Y6, X1, Y1)
	LANE0(BX, X7, Y7, X2, Y2)
	LANE0(AX, X8, Y8, X3, Y3)
	ADDQ   $8, R8
	DECQ   CX
	JNZ    tailloop4

sum4:
	SUMTO(Y0, X0, 0)
	SUMTO(Y1, X1, 8)
	SUMTO(Y2, X2, 16)
	SUMTO(Y3, X3, 24)
	ADDQ $32, DI
	LEAQ (AX)(R9*1), DX // row j+4
	SUBQ $4, R11
	JMP  dot4

dot1:
	TESTQ  R11, R11
	JZ     dotdone
	VXORPD Y0, Y0, Y0
	XORQ   R8, R8
	MOVQ   R12, CX
	TESTQ  CX, CX
	JZ     tail1

loop1:
	VMOVUPD (SI)(R8*1), Y4
	VMULPD  (DX)(R8*1), Y4, Y5
	VADDPD  Y5, Y0, Y0
	ADDQ    $32, R8
	DECQ    CX
	JNZ     loop1

tail1:
	MOVQ  R13, CX
	TESTQ CX, CX
	JZ    sum1

tailloop1:
	VMOVSD (SI)(R8*1), X4
	LANE0(DX, X5, Y5, X0, Y0)
	ADDQ   $8, R8
	DECQ   CX
	JNZ    tailloop1

sum1:
	SUMTO(Y0, X0, 0)
	ADDQ $8, DI
	ADDQ R9, DX
	DECQ R11
	JMP  dot1

dotdone:
	VZEROUPPER
	RET
