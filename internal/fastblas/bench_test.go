package fastblas

import (
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// BenchmarkSgemmPTB measures the float32 matrix-product rate of the
// selected BLAS on the largest product of a Penn Treebank training step,
// the output layer's: a chunk's B·T = 1,120 hidden states (256) times the
// 256 × 10,000 weights. Its GFLOP/s is the rate the "GEMM floor" of the
// PTB models is computed from: a model whose products take F flops per
// token can train at most GFLOP/s·10⁹/F tokens per second.
func BenchmarkSgemmPTB(b *testing.B) {
	const m, k, n = 32 * 35, 256, 10000
	x := blas32.General{Rows: m, Cols: k, Stride: k, Data: make([]float32, m*k)}
	w := blas32.General{Rows: k, Cols: n, Stride: n, Data: make([]float32, k*n)}
	y := blas32.General{Rows: m, Cols: n, Stride: n, Data: make([]float32, m*n)}
	for i := range x.Data {
		x.Data[i] = float32(i%7) / 7
	}
	for i := range w.Data {
		w.Data[i] = float32(i%5) / 5
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, x, w, 0, y)
	}
	b.ReportMetric(2*m*k*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
