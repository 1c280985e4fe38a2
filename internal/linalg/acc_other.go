//go:build !amd64 || purego

package linalg

// accKernel is false: Acc is blas64.Gemm (gonum's Go code may fuse
// multiply-adds on other architectures, which this package's would not
// match bit for bit).
const accKernel = false

func accRow(c, a []float64, as int, b []float64, ldb, k int) { accRowGo(c, a, as, b, ldb, k) }

func accDotRow(c, a, b []float64, ldb int) { accDotRowGo(c, a, b, ldb) }
