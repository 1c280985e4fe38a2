package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/nsrnn/nsrnn/internal/fastblas"
)

// Acc adds op(A)·B to C, op(A) being A, or Aᵀ with transA: the product
// blas64.Gemm(transA, NoTrans, 1, a, b, 1, c), with the same bits.
//
// In the pure-Go build on amd64 with AVX2, the products that gonum's BLAS
// would compute on one goroutine (the small ones of the formal-language
// models: a batch of 10, 20 hidden units) run in a kernel of this package
// that keeps a row block of C in registers over the whole sum, where
// gonum's adds one row of B into a row of C from memory at a time. It
// takes each C[i][j]'s terms in the same order (ascending along the inner
// dimension), skips the terms whose factor from A is zero as gonum does,
// and rounds each product before adding it (no fused multiply-add), so
// that the results are gonum's bit for bit. Elsewhere (OpenBLAS, other
// architectures, the tag purego, the larger products that gonum splits
// among goroutines) it is blas64.Gemm.
func Acc(transA bool, a, b, c blas64.General) {
	tA := blas.NoTrans
	if transA {
		tA = blas.Trans
	}
	m, n, k := c.Rows, c.Cols, b.Rows
	if !accKernel || fastblas.Name != "gonum" || blocksOf(m)*blocksOf(n) >= gonumMinParBlock ||
		m == 0 || n == 0 || k == 0 || !accShapeOK(transA, a, b, c) {
		blas64.Gemm(tA, blas.NoTrans, 1, a, b, 1, c)
		return
	}
	for i := 0; i < m; i++ {
		// A's factors of row i of the product: A[i][l] (stride 1) or
		// Aᵀ[i][l] = A[l][i] (stride a.Stride).
		base, stride := i*a.Stride, 1
		if transA {
			base, stride = i, a.Stride
		}
		accRow(c.Data[i*c.Stride:i*c.Stride+n], a.Data[base:], stride, b.Data, b.Stride, k)
	}
}

// AccT adds A·Bᵀ to C: the product blas64.Gemm(NoTrans, Trans, 1, a, b,
// 1, c), with the same bits, as Acc is. gonum takes each entry as a dot
// product of a row of A and a row of B, its terms in four running sums
// (by their index modulo 4; the terms after the last multiple of 4 into
// the first), added pairwise at the end; the kernel keeps the four sums
// of four entries at once in registers, with the same operations in the
// same order.
func AccT(a, b, c blas64.General) {
	m, n, k := c.Rows, c.Cols, a.Cols
	if !accKernel || fastblas.Name != "gonum" || blocksOf(m)*blocksOf(n) >= gonumMinParBlock ||
		m == 0 || n == 0 || k == 0 || !accTShapeOK(a, b, c) {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 1, c)
		return
	}
	for i := 0; i < m; i++ {
		accDotRow(c.Data[i*c.Stride:i*c.Stride+n], a.Data[i*a.Stride:i*a.Stride+k], b.Data, b.Stride)
	}
}

// accTShapeOK is accShapeOK for AccT.
func accTShapeOK(a, b, c blas64.General) bool {
	m, n, k := c.Rows, c.Cols, a.Cols
	return a.Rows == m && b.Rows == n && b.Cols == k && a.Stride >= k && b.Stride >= k && c.Stride >= n &&
		len(a.Data) >= (m-1)*a.Stride+k && len(b.Data) >= (n-1)*b.Stride+k && len(c.Data) >= (m-1)*c.Stride+n
}

// dotGo is gonum's DotUnitary on amd64, in Go: four running sums by index
// modulo 4 (the terms after the last multiple of 4 into the first), then
// (s1+s3) + (s0+s2).
func dotGo(x, y []float64) float64 {
	var s [4]float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		for r := range 4 {
			s[r] += float64(x[i+r] * y[i+r])
		}
	}
	for ; i < len(x); i++ {
		s[0] += float64(x[i] * y[i])
	}
	return (s[1] + s[3]) + (s[0] + s[2])
}

// accDotRowGo is accDotRow in Go, for the tests: c[j] += dot(a, row j of
// b) for j < len(c).
func accDotRowGo(c, a, b []float64, ldb int) {
	k := len(a)
	for j := range c {
		c[j] += dotGo(a, b[j*ldb:j*ldb+k])
	}
}

// gonum's BLAS computes a product on one goroutine when C has fewer than
// gonumMinParBlock blocks of gonumBlockSize×gonumBlockSize
// (gonum.org/v1/gonum/blas/gonum: blockSize, minParBlock).
const (
	gonumBlockSize   = 64
	gonumMinParBlock = 4
)

func blocksOf(d int) int { return (d + gonumBlockSize - 1) / gonumBlockSize }

// accShapeOK reports whether the operands' shapes and strides agree and
// their data hold them (otherwise blas64.Gemm panics, saying what is
// wrong).
func accShapeOK(transA bool, a, b, c blas64.General) bool {
	m, n, k := c.Rows, c.Cols, b.Rows
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	return a.Rows == ar && a.Cols == ac && b.Cols == n &&
		a.Stride >= ac && b.Stride >= n && c.Stride >= n &&
		len(a.Data) >= (ar-1)*a.Stride+ac && len(b.Data) >= (k-1)*b.Stride+n && len(c.Data) >= (m-1)*c.Stride+n
}

// accRowGo is accRow in Go, for the tests: c[j] += Σ_l a[l·as]·b[l·ldb+j]
// over l = 0 … k−1 in order, skipping a zero a[l·as], each product rounded
// before it is added.
func accRowGo(c, a []float64, as int, b []float64, ldb, k int) {
	n := len(c)
	for l := 0; l < k; l++ {
		v := a[l*as]
		if v == 0 {
			continue
		}
		for j, bv := range b[l*ldb : l*ldb+n] {
			c[j] += float64(v * bv) // the conversion forbids fusing
		}
	}
}
