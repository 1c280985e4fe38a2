package fastblas

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestGemmAgreesWithPureGo: whatever implementation the build selected,
// blas64's products agree with gonum's pure-Go ones, for every
// transposition the kernels use.
func TestGemmAgreesWithPureGo(t *testing.T) {
	t.Logf("BLAS %s (%s)", Name, Core)
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	const m, k, n = 37, 19, 23
	for _, tr := range [][2]blas.Transpose{{blas.NoTrans, blas.NoTrans}, {blas.NoTrans, blas.Trans}, {blas.Trans, blas.NoTrans}} {
		ar, ac := m, k
		if tr[0] == blas.Trans {
			ar, ac = k, m
		}
		br, bc := k, n
		if tr[1] == blas.Trans {
			br, bc = n, k
		}
		a, b, c := fill(ar*ac), fill(br*bc), fill(m*n)
		want := append([]float64(nil), c...)
		gonum.Implementation{}.Dgemm(tr[0], tr[1], m, n, k, 1.5, a, ac, b, bc, 0.5, want, n)
		got := append([]float64(nil), c...)
		blas64.Gemm(tr[0], tr[1], 1.5, blas64.General{Rows: ar, Cols: ac, Stride: ac, Data: a},
			blas64.General{Rows: br, Cols: bc, Stride: bc, Data: b}, 0.5, blas64.General{Rows: m, Cols: n, Stride: n, Data: got})
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("%v: element %d is %v, pure Go gives %v", tr, i, got[i], want[i])
			}
		}
	}
}

func TestSingleThreaded(t *testing.T) {
	before := Threads()
	r1 := SingleThreaded()
	r2 := SingleThreaded()
	if Name == "openblas" && Threads() != 1 {
		t.Fatalf("held: OpenBLAS runs %d threads, want 1", Threads())
	}
	r1()
	r1() // a second call does nothing
	if Name == "openblas" && Threads() != 1 {
		t.Fatalf("one holder left: OpenBLAS runs %d threads, want 1", Threads())
	}
	r2()
	if got := Threads(); got != before {
		t.Fatalf("released: %d threads, want the former %d", got, before)
	}
}
