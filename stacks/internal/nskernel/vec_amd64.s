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

// func popSumBackCVec6x2Asm(C, B, XT, es *float64, nk int)
//
// The first part of the backward pop kernel (popSumBackVec6x2): the
// adjoints of the γ blocks.
TEXT ·popSumBackCVec6x2Asm(SB), NOSPLIT, $0-40
	MOVQ C+0(FP), DI
	MOVQ B+8(FP), BX
	MOVQ XT+16(FP), DX
	MOVQ es+24(FP), R8
	MOVQ nk+32(FP), CX

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
	VZEROUPPER
	RET

// func popSumBackPVec6x2Asm(CP, B, E, es *float64, nk int)
//
// The second part of the backward pop kernel (popSumBackVec6x2): the
// adjoints of the G' blocks.
TEXT ·popSumBackPVec6x2Asm(SB), NOSPLIT, $0-40
	MOVQ CP+0(FP), R14
	MOVQ B+8(FP), BX
	MOVQ E+16(FP), SI
	MOVQ es+24(FP), R8
	MOVQ nk+32(FP), CX

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

// Vector pop kernels for m = 9, |Q| = 3. A row (i, y) of a block holds the
// three entries u (or r) = 0, 1, 2 at 9i+3y; the kernels work on those
// triples as vectors of four with the last lane masked off (mask3), and on
// one symbol y at a time, looping over the split points k inside.

DATA mask3<>+0(SB)/8, $0xffffffffffffffff
DATA mask3<>+8(SB)/8, $0xffffffffffffffff
DATA mask3<>+16(SB)/8, $0xffffffffffffffff
DATA mask3<>+24(SB)/8, $0
GLOBL mask3<>(SB), RODATA|NOPTR, $32

// func popSumWVec9x3Asm(out, E, X, w *float64, nk int)
//
// out[(3i+y)·4 + r] += Σ_k w_k Σ_u E_k(i,y,u)·X_k(y,u,r), lane 3 staying
// zero: out is zero on entry. For each y, the nine rows i keep their sums
// in Y0–Y8 over the split points of a chunk of at most sixteen, whose E_k
// and X_k (14 KB) the three passes over y then find in the L1 cache; each
// sum adds its terms in the order of k, as in one pass over all k.
TEXT ·popSumWVec9x3Asm(SB), NOSPLIT, $0-40
	MOVQ    out+0(FP), DI
	MOVQ    E+8(FP), SI
	MOVQ    X+16(FP), DX
	MOVQ    w+24(FP), R8
	VMOVUPD mask3<>(SB), Y15

fwd9Chunk:
	// CX = min(16, k left); the argument nk keeps the k left after it.
	MOVQ    nk+32(FP), CX
	MOVQ    $16, AX
	CMPQ    CX, AX
	CMOVQGT AX, CX
	SUBQ    CX, nk+32(FP)
	XORQ    R9, R9 // 24y: symbol y within a row of E
	XORQ    BX, BX // 32y: symbol y within a row of out

fwd9Symbol:
	VMOVUPD 0(DI)(BX*1), Y0
	VMOVUPD 96(DI)(BX*1), Y1
	VMOVUPD 192(DI)(BX*1), Y2
	VMOVUPD 288(DI)(BX*1), Y3
	VMOVUPD 384(DI)(BX*1), Y4
	VMOVUPD 480(DI)(BX*1), Y5
	VMOVUPD 576(DI)(BX*1), Y6
	VMOVUPD 672(DI)(BX*1), Y7
	VMOVUPD 768(DI)(BX*1), Y8
	LEAQ (SI)(R9*1), R10 // E_k + 24y
	LEAQ (R9)(R9*2), R11
	ADDQ DX, R11 // X_k + 72y
	MOVQ R8, R12         // &w[k]
	MOVQ CX, R13         // k left

