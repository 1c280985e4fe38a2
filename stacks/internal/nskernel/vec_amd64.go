//go:build amd64 && !purego

package nskernel

import "golang.org/x/sys/cpu"

// The vector pop kernels of m = 6, |Q| = 2 are written in assembly
// (vec_amd64.s) for CPUs with AVX2 and FMA; the tag purego leaves them out.

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
	popSumBackVec6x2Asm(&C[0], &CP[0], &B[0], &E[0], &XT[0], &es[0], nk)
}

//go:noescape
func popSumWVec6x2Asm(acc, E, XP, w *float64, nk int)

//go:noescape
func popSumBackVec6x2Asm(C, CP, B, E, XT, es *float64, nk int)
