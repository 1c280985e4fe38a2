package cuda

import (
	"runtime"
	"unsafe"
)

// cublasOperation_t values.
const (
	cublasOpN = 0
	cublasOpT = 1
)

func cublasOp(trans bool) uintptr {
	if trans {
		return cublasOpT
	}
	return cublasOpN
}

// checkGemm checks the sizes of a gemm for C ints.
func checkGemm(fn string, m, n, k, lda, ldb, ldc int) error {
	for _, a := range []struct {
		what string
		v    int
	}{{"m", m}, {"n", n}, {"k", k}, {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}} {
		if err := checkInt32(fn, a.what, a.v); err != nil {
			return err
		}
	}
	return nil
}

// Dgemm queues C = alpha op(A) op(B) + beta C on the stream
// (cublasDgemm_v2), for float64 matrices in column-major order as cuBLAS
// stores them: op(A) is m×k, op(B) is k×n and C is m×n, with leading
// dimensions lda, ldb and ldc. transA and transB select op(X) = Xᵀ
// (CUBLAS_OP_T) rather than X. A row-major product is had by swapping the
// operands: row-major C = A B is column-major Cᵀ = Bᵀ Aᵀ. alpha and beta
// are read on the host when Dgemm is called (in a graph capture, their
// values are captured).
func (c *Context) Dgemm(transA, transB bool, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, cc Ptr, ldc int) error {
	if err := checkGemm("cublasDgemm_v2", m, n, k, lda, ldb, ldc); err != nil {
		return err
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	c.scal64[0], c.scal64[1] = alpha, beta
	r := ccall(c.b.cublasDgemm, c.handle, cublasOp(transA), cublasOp(transB),
		uintptr(m), uintptr(n), uintptr(k),
		uintptr(unsafe.Pointer(&c.scal64[0])), uintptr(a), uintptr(lda), uintptr(b), uintptr(ldb),
		uintptr(unsafe.Pointer(&c.scal64[1])), uintptr(cc), uintptr(ldc))
	runtime.KeepAlive(c)
	return c.b.check("cublasDgemm_v2", r)
}

// Sgemm is Dgemm for float32 matrices (cublasSgemm_v2).
func (c *Context) Sgemm(transA, transB bool, m, n, k int, alpha float32, a Ptr, lda int, b Ptr, ldb int, beta float32, cc Ptr, ldc int) error {
	if err := checkGemm("cublasSgemm_v2", m, n, k, lda, ldb, ldc); err != nil {
		return err
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	c.scal32[0], c.scal32[1] = alpha, beta
	r := ccall(c.b.cublasSgemm, c.handle, cublasOp(transA), cublasOp(transB),
		uintptr(m), uintptr(n), uintptr(k),
		uintptr(unsafe.Pointer(&c.scal32[0])), uintptr(a), uintptr(lda), uintptr(b), uintptr(ldb),
		uintptr(unsafe.Pointer(&c.scal32[1])), uintptr(cc), uintptr(ldc))
	runtime.KeepAlive(c)
	return c.b.check("cublasSgemm_v2", r)
}