fwd9Loop:
	VBROADCASTSD (R12), Y12
	VMASKMOVPD   (R11), Y15, Y9   // X_k(y,0,:)
	VMASKMOVPD   24(R11), Y15, Y10
	VMASKMOVPD   48(R11), Y15, Y11
	VMULPD       Y12, Y9, Y9
	VMULPD       Y12, Y10, Y10
	VMULPD       Y12, Y11, Y11
	VBROADCASTSD 0(R10), Y13
	VFMADD231PD  Y9, Y13, Y0
	VBROADCASTSD 8(R10), Y14
	VFMADD231PD  Y10, Y14, Y0
	VBROADCASTSD 16(R10), Y13
	VFMADD231PD  Y11, Y13, Y0
	VBROADCASTSD 72(R10), Y13
	VFMADD231PD  Y9, Y13, Y1
	VBROADCASTSD 80(R10), Y14
	VFMADD231PD  Y10, Y14, Y1
	VBROADCASTSD 88(R10), Y13
	VFMADD231PD  Y11, Y13, Y1
	VBROADCASTSD 144(R10), Y13
	VFMADD231PD  Y9, Y13, Y2
	VBROADCASTSD 152(R10), Y14
	VFMADD231PD  Y10, Y14, Y2
	VBROADCASTSD 160(R10), Y13
	VFMADD231PD  Y11, Y13, Y2
	VBROADCASTSD 216(R10), Y13
	VFMADD231PD  Y9, Y13, Y3
	VBROADCASTSD 224(R10), Y14
	VFMADD231PD  Y10, Y14, Y3
	VBROADCASTSD 232(R10), Y13
	VFMADD231PD  Y11, Y13, Y3
	VBROADCASTSD 288(R10), Y13
	VFMADD231PD  Y9, Y13, Y4
	VBROADCASTSD 296(R10), Y14
	VFMADD231PD  Y10, Y14, Y4
	VBROADCASTSD 304(R10), Y13
	VFMADD231PD  Y11, Y13, Y4
	VBROADCASTSD 360(R10), Y13
	VFMADD231PD  Y9, Y13, Y5
	VBROADCASTSD 368(R10), Y14
	VFMADD231PD  Y10, Y14, Y5
	VBROADCASTSD 376(R10), Y13
	VFMADD231PD  Y11, Y13, Y5
	VBROADCASTSD 432(R10), Y13
	VFMADD231PD  Y9, Y13, Y6
	VBROADCASTSD 440(R10), Y14
	VFMADD231PD  Y10, Y14, Y6
	VBROADCASTSD 448(R10), Y13
	VFMADD231PD  Y11, Y13, Y6
	VBROADCASTSD 504(R10), Y13
	VFMADD231PD  Y9, Y13, Y7
	VBROADCASTSD 512(R10), Y14
	VFMADD231PD  Y10, Y14, Y7
	VBROADCASTSD 520(R10), Y13
	VFMADD231PD  Y11, Y13, Y7
	VBROADCASTSD 576(R10), Y13
	VFMADD231PD  Y9, Y13, Y8
	VBROADCASTSD 584(R10), Y14
	VFMADD231PD  Y10, Y14, Y8
	VBROADCASTSD 592(R10), Y13
	VFMADD231PD  Y11, Y13, Y8
	ADDQ $648, R10
	ADDQ $216, R11
	ADDQ $8, R12
	DECQ R13
	JNZ  fwd9Loop

	VMOVUPD Y0, 0(DI)(BX*1)
	VMOVUPD Y1, 96(DI)(BX*1)
	VMOVUPD Y2, 192(DI)(BX*1)
	VMOVUPD Y3, 288(DI)(BX*1)
	VMOVUPD Y4, 384(DI)(BX*1)
	VMOVUPD Y5, 480(DI)(BX*1)
	VMOVUPD Y6, 576(DI)(BX*1)
	VMOVUPD Y7, 672(DI)(BX*1)
	VMOVUPD Y8, 768(DI)(BX*1)
	ADDQ $24, R9
	ADDQ $32, BX
	CMPQ BX, $96
	JLT  fwd9Symbol

	IMUL3Q $648, CX, AX
	ADDQ   AX, SI
	IMUL3Q $216, CX, AX
	ADDQ   AX, DX
	LEAQ   (R8)(CX*8), R8
	CMPQ   nk+32(FP), $0
	JGT    fwd9Chunk
	VZEROUPPER
	RET

