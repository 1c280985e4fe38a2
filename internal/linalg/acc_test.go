package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/nsrnn/nsrnn/internal/fma"

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
	tc := accCase{transA: transA, m: m, n: n, k: k, a: randGeneral(r, ar, ac, special), b: randGeneral(r, k, n, special), c: randGeneral(r, m, n, special)}
	if special && len(tc.a.Data) > 2 && len(tc.b.Data) > 2 {
		tc.a.Data[r.IntN(len(tc.a.Data))] = math.NaN()
		tc.b.Data[r.IntN(len(tc.b.Data))] = math.Inf(1)
		tc.b.Data[r.IntN(len(tc.b.Data))] = math.Inf(-1)
	}
	return tc
}

// randGeneral returns a rows×cols matrix with a stride padded by 0 to 2,
// of normal deviates and, with special, zeros and negative zeros.
func randGeneral(r *rand.Rand, rows, cols int, special bool) blas64.General {
	pad := r.IntN(3)
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

// twinBits is sameBits for this package's kernels and their Go twins
// against gonum's product, except where gonum's product is its Go code and
// the compiler fuses its multiply-adds (arm64: package fma), which the
// kernels never do (Acc is then gonum's product itself): there the two
// agree within rounding (1e-12 times the larger of |want| and 1).
func twinBits(got, want blas64.General) error {
	if runtime.GOARCH == "amd64" || !fma.Fused() {
		return sameBits(got, want)
	}
	for i := range want.Data {
		g, w := got.Data[i], want.Data[i]
		if g == w || math.IsNaN(g) && math.IsNaN(w) {
			continue
		}
		if math.IsInf(w, 0) || math.IsNaN(w) || math.Abs(g-w) > 1e-12*math.Max(math.Abs(w), 1) {
			return fmt.Errorf("data[%d] = %v, want %v within rounding", i, g, w)
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
				if err := twinBits(got, want); err != nil {
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

// AccT's kernel gives gonum's A·Bᵀ bit for bit: inner dimensions around
// multiples of 4 (the tail of a dot product), entry counts around its
// blocks of 4, zeros, negative zeros, a NaN and infinities; and AccT equals
// blas64.Gemm in every build.
func TestAccT(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 7))
	var impl gonum.Implementation
	for _, s := range [][3]int{{1, 1, 1}, {10, 80, 20}, {10, 80, 22}, {3, 5, 3}, {4, 4, 4}, {7, 9, 5}, {2, 3, 1}, {10, 84, 20}, {127, 63, 9}, {64, 64, 67}, {200, 40, 13}} {
		m, n, k := s[0], s[1], s[2]
		for _, special := range []bool{false, true} {
			a, bb, c := randGeneral(r, m, k, special), randGeneral(r, n, k, special), randGeneral(r, m, n, special)
			if special && k > 1 {
				a.Data[r.IntN(len(a.Data))] = math.NaN()
				bb.Data[r.IntN(len(bb.Data))] = math.Inf(1)
			}
			name := fmt.Sprintf("%v special=%v", s, special)
			want := clone(c)
			impl.Dgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a.Data, a.Stride, bb.Data, bb.Stride, 1, want.Data, want.Stride)
			got := clone(c)
			for i := 0; i < m; i++ {
				row := got.Data[i*got.Stride : i*got.Stride+n]
				ai := a.Data[i*a.Stride : i*a.Stride+k]
				if accKernel {
					accDotRow(row, ai, bb.Data, bb.Stride)
				} else {
					accDotRowGo(row, ai, bb.Data, bb.Stride)
				}
			}
			if err := twinBits(got, want); err != nil {
				t.Errorf("%s: the kernel's rows: %v", name, err)
			}
			// The Go twin too (it documents the order the kernel keeps).
			got = clone(c)
			for i := 0; i < m; i++ {
				accDotRowGo(got.Data[i*got.Stride:i*got.Stride+n], a.Data[i*a.Stride:i*a.Stride+k], bb.Data, bb.Stride)
			}
			if err := twinBits(got, want); err != nil {
				t.Errorf("%s: the Go twin: %v", name, err)
			}
			got, want = clone(c), clone(c)
			AccT(a, bb, got)
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, bb, 1, want)
			if err := sameBits(got, want); err != nil {
				t.Errorf("%s: AccT against blas64.Gemm: %v", name, err)
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

func BenchmarkAccT(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range [][3]int{{10, 80, 20}, {10, 84, 20}, {10, 80, 22}} {
		m, n, k := s[0], s[1], s[2]
		a, bb, c := randGeneral(r, m, k, false), randGeneral(r, n, k, false), randGeneral(r, m, n, false)
		name := fmt.Sprintf("m%dn%dk%d", m, n, k)
		b.Run(name+"/gemm", func(b *testing.B) {
			for range b.N {
				blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, bb, 1, c)
			}
		})
		b.Run(name+"/acc", func(b *testing.B) {
			for range b.N {
				AccT(a, bb, c)
			}
		})
	}
}
