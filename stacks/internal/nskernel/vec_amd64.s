//go:build amd64 && !purego

#include "textflag.h"

// Vector pop kernels for m = 6, |Q| = 2 on AVX2 and FMA; see vec_amd64.go
// for what they compute and vec_layout.go for the layouts of the G' blocks.
// A 6×6 block is nine vectors of four entries; pattern p (0, 1, 2) is the
// vectors p, p+3 and p+6, at byte offsets 32p, 32p+96 and 32p+192. Each
// kernel ends with VZEROUPPER, so that the legacy SSE code around it
// (math.Exp in particular) runs at full speed.

// func popSumWVec6x2Asm(acc, E, XP, w *float64, nk int)
//
// For each pattern, over all k: two accumulators per vector (one for the
// even-u terms, one for the odd-u terms) keep the FMA chains short.
TEXT ·popSumWVec6x2Asm(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ E+8(FP), SI
	MOVQ XP+16(FP), DX
	MOVQ w+24(FP), R8
	MOVQ nk+32(FP), CX
	XORQ R9, R9 // 32p

fwdPattern:
	VMOVUPD 0(DI)(R9*1), Y0
	VMOVUPD 96(DI)(R9*1), Y1
	VMOVUPD 192(DI)(R9*1), Y2
	VXORPD  Y8, Y8, Y8
	VXORPD  Y9, Y9, Y9
	VXORPD  Y10, Y10, Y10
	LEAQ    (SI)(R9*1), R10 // E_k + 32p
	LEAQ    (DX)(R9*2), R11 // XP_k + 64p
	MOVQ    R8, R12         // &w[k]
	MOVQ    CX, R13         // k left

fwdLoop:
	VBROADCASTSD (R12), Y3
	VMULPD       (R11), Y3, Y4   // f·(y,0,r)
	VMULPD       32(R11), Y3, Y5 // f·(y,1,r)
	VMOVDDUP     (R10), Y6
	VFMADD231PD  Y4, Y6, Y0
	VPERMILPD    $15, (R10), Y7
	VFMADD231PD  Y5, Y7, Y8
	VMOVDDUP     96(R10), Y6
	VFMADD231PD  Y4, Y6, Y1
	VPERMILPD    $15, 96(R10), Y7
	VFMADD231PD  Y5, Y7, Y9
	VMOVDDUP     192(R10), Y6
	VFMADD231PD  Y4, Y6, Y2
	VPERMILPD    $15, 192(R10), Y7
	VFMADD231PD  Y5, Y7, Y10
	ADDQ         $288, R10
	ADDQ         $192, R11
	ADDQ         $8, R12
	DECQ         R13
	JNZ          fwdLoop

	VADDPD  Y8, Y0, Y0
	VADDPD  Y9, Y1, Y1
	VADDPD  Y10, Y2, Y2
	VMOVUPD Y0, 0(DI)(R9*1)
	VMOVUPD Y1, 96(DI)(R9*1)
	VMOVUPD Y2, 192(DI)(R9*1)
	ADDQ    $32, R9
	CMPQ    R9, $96
	JLT     fwdPattern
	VZEROUPPER
	RET

// func popSumBackVec6x2Asm(C, CP, B, E, XT, es *float64, nk int)
TEXT ·popSumBackVec6x2Asm(SB), NOSPLIT, $0-56
	MOVQ C+0(FP), DI
	MOVQ CP+8(FP), R14
	MOVQ B+16(FP), BX
	MOVQ E+24(FP), SI
	MOVQ XT+32(FP), DX
	MOVQ es+40(FP), R8
	MOVQ nk+48(FP), CX

	// C_k += B ⋆ (f·X_k)ᵀ: entry (i,y,u) += B(i,y,0)·f·X(y,u,0) +
	// B(i,y,1)·f·X(y,u,1).
	XORQ R9, R9 // 32p

backPatternC:
	VMOVDDUP  0(BX)(R9*1), Y8
	VPERMILPD $15, 0(BX)(R9*1), Y9
	VMOVDDUP  96(BX)(R9*1), Y10
	VPERMILPD $15, 96(BX)(R9*1), Y11
	VMOVDDUP  192(BX)(R9*1), Y12
	VPERMILPD $15, 192(BX)(R9*1), Y13
	LEAQ      (DI)(R9*1), R10 // C_k + 32p
	LEAQ      (DX)(R9*2), R11 // XT_k + 64p
	MOVQ      R8, R12
	MOVQ      CX, R13

backLoopC:
	VBROADCASTSD (R12), Y3
	VMULPD       (R11), Y3, Y4
	VMULPD       32(R11), Y3, Y5
	VMOVUPD      (R10), Y0
	VMOVUPD      96(R10), Y1
	VMOVUPD      192(R10), Y2
	VFMADD231PD  Y4, Y8, Y0
	VFMADD231PD  Y4, Y10, Y1
	VFMADD231PD  Y4, Y12, Y2
	VFMADD231PD  Y5, Y9, Y0
	VFMADD231PD  Y5, Y11, Y1
	VFMADD231PD  Y5, Y13, Y2
	VMOVUPD      Y0, (R10)
	VMOVUPD      Y1, 96(R10)
	VMOVUPD      Y2, 192(R10)
	ADDQ         $288, R10
	ADDQ         $192, R11
	ADDQ         $8, R12
	DECQ         R13
	JNZ          backLoopC

	ADDQ $32, R9
	CMPQ R9, $96
	JLT  backPatternC

	// CP_k += f·(E_kᵀ ⋆ B): entry (y,u,r) += f·Σ_i E(i,y,u)·B(i,y,r). Per
	// pattern, same = Σ E_v⊙B_v holds the terms u = r and swap =
	// Σ E_v⊙swap(B_v) those u ≠ r, for the symbols yA (lanes 0, 1) and yB
	// (lanes 2, 3). Pattern p has (yA, yB) = (0,1), (2,0), (1,2): their
	// byte offsets in CP_k, AX and DI, advance by 64 modulo 96.
	XORQ R9, R9
	XORQ AX, AX
	MOVQ $32, DI

backPatternP:
	VMOVUPD   0(BX)(R9*1), Y8
	VMOVUPD   96(BX)(R9*1), Y9
	VMOVUPD   192(BX)(R9*1), Y10
	VPERMILPD $5, Y8, Y11
	VPERMILPD $5, Y9, Y12
	VPERMILPD $5, Y10, Y13
	LEAQ      (SI)(R9*1), R10 // E_k + 32p
	MOVQ      R14, R11        // CP_k
	MOVQ      R8, R12
	MOVQ      CX, R13

backLoopP:
	VMOVUPD      (R10), Y0
	VMOVUPD      96(R10), Y1
	VMOVUPD      192(R10), Y2
	VMULPD       Y8, Y0, Y4
	VMULPD       Y11, Y0, Y5
	VFMADD231PD  Y9, Y1, Y4
	VFMADD231PD  Y12, Y1, Y5
	VFMADD231PD  Y10, Y2, Y4
	VFMADD231PD  Y13, Y2, Y5
	VUNPCKLPD    Y5, Y4, Y6       // same0 swap0 | same2 swap2
	VUNPCKHPD    Y4, Y5, Y7       // swap1 same1 | swap3 same3
	VPERM2F128   $0x20, Y7, Y6, Y0
	VPERM2F128   $0x31, Y7, Y6, Y1
	VBROADCASTSD (R12), Y3
	VMOVUPD      (R11)(AX*1), Y2
	VFMADD231PD  Y3, Y0, Y2
	VMOVUPD      Y2, (R11)(AX*1)
	VMOVUPD      (R11)(DI*1), Y2
	VFMADD231PD  Y3, Y1, Y2
	VMOVUPD      Y2, (R11)(DI*1)
	ADDQ         $288, R10
	ADDQ         $96, R11
	ADDQ         $8, R12
	DECQ         R13
	JNZ          backLoopP

	ADDQ $64, AX
	CMPQ AX, $96
	JLT  backYA
	SUBQ $96, AX

backYA:
	ADDQ $64, DI
	CMPQ DI, $96
	JLT  backYB
	SUBQ $96, DI

backYB:
	ADDQ $32, R9
	CMPQ R9, $96
	JLT  backPatternP
	VZEROUPPER
	RET
