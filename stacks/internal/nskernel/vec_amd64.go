//go:build amd64 && !purego

package nskernel

import "golang.org/x/sys/cpu"

// The vector kernels are written in assembly for CPUs with AVX2 and FMA
// (vec_amd64.s), the pop kernels of m = 9, |Q| = 3 also for CPUs with
// AVX-512 (vec512_amd64.s); the tag purego leaves them out.

// useVec selects the vector kernels; tests turn it off to check the scalar
// kernels in the same binary.
var useVec = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// popSumWVec6x2 is popSumW for m = 6, |Q| = 2 with the G' blocks in the
// forward layout XP (24 entries per block, see permXP6x2).
func popSumWVec6x2(acc, E, XP, w []float64) {
	nk := len(w)
	if nk == 0 {
		return
	}
	_, _, _ = acc[35], E[nk*36-1], XP[nk*24-1] // the kernel reads and writes within these
	popSumWVec6x2Asm(&acc[0], &E[0], &XP[0], &w[0], nk)
}

// popSumBackVec6x2 is popSumBack for m = 6, |Q| = 2 with the G' blocks in
// the backward layout XT (24 entries per block, see permXT6x2).
func popSumBackVec6x2(C, CP, B, E, XT, es []float64) {
	nk := len(es)
	if nk == 0 {
		return
	}
	_, _, _, _, _ = C[nk*36-1], CP[nk*12-1], B[35], E[nk*36-1], XT[nk*24-1]
	popSumBackCVec6x2Asm(&C[0], &B[0], &XT[0], &es[0], nk)
	popSumBackPVec6x2Asm(&CP[0], &B[0], &E[0], &es[0], nk)
}

//go:noescape
func popSumWVec6x2Asm(acc, E, XP, w *float64, nk int)

//go:noescape
func popSumBackCVec6x2Asm(C, B, XT, es *float64, nk int)

//go:noescape
func popSumBackPVec6x2Asm(CP, B, E, es *float64, nk int)

// popSumWVec9x3 is popSumW for m = 9, |Q| = 3, with the G' blocks X in
// their own layout.
func popSumWVec9x3(acc, E, X, w []float64) {
	nk := len(w)
	if nk == 0 {
		return
	}
	_, _, _ = acc[80], E[nk*81-1], X[nk*27-1]
	var out [108]float64 // zero: the kernel adds to it
	popSumWVec9x3Asm(&out[0], &E[0], &X[0], &w[0], nk)
	for iy := 0; iy < 27; iy++ {
		a, o := (*[3]float64)(acc[3*iy:]), (*[4]float64)(out[4*iy:])
		a[0] += o[0]
		a[1] += o[1]
		a[2] += o[2]
	}
}

// popSumBackVec9x3 is popSumBack for m = 9, |Q| = 3, with the G' blocks in
// the backward layout XT (27 entries per block, see permXT9x3).
func popSumBackVec9x3(C, CP, B, E, XT, es []float64) {
	nk := len(es)
	if nk == 0 {
		return
	}
	_, _, _, _, _ = C[nk*81-1], CP[nk*27-1], B[80], E[nk*81-1], XT[nk*27-1]
	popSumBackVec9x3Asm(&C[0], &CP[0], &B[0], &E[0], &XT[0], &es[0], nk)
}

//go:noescape
func popSumWVec9x3Asm(out, E, X, w *float64, nk int)

//go:noescape
func popSumBackVec9x3Asm(C, CP, B, E, XT, es *float64, nk int)

// mulAdd9 sets R (9×9) += f·A′·B for B (K×9, row-major) and A′(l,i) =
// A[l·sr + i·sc]: A·B with sr = 9, sc = 1, Aᵀ·B with sr = 1, sc = 9. K ≥ 1.
func mulAdd9(R, A, B []float64, f float64, K, sr, sc int) {
	_, _, _ = R[80], B[K*9-1], A[8*sr+(K-1)*sc]
	mulAdd9Asm(&R[0], &A[0], &B[0], f, K, sr, sc)
}

//go:noescape
func mulAdd9Asm(R, A, B *float64, f float64, K, sr, sc int)

// mulAdd6 is mulAdd9 for R (6×6) and B (K×6).
func mulAdd6(R, A, B []float64, f float64, K, sr, sc int) {
	_, _, _ = R[35], B[K*6-1], A[5*sr+(K-1)*sc]
	mulAdd6Asm(&R[0], &A[0], &B[0], f, K, sr, sc)
}

//go:noescape
func mulAdd6Asm(R, A, B *float64, f float64, K, sr, sc int)

// useZ selects the 512-bit pop kernels of |Q| = 3 (m = 9 and 12), and
// useZ6 those of |Q| = 2 (m = 6), which also use the 256-bit registers
// 16–31 (AVX-512VL).
var (
	useZ  = useVec && cpu.X86.HasAVX512F
	useZ6 = useZ && cpu.X86.HasAVX512VL
)

