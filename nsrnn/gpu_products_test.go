package nsrnn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/internal/cuda"
)

// TestGPUProducts checks the engine's products against a float64 product
// on the host, through its own kernels for few terms or few columns
// (gemm_k, gemm_n) and through cuBLAS (EnvCUDASmallProducts=0), in both
// precisions: both layouts of B, beta 0 (C's old contents, NaN here, are
// not read) and 1, and leading dimensions wider than the matrices.
func TestGPUProducts(t *testing.T) {
	e := gpuTapeEngine(t, gpu(t))
	rng := rand.New(rand.NewPCG(5, 5))
	for _, sh := range [][3]int{{32, 3, 247}, {32, 1024, 2}, {32, 256, 10}, {5, 7, 33}, {3, 40, 40}, {1, 3, 1120}, {4, 33, 32}} {
		M, N, K := sh[0], sh[1], sh[2]
		for _, tB := range []bool{false, true} {
			for _, beta := range []float64{0, 1} {
				for _, p := range []Precision{Float64, Float32} {
					for _, cublas := range []bool{false, true} {
						lda, ldb, ldc := K+1, N+2, N+3
						if tB {
							ldb = K + 2
						}
						a := randFloats(rng, M*lda)
						bm := randFloats(rng, max(K*ldb, N*ldb))
						c := randFloats(rng, M*ldc)
						if beta == 0 {
							for i := range c {
								c[i] = math.NaN()
							}
						}
						if p == Float32 {
							// The device holds the values in float32.
							for _, v := range [][]float64{a, bm, c} {
								for i, x := range v {
									v[i] = float64(float32(x))
								}
							}
						}
						want := make([]float64, len(c))
						copy(want, c)
						for i := 0; i < M; i++ {
							for j := 0; j < N; j++ {
								s := 0.0
								for k := 0; k < K; k++ {
									bv := bm[k*ldb+j]
									if tB {
										bv = bm[j*ldb+k]
									}
									s += a[i*lda+k] * bv
								}
								if beta == 0 {
									want[i*ldc+j] = s
								} else {
									want[i*ldc+j] = beta*c[i*ldc+j] + s
								}
							}
						}
						dev := func(name string, v []float64) cuda.Ptr {
							ptr, err := e.buf("test."+name, len(v)*elem(p))
							if err != nil {
								t.Fatal(err)
							}
							if err := e.uploadReal(p, ptr, v); err != nil {
								t.Fatal(err)
							}
							return ptr
						}
						da, db, dc := dev("a", a), dev("b", bm), dev("c", c)
						e.cublasOnly = cublas
						if err := e.gemm(p, false, tB, M, N, K, da, lda, db, ldb, beta, dc, ldc); err != nil {
							t.Fatal(err)
						}
						got, err := e.download(p, dc, len(c))
						if err != nil {
							t.Fatal(err)
						}
						tol := 1e-13
						if p == Float32 {
							tol = 1e-5
						}
						for i := 0; i < M; i++ {
							for j := 0; j < ldc; j++ {
								g, w := got[i*ldc+j], want[i*ldc+j]
								if j >= N {
									if math.Float64bits(g) != math.Float64bits(c[i*ldc+j]) && !(math.IsNaN(g) && math.IsNaN(c[i*ldc+j])) {
										t.Fatalf("%v M,N,K=%d,%d,%d transB %v beta %v cuBLAS %v: C[%d][%d] outside the product changed", p, M, N, K, tB, beta, cublas, i, j)
									}
									continue
								}
								if math.IsNaN(g) || math.Abs(g-w) > tol*(1+math.Abs(w))*math.Sqrt(float64(K)) {
									t.Fatalf("%v M,N,K=%d,%d,%d transB %v beta %v cuBLAS %v: C[%d][%d] = %v, want %v", p, M, N, K, tB, beta, cublas, i, j, g, w)
								}
							}
						}
					}
				}
			}
		}
	}
	e.cublasOnly = false
}

func randFloats(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}