// func popSumBackVec9x3Asm(C, CP, B, E, XT, es *float64, nk int)
//
// C_k(i,y,u) += Σ_r B(i,y,r)·f_k·X_k(y,u,r) and CP_k(y,u,r) +=
// f_k·Σ_i E_k(i,y,u)·B(i,y,r), with XT_k(y,r,u) = X_k(y,u,r) (permXT9x3).
// A row of three entries is loaded with a masked load but stored as two
// entries and one (VMOVUPD, VEXTRACTF128, VMOVSD): a masked store is
// microcoded on AMD's Zen cores, where it made this kernel twice as slow.
// The split points go in chunks of at most eight: the three passes over y
// then find the chunk's C_k, E_k, XT_k and CP_k (14 KB) in the L1 cache,
// where over all k they would have to come from L2 three times (1.5×
// slower from nk = 100 on).
TEXT ·popSumBackVec9x3Asm(SB), NOSPLIT, $0-56
	MOVQ    C+0(FP), DI
	MOVQ    CP+8(FP), R14
	MOVQ    B+16(FP), BX
	MOVQ    E+24(FP), SI
	MOVQ    XT+32(FP), DX
	MOVQ    es+40(FP), R8
	VMOVUPD mask3<>(SB), Y15

back9Chunk:
	// CX = min(8, k left); the argument nk keeps the k left after it.
	MOVQ    nk+48(FP), CX
	MOVQ    $8, AX
	CMPQ    CX, AX
	CMOVQGT AX, CX
	SUBQ    CX, nk+48(FP)

	// C: for each y, over the chunk's k, the rows i one after another.
	XORQ R9, R9 // 24y

back9SymbolC:
	LEAQ (DI)(R9*1), R10 // C_k + 24y
	LEAQ (R9)(R9*2), R11
	ADDQ DX, R11 // XT_k + 72y
	LEAQ (BX)(R9*1), AX  // B + 24y
	MOVQ R8, R12
	MOVQ CX, R13