// popSumBackZ9x3 is popSumBack for m = 9, |Q| = 3 with AVX-512: bx holds
// the block adjoint B expanded (bexp9x3), XR the G' blocks with each
// transposed (permXR9x3), and the G' adjoints are added to CPT, in the
// layout of XR.
func popSumBackZ9x3(C, CPT, bx, E, XR, es []float64) {
	nk := len(es)
	if nk == 0 {
		return
	}
	_, _, _, _, _ = C[nk*81-1], CPT[nk*27-1], bx[242], E[nk*81-1], XR[nk*27-1]
	popSumBackZ9x3Asm(&C[0], &CPT[0], &bx[0], &E[0], &XR[0], &es[0], nk)
	popSumBackZTail9x3Asm(&C[0], &CPT[0], &bx[216], &E[0], &XR[0], &es[0], nk)
}

//go:noescape
func popSumBackZ9x3Asm(C, CPT, bx, E, XR, es *float64, nk int)

//go:noescape
func popSumBackZTail9x3Asm(C, CPT, B8, E, XR, es *float64, nk int)

// minMax returns the least and greatest entry of R (len ≥ 1), the least
// NaN if any entry is NaN.
func minMax(R []float64) (lo, hi float64) {
	if !useVec {
		return minMaxGo(R)
	}
	return minMaxAsm(&R[0], len(R))
}

//go:noescape
func minMaxAsm(R *float64, n int) (lo, hi float64)

// popSumWZ6x2 is popSumWVec6x2 with AVX-512, the G' blocks in the layout
// of permXZ6x2: the same results, bit for bit.
func popSumWZ6x2(acc, E, XZ, w []float64) {
	nk := len(w)
	if nk == 0 {
		return
	}
	_, _, _ = acc[35], E[nk*36-1], XZ[nk*24-1] // the kernel reads and writes within these
	popSumWZ6x2Asm(&acc[0], &E[0], &XZ[0], &w[0], nk)
}

//go:noescape
func popSumWZ6x2Asm(acc, E, XZ, w *float64, nk int)

// popSumBackZ6x2 is popSumBackVec6x2 with AVX-512, the G' blocks in the
// layout of permXTZ6x2: the same results, bit for bit.
func popSumBackZ6x2(C, CP, B, E, XZ, es []float64) {
	nk := len(es)
	if nk == 0 {
		return
	}
	_, _, _, _, _ = C[nk*36-1], CP[nk*12-1], B[35], E[nk*36-1], XZ[nk*24-1]
	popSumBackCZ6x2Asm(&C[0], &B[0], &XZ[0], &es[0], nk)
	popSumBackPZ6x2Asm(&CP[0], &B[0], &E[0], &es[0], nk)
}

//go:noescape
func popSumBackCZ6x2Asm(C, B, XZ, es *float64, nk int)

//go:noescape
func popSumBackPZ6x2Asm(CP, B, E, es *float64, nk int)

// popSumWZ9x3 is popSumW for m = 9, |Q| = 3 with AVX-512, the G' blocks in
// the layout of permXE9x3.
func popSumWZ9x3(acc, E, XE, w []float64) {
	nk := len(w)
	if nk == 0 {
		return
	}
	_, _, _ = acc[80], E[nk*81-1], XE[nk*27-1]
	popSumWZ9x3Asm(&acc[0], &E[0], &XE[0], &w[0], nk)
}

//go:noescape
func popSumWZ9x3Asm(acc, E, XE, w *float64, nk int)

// popSumWZ12x3 is popSumW for m = 12, |Q| = 3 with AVX-512, the G' blocks in
// the layout of permXE12x3.
func popSumWZ12x3(acc, E, XE, w []float64) {
	nk := len(w)
	if nk == 0 {
		return
	}
	_, _, _ = acc[143], E[nk*144-1], XE[nk*72-1]
	popSumWZ12x3Asm(&acc[0], &E[0], &XE[0], &w[0], nk)
}

// popSumBackZ12x3 is popSumBack for m = 12, |Q| = 3 with AVX-512: B is the
// block adjoint, bx (432 entries) scratch for its expansion, XT the G'
// blocks in the layout of permXT12x3, and the G' adjoints are added to CPT
// (36 entries per block, r major: see addCPT12).
func popSumBackZ12x3(C, CPT, B, bx, E, XT, es []float64) {
	nk := len(es)
	if nk == 0 {
		return
	}
	_, _, _, _, _, _ = C[nk*144-1], CPT[nk*36-1], B[143], bx[431], E[nk*144-1], XT[nk*72-1]
	bexp12x3Asm(&bx[0], &B[0])
	popSumBackZ12x3Asm(&C[0], &CPT[0], &bx[0], &E[0], &XT[0], &es[0], nk)
}

//go:noescape
func popSumWZ12x3Asm(acc, E, XE, w *float64, nk int)

//go:noescape
func popSumBackZ12x3Asm(C, CPT, bx, E, XT, es *float64, nk int)

//go:noescape
func bexp12x3Asm(bx, B *float64)

// mulAdd12 is mulAdd9 for R (12×12) and B (K×12), with AVX-512.
func mulAdd12(R, A, B []float64, f float64, K, sr, sc int) {
	_, _, _ = R[143], B[K*12-1], A[11*sr+(K-1)*sc]
	mulAdd12Asm(&R[0], &A[0], &B[0], f, K, sr, sc)
}

//go:noescape
func mulAdd12Asm(R, A, B *float64, f float64, K, sr, sc int)
