package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// accCase is C += op(A)·B with padded strides, and entries that test the
// kernel's rules: zeros and negative zeros in A (skipped, as gonum skips
// them), a NaN and infinities (not skipped), negative zeros in C.
type accCase struct {
	transA  bool
	m, n, k int
	a, b, c blas64.General
}

func newAccCase(r *rand.Rand, transA bool, m, n, k int, special bool) accCase {
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	fill := func(rows, cols, pad int) blas64.General {
		g := blas64.General{Rows: rows, Cols: cols, Stride: cols + pad, Data: make([]float64, max(rows*(cols+pad), 1))}
		for i := range g.Data {
			g.Data[i] = r.NormFloat64()
			if special {
				switch r.IntN(9) {
				case 0:
					g.Data[i] = 0
				case 1:
					g.Data[i] = math.Copysign(0, -1)
				}
			}
		}
		return g
	}
	tc := accCase{transA: transA, m: m, n: n, k: k, a: fill(ar, ac, r.IntN(3)), b: fill(k, n, r.IntN(3)), c: fill(m, n, r.IntN(3))}
	if special && len(tc.a.Data) > 2 && len(tc.b.Data) > 2 {
		tc.a.Data[r.IntN(len(tc.a.Data))] = math.NaN()
		tc.b.Data[r.IntN(len(tc.b.Data))] = math.Inf(1)
		tc.b.Data[r.IntN(len(tc.b.Data))] = math.Inf(-1)
	}
	return tc
}

func clone(g blas64.General) blas64.General {
	g.Data = append([]float64(nil), g.Data...)
	return g
}

// sameBits reports the first entry of C where got and want differ in
// their bits (a NaN is the same as any NaN).
func sameBits(got, want blas64.General) error {
	for i := range want.Data {
		g, w := got.Data[i], want.Data[i]
		if math.Float64bits(g) != math.Float64bits(w) && !(math.IsNaN(g) && math.IsNaN(w)) {
			return fmt.Errorf("data[%d] = %v (%#x), want %v (%#x)", i, g, math.Float64bits(g), w, math.Float64bits(w))
		}
	}
	return nil
}

// The kernel's rows give gonum's product bit for bit, on every shape the
// kernel serves (up to where gonum splits the product among goroutines),
// column counts around its blocks of 16 and 4, with zeros, negative
// zeros, a NaN and infinities; and Acc equals blas64.Gemm in every build.
func TestAcc(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	var impl gonum.Implementation
	shapes := [][3]int{{1, 1, 1}, {10, 20, 80}, {80, 20, 10}, {80, 20, 300}, {10, 80, 20}, {84, 20, 10},
		{3, 17, 5}, {5, 3, 7}, {7, 33, 1}, {127, 63, 9}, {64, 64, 64}, {65, 64, 3}, {200, 40, 11}, {2, 300, 4}}
	for _, s := range shapes {
		for _, transA := range []bool{false, true} {
			for _, special := range []bool{false, true} {
				tc := newAccCase(r, transA, s[0], s[1], s[2], special)
				name := fmt.Sprintf("%v transA=%v special=%v", s, transA, special)
				tA := blas.NoTrans
				if transA {
					tA = blas.Trans
				}
				want := clone(tc.c)
				impl.Dgemm(tA, blas.NoTrans, tc.m, tc.n, tc.k, 1, tc.a.Data, tc.a.Stride, tc.b.Data, tc.b.Stride, 1, want.Data, want.Stride)
				// The kernel (or its Go twin), row by row, as Acc runs it.
				got := clone(tc.c)
				for i := 0; i < tc.m; i++ {
					base, stride := i*tc.a.Stride, 1
					if transA {
						base, stride = i, tc.a.Stride
					}
					row := got.Data[i*got.Stride : i*got.Stride+tc.n]
					if accKernel {
						accRow(row, tc.a.Data[base:], stride, tc.b.Data, tc.b.Stride, tc.k)
					} else {
						accRowGo(row, tc.a.Data[base:], stride, tc.b.Data, tc.b.Stride, tc.k)
					}
				}
				if err := sameBits(got, want); err != nil {
					t.Errorf("%s: the kernel's rows: %v", name, err)
				}
				// Acc against blas64.Gemm, whichever BLAS the build has.
				got, want = clone(tc.c), clone(tc.c)
				Acc(transA, tc.a, tc.b, got)
				blas64.Gemm(tA, blas.NoTrans, 1, tc.a, tc.b, 1, want)
				if err := sameBits(got, want); err != nil {
					t.Errorf("%s: Acc against blas64.Gemm: %v", name, err)
				}
			}
		}
	}
}

func BenchmarkAcc(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range [][3]int{{80, 20, 10}, {80, 20, 300}, {10, 20, 80}, {84, 20, 10}} {
		for _, transA := range []bool{false, true} {
			tc := newAccCase(r, transA, s[0], s[1], s[2], false)
			tA := blas.NoTrans
			if transA {
				tA = blas.Trans
			}
			name := fmt.Sprintf("m%dn%dk%d-T%v", s[0], s[1], s[2], transA)
			b.Run(name+"/gemm", func(b *testing.B) {
				for range b.N {
					blas64.Gemm(tA, blas.NoTrans, 1, tc.a, tc.b, 1, tc.c)
				}
			})
			b.Run(name+"/acc", func(b *testing.B) {
				for range b.N {
					Acc(transA, tc.a, tc.b, tc.c)
				}
			})
		}
	}
}