back9LoopC:
	VBROADCASTSD (R12), Y12
	VMASKMOVPD   (R11), Y15, Y9   // f·X_k(y,:,0)
	VMASKMOVPD   24(R11), Y15, Y10
	VMASKMOVPD   48(R11), Y15, Y11
	VMULPD       Y12, Y9, Y9
	VMULPD       Y12, Y10, Y10
	VMULPD       Y12, Y11, Y11
	VMASKMOVPD   0(R10), Y15, Y0
	VBROADCASTSD 0(AX), Y13
	VFMADD231PD  Y9, Y13, Y0
	VBROADCASTSD 8(AX), Y14
	VFMADD231PD  Y10, Y14, Y0
	VBROADCASTSD 16(AX), Y13
	VFMADD231PD  Y11, Y13, Y0
	VMOVUPD      X0, 0(R10)
	VEXTRACTF128 $1, Y0, X12
	VMOVSD       X12, 16(R10)
	VMASKMOVPD   72(R10), Y15, Y1
	VBROADCASTSD 72(AX), Y13
	VFMADD231PD  Y9, Y13, Y1
	VBROADCASTSD 80(AX), Y14
	VFMADD231PD  Y10, Y14, Y1
	VBROADCASTSD 88(AX), Y13
	VFMADD231PD  Y11, Y13, Y1
	VMOVUPD      X1, 72(R10)
	VEXTRACTF128 $1, Y1, X12
	VMOVSD       X12, 88(R10)
	VMASKMOVPD   144(R10), Y15, Y2
	VBROADCASTSD 144(AX), Y13
	VFMADD231PD  Y9, Y13, Y2
	VBROADCASTSD 152(AX), Y14
	VFMADD231PD  Y10, Y14, Y2
	VBROADCASTSD 160(AX), Y13
	VFMADD231PD  Y11, Y13, Y2
	VMOVUPD      X2, 144(R10)
	VEXTRACTF128 $1, Y2, X12
	VMOVSD       X12, 160(R10)
	VMASKMOVPD   216(R10), Y15, Y3
	VBROADCASTSD 216(AX), Y13
	VFMADD231PD  Y9, Y13, Y3
	VBROADCASTSD 224(AX), Y14
	VFMADD231PD  Y10, Y14, Y3
	VBROADCASTSD 232(AX), Y13
	VFMADD231PD  Y11, Y13, Y3
	VMOVUPD      X3, 216(R10)
	VEXTRACTF128 $1, Y3, X12
	VMOVSD       X12, 232(R10)
	VMASKMOVPD   288(R10), Y15, Y4
	VBROADCASTSD 288(AX), Y13
	VFMADD231PD  Y9, Y13, Y4
	VBROADCASTSD 296(AX), Y14
	VFMADD231PD  Y10, Y14, Y4
	VBROADCASTSD 304(AX), Y13
	VFMADD231PD  Y11, Y13, Y4
	VMOVUPD      X4, 288(R10)
	VEXTRACTF128 $1, Y4, X12
	VMOVSD       X12, 304(R10)
	VMASKMOVPD   360(R10), Y15, Y5
	VBROADCASTSD 360(AX), Y13
	VFMADD231PD  Y9, Y13, Y5
	VBROADCASTSD 368(AX), Y14
	VFMADD231PD  Y10, Y14, Y5
	VBROADCASTSD 376(AX), Y13
	VFMADD231PD  Y11, Y13, Y5
	VMOVUPD      X5, 360(R10)
	VEXTRACTF128 $1, Y5, X12
	VMOVSD       X12, 376(R10)
	VMASKMOVPD   432(R10), Y15, Y6
	VBROADCASTSD 432(AX), Y13
	VFMADD231PD  Y9, Y13, Y6
	VBROADCASTSD 440(AX), Y14
	VFMADD231PD  Y10, Y14, Y6
	VBROADCASTSD 448(AX), Y13
	VFMADD231PD  Y11, Y13, Y6
	VMOVUPD      X6, 432(R10)
	VEXTRACTF128 $1, Y6, X12
	VMOVSD       X12, 448(R10)
	VMASKMOVPD   504(R10), Y15, Y7
	VBROADCASTSD 504(AX), Y13
	VFMADD231PD  Y9, Y13, Y7
	VBROADCASTSD 512(AX), Y14
	VFMADD231PD  Y10, Y14, Y7
	VBROADCASTSD 520(AX), Y13
	VFMADD231PD  Y11, Y13, Y7
	VMOVUPD      X7, 504(R10)
	VEXTRACTF128 $1, Y7, X12
	VMOVSD       X12, 520(R10)
	VMASKMOVPD   576(R10), Y15, Y8
	VBROADCASTSD 576(AX), Y13
	VFMADD231PD  Y9, Y13, Y8
	VBROADCASTSD 584(AX), Y14
	VFMADD231PD  Y10, Y14, Y8
	VBROADCASTSD 592(AX), Y13
	VFMADD231PD  Y11, Y13, Y8
	VMOVUPD      X8, 576(R10)
	VEXTRACTF128 $1, Y8, X12
	VMOVSD       X12, 592(R10)
	ADDQ $648, R10
	ADDQ $216, R11
	ADDQ $8, R12
	DECQ R13
	JNZ  back9LoopC

	ADDQ $24, R9
	CMPQ R9, $72
	JLT  back9SymbolC

	// CP: for each y, B(i,y,:) for the nine rows i stay in Y0–Y8 over all
	// k; Y9–Y11 gather Σ_i E_k(i,y,u)·B(i,y,:) for u = 0, 1, 2.
	XORQ R9, R9

back9SymbolP:
	VMASKMOVPD 0(BX)(R9*1), Y15, Y0
	VMASKMOVPD 72(BX)(R9*1), Y15, Y1
	VMASKMOVPD 144(BX)(R9*1), Y15, Y2
	VMASKMOVPD 216(BX)(R9*1), Y15, Y3
	VMASKMOVPD 288(BX)(R9*1), Y15, Y4
	VMASKMOVPD 360(BX)(R9*1), Y15, Y5
	VMASKMOVPD 432(BX)(R9*1), Y15, Y6
	VMASKMOVPD 504(BX)(R9*1), Y15, Y7
	VMASKMOVPD 576(BX)(R9*1), Y15, Y8
	LEAQ (SI)(R9*1), R10  // E_k + 24y
	LEAQ (R9)(R9*2), R11
	ADDQ R14, R11 // CP_k + 72y
	MOVQ R8, R12
	MOVQ CX, R13

