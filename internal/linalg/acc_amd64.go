//go:build amd64 && !purego

package linalg

import "golang.org/x/sys/cpu"

// accKernel reports whether accRow has its AVX2 kernel.
var accKernel = cpu.X86.HasAVX2

// accRow sets c[j] += Σ_l a[l·as]·b[l·ldb+j] for j < len(c), over l = 0 …
// k−1 in order, skipping a zero a[l·as] (as gonum's BLAS does), each
// product rounded before it is added (accRowAVX2). The caller checks the
// bounds.
func accRow(c, a []float64, as int, b []float64, ldb, k int) {
	accRowAVX2(&c[0], &a[0], as, &b[0], ldb, k, len(c))
}

//go:noescape
func accRowAVX2(c, a *float64, as int, b *float64, ldb, k, n int)

// accDotRow sets c[j] += dot(a, b[j·ldb : j·ldb+len(a)]) for j < len(c),
// each dot product summed as gonum's DotUnitary sums it (accDotAVX2). The
// caller checks the bounds.
func accDotRow(c, a, b []float64, ldb int) {
	accDotAVX2(&c[0], &a[0], &b[0], ldb, len(a), len(c))
}

//go:noescape
func accDotAVX2(c, a, b *float64, ldb, k, n int)