back9LoopP:
	VBROADCASTSD (R10), Y13
	VMULPD       Y0, Y13, Y9
	VBROADCASTSD 8(R10), Y14
	VMULPD       Y0, Y14, Y10
	VBROADCASTSD 16(R10), Y13
	VMULPD       Y0, Y13, Y11
	VBROADCASTSD 72(R10), Y13
	VFMADD231PD  Y1, Y13, Y9
	VBROADCASTSD 80(R10), Y14
	VFMADD231PD  Y1, Y14, Y10
	VBROADCASTSD 88(R10), Y13
	VFMADD231PD  Y1, Y13, Y11
	VBROADCASTSD 144(R10), Y13
	VFMADD231PD  Y2, Y13, Y9
	VBROADCASTSD 152(R10), Y14
	VFMADD231PD  Y2, Y14, Y10
	VBROADCASTSD 160(R10), Y13
	VFMADD231PD  Y2, Y13, Y11
	VBROADCASTSD 216(R10), Y13
	VFMADD231PD  Y3, Y13, Y9
	VBROADCASTSD 224(R10), Y14
	VFMADD231PD  Y3, Y14, Y10
	VBROADCASTSD 232(R10), Y13
	VFMADD231PD  Y3, Y13, Y11
	VBROADCASTSD 288(R10), Y13
	VFMADD231PD  Y4, Y13, Y9
	VBROADCASTSD 296(R10), Y14
	VFMADD231PD  Y4, Y14, Y10
	VBROADCASTSD 304(R10), Y13
	VFMADD231PD  Y4, Y13, Y11
	VBROADCASTSD 360(R10), Y13
	VFMADD231PD  Y5, Y13, Y9
	VBROADCASTSD 368(R10), Y14
	VFMADD231PD  Y5, Y14, Y10
	VBROADCASTSD 376(R10), Y13
	VFMADD231PD  Y5, Y13, Y11
	VBROADCASTSD 432(R10), Y13
	VFMADD231PD  Y6, Y13, Y9
	VBROADCASTSD 440(R10), Y14
	VFMADD231PD  Y6, Y14, Y10
	VBROADCASTSD 448(R10), Y13
	VFMADD231PD  Y6, Y13, Y11
	VBROADCASTSD 504(R10), Y13
	VFMADD231PD  Y7, Y13, Y9
	VBROADCASTSD 512(R10), Y14
	VFMADD231PD  Y7, Y14, Y10
	VBROADCASTSD 520(R10), Y13
	VFMADD231PD  Y7, Y13, Y11
	VBROADCASTSD 576(R10), Y13
	VFMADD231PD  Y8, Y13, Y9
	VBROADCASTSD 584(R10), Y14
	VFMADD231PD  Y8, Y14, Y10
	VBROADCASTSD 592(R10), Y13
	VFMADD231PD  Y8, Y13, Y11
	// The three rows of CP_k overlap as 32-byte vectors: all loads come
	// before the stores, or each load would wait for the store before it.
	VBROADCASTSD (R12), Y12
	VMASKMOVPD   (R11), Y15, Y13
	VFMADD213PD  Y13, Y12, Y9     // Y9 = f·Y9 + CP_k(y,0,:)
	VMASKMOVPD   24(R11), Y15, Y14
	VFMADD213PD  Y14, Y12, Y10
	VMASKMOVPD   48(R11), Y15, Y13
	VFMADD213PD  Y13, Y12, Y11
	VMOVUPD      X9, 0(R11)
	VEXTRACTF128 $1, Y9, X12
	VMOVSD       X12, 16(R11)
	VMOVUPD      X10, 24(R11)
	VEXTRACTF128 $1, Y10, X12
	VMOVSD       X12, 40(R11)
	VMOVUPD      X11, 48(R11)
	VEXTRACTF128 $1, Y11, X12
	VMOVSD       X12, 64(R11)
	ADDQ         $648, R10
	ADDQ         $216, R11
	ADDQ         $8, R12
	DECQ         R13
	JNZ          back9LoopP

	ADDQ $24, R9
	CMPQ R9, $72
	JLT  back9SymbolP

	IMUL3Q $648, CX, AX
	ADDQ   AX, DI
	ADDQ   AX, SI
	IMUL3Q $216, CX, AX
	ADDQ   AX, DX
	ADDQ   AX, R14
	LEAQ   (R8)(CX*8), R8
	CMPQ   nk+48(FP), $0
	JGT    back9Chunk
	VZEROUPPER
	RET

// func mulAdd9Asm(R, A, B *float64, f float64, K, sr, sc int)
//
// R(l,:) += f·Σ_{i<K} A(l,i)·B(i,:) for the nine rows l of R (9×9,
// row-major), B being K×9 row-major and A(l,i) the entry at A + 8·(l·sr +
// i·sc), so that one kernel serves A·B (sr = 9, sc = 1) and Aᵀ·B (sr = 1,
// sc = 9). Three rows at a time keep their sums in Y0–Y8: entries 0–3,
// 4–7 and 8 of each row.
TEXT ·mulAdd9Asm(SB), NOSPLIT, $0-56
	MOVQ         R+0(FP), DI
	MOVQ         A+8(FP), SI
	MOVQ         B+16(FP), DX
	VBROADCASTSD f+24(FP), Y14
	MOVQ         K+32(FP), CX
	MOVQ         sr+40(FP), R8
	SHLQ         $3, R8
	MOVQ         sc+48(FP), R9
	SHLQ         $3, R9
	MOVQ         $3, R10

mul9Block:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	MOVQ   SI, R11 // A(l0, i)
	MOVQ   DX, R12 // B(i, :)
	MOVQ   CX, R13

mul9Loop:
	VMOVUPD      (R12), Y9
	VMOVUPD      32(R12), Y10
	VMOVSD       64(R12), X11
	VBROADCASTSD (R11), Y12
	VFMADD231PD  Y9, Y12, Y0
	VFMADD231PD  Y10, Y12, Y1
	VFMADD231SD  X11, X12, X2
	VBROADCASTSD (R11)(R8*1), Y13
	VFMADD231PD  Y9, Y13, Y3
	VFMADD231PD  Y10, Y13, Y4
	VFMADD231SD  X11, X13, X5
	VBROADCASTSD (R11)(R8*2), Y12
	VFMADD231PD  Y9, Y12, Y6
	VFMADD231PD  Y10, Y12, Y7
	VFMADD231SD  X11, X12, X8
	ADDQ         R9, R11
	ADDQ         $72, R12
	DECQ         R13
	JNZ          mul9Loop

	VMOVUPD     (DI), Y9
	VFMADD231PD Y0, Y14, Y9
	VMOVUPD     Y9, (DI)
	VMOVUPD     32(DI), Y10
	VFMADD231PD Y1, Y14, Y10
	VMOVUPD     Y10, 32(DI)
	VMOVSD      64(DI), X11
	VFMADD231SD X2, X14, X11
	VMOVSD      X11, 64(DI)
	VMOVUPD     72(DI), Y9
	VFMADD231PD Y3, Y14, Y9
	VMOVUPD     Y9, 72(DI)
	VMOVUPD     104(DI), Y10
	VFMADD231PD Y4, Y14, Y10
	VMOVUPD     Y10, 104(DI)
	VMOVSD      136(DI), X11
	VFMADD231SD X5, X14, X11
	VMOVSD      X11, 136(DI)
	VMOVUPD     144(DI), Y9
	VFMADD231PD Y6, Y14, Y9
	VMOVUPD     Y9, 144(DI)
	VMOVUPD     176(DI), Y10
	VFMADD231PD Y7, Y14, Y10
	VMOVUPD     Y10, 176(DI)
	VMOVSD      208(DI), X11
	VFMADD231SD X8, X14, X11
	VMOVSD      X11, 208(DI)

	ADDQ $216, DI
	LEAQ (SI)(R8*2), SI
	ADDQ R8, SI
	DECQ R10
	JNZ  mul9Block
	VZEROUPPER
	RET

// func mulAdd6Asm(R, A, B *float64, f float64, K, sr, sc int)
//
// mulAdd9Asm for 6×6 R and K×6 B: three rows at a time keep their sums in
// Y0–Y5, entries 0–3 in a vector of four and 4–5 in one of two.
TEXT ·mulAdd6Asm(SB), NOSPLIT, $0-56
	MOVQ         R+0(FP), DI
	MOVQ         A+8(FP), SI
	MOVQ         B+16(FP), DX
	VBROADCASTSD f+24(FP), Y14
	MOVQ         K+32(FP), CX
	MOVQ         sr+40(FP), R8
	SHLQ         $3, R8
	MOVQ         sc+48(FP), R9
	SHLQ         $3, R9
	MOVQ         $2, R10

mul6Block:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	MOVQ   SI, R11 // A(l0, i)
	MOVQ   DX, R12 // B(i, :)
	MOVQ   CX, R13

mul6Loop:
	VMOVUPD      (R12), Y9
	VMOVUPD      32(R12), X10
	VBROADCASTSD (R11), Y12
	VFMADD231PD  Y9, Y12, Y0
	VFMADD231PD  X10, X12, X1
	VBROADCASTSD (R11)(R8*1), Y13
	VFMADD231PD  Y9, Y13, Y2
	VFMADD231PD  X10, X13, X3
	VBROADCASTSD (R11)(R8*2), Y12
	VFMADD231PD  Y9, Y12, Y4
	VFMADD231PD  X10, X12, X5
	ADDQ         R9, R11
	ADDQ         $48, R12
	DECQ         R13
	JNZ          mul6Loop

	VMOVUPD     (DI), Y9
	VFMADD231PD Y0, Y14, Y9
	VMOVUPD     Y9, (DI)
	VMOVUPD     32(DI), X10
	VFMADD231PD X1, X14, X10
	VMOVUPD     X10, 32(DI)
	VMOVUPD     48(DI), Y9
	VFMADD231PD Y2, Y14, Y9
	VMOVUPD     Y9, 48(DI)
	VMOVUPD     80(DI), X10
	VFMADD231PD X3, X14, X10
	VMOVUPD     X10, 80(DI)
	VMOVUPD     96(DI), Y9
	VFMADD231PD Y4, Y14, Y9
	VMOVUPD     Y9, 96(DI)
	VMOVUPD     128(DI), X10
	VFMADD231PD X5, X14, X10
	VMOVUPD     X10, 128(DI)

	ADDQ $144, DI
	LEAQ (SI)(R8*2), SI
	ADDQ R8, SI
	DECQ R10
	JNZ  mul6Block
	VZEROUPPER
	RET

DATA nan64<>+0(SB)/8, $0x7ff8000000000001
GLOBL nan64<>(SB), RODATA|NOPTR, $8

// func minMaxAsm(R *float64, n int) (lo, hi float64)
//
// The least and greatest of R[0..n) (n ≥ 1), lo NaN if any entry is NaN:
// four lanes at a time, the tail broadcast into all four.
TEXT ·minMaxAsm(SB), NOSPLIT, $0-32
	MOVQ         R+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD (SI), Y0
	VMOVAPD      Y0, Y1
	VXORPD       Y2, Y2, Y2
	CMPQ         CX, $4
	JLT          mmTail

mmLoop:
	VMOVUPD (SI), Y3
	VCMPPD  $3, Y3, Y3, Y4 // unordered: NaN lanes
	VORPD   Y4, Y2, Y2
	VMINPD  Y3, Y0, Y0
	VMAXPD  Y3, Y1, Y1
	ADDQ    $32, SI
	SUBQ    $4, CX
	CMPQ    CX, $4
	JGE     mmLoop

mmTail:
	TESTQ        CX, CX
	JZ           mmReduce
	VBROADCASTSD (SI), Y3
	VCMPPD       $3, Y3, Y3, Y4
	VORPD        Y4, Y2, Y2
	VMINPD       Y3, Y0, Y0
	VMAXPD       Y3, Y1, Y1
	ADDQ         $8, SI
	DECQ         CX
	JMP          mmTail

mmReduce:
	VEXTRACTF128 $1, Y0, X5
	VMINPD       X5, X0, X0
	VPERMILPD    $1, X0, X5
	VMINSD       X5, X0, X0
	VEXTRACTF128 $1, Y1, X6
	VMAXPD       X6, X1, X1
	VPERMILPD    $1, X1, X6
	VMAXSD       X6, X1, X1
	VMOVMSKPD    Y2, AX
	TESTQ        AX, AX
	JZ           mmDone
	VMOVSD       nan64<>(SB), X0

mmDone:
	VMOVSD X0, lo+16(FP)
	VMOVSD X1, hi+24(FP)
	VZEROUPPER
	RET
