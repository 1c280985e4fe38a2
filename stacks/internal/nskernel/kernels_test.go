package nskernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Reference versions of the small kernels, written as plainly as possible;
// the fast paths (fixed sizes, fused loops and, on amd64 with AVX2 and FMA, the
// vector kernels) must agree with them to rounding.

// refPop: out[i][y·Q+r] += Σ_u e[i][y·Q+u] · x[(y·Q+u)·Q+r].
func refPop(out, e, x []float64, m, Q int) {
	for i := 0; i < m; i++ {
		for y := 0; y < m/Q; y++ {
			for r := 0; r < Q; r++ {
				var s float64
				for u := 0; u < Q; u++ {
					s += e[i*m+y*Q+u] * x[(y*Q+u)*Q+r]
				}
				out[i*m+y*Q+r] += s
			}
		}
	}
}

// refPopBack: the adjoint of refPop for output adjoint B: cx (like e) and
// cxs (like x).
func refPopBack(cx, cxs, B, e, x []float64, m, Q int) {
	for i := 0; i < m; i++ {
		for y := 0; y < m/Q; y++ {
			for r := 0; r < Q; r++ {
				bv := B[i*m+y*Q+r]
				for u := 0; u < Q; u++ {
					cx[i*m+y*Q+u] += bv * x[(y*Q+u)*Q+r]
					cxs[(y*Q+u)*Q+r] += bv * e[i*m+y*Q+u]
				}
			}
		}
	}
}

// refPopSumW returns acc0 + Σ_k E_k ⋆ (w_k X_k) by the reference loops
// (the result of popSumW).
func refPopSumW(acc0, E, X, w []float64, m, Q int) []float64 {
	mm, mq := m*m, m*Q
	want := append([]float64(nil), acc0...)
	xs := make([]float64, mq)
	for k := range w {
		for e := range xs {
			xs[e] = w[k] * X[k*mq+e]
		}
		refPop(want, E[k*mm:(k+1)*mm], xs, m, Q)
	}
	return want
}

// refPopSumBack returns C0 and CP0 plus, for every k with w_k ≠ 0, the
// adjoint of E_k and w_k times the adjoint of w_k X_k for the output
// adjoint B, by the reference loops (the result of popSumBack).
func refPopSumBack(C0, CP0, B, E, X, w []float64, m, Q int) (wantC, wantCP []float64) {
	mm, mq := m*m, m*Q
	wantC, wantCP = append([]float64(nil), C0...), append([]float64(nil), CP0...)
	xs, cxs := make([]float64, mq), make([]float64, mq)
	for k := range w {
		if w[k] == 0 {
			continue
		}
		for e := range xs {
			xs[e] = w[k] * X[k*mq+e]
		}
		clear(cxs)
		refPopBack(wantC[k*mm:(k+1)*mm], cxs, B, E[k*mm:(k+1)*mm], xs, m, Q)
		for e, v := range cxs {
			wantCP[k*mq+e] += w[k] * v
		}
	}
	return wantC, wantCP
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.Float64()
	}
	return s
}

func closeSlices(t *testing.T, name string, got, want []float64) {
	t.Helper()
	for i := range want {
		if !relClose(got[i], want[i], 1e-13) && math.Abs(got[i]-want[i]) > 1e-14 {
			t.Fatalf("%s: [%d] = %.17g, want %.17g", name, i, got[i], want[i])
		}
	}
}

var kernelShapes = [][2]int{{1, 1}, {2, 1}, {3, 1}, {2, 2}, {4, 2}, {6, 2}, {8, 2}, {3, 3}, {6, 3}, {9, 3}, {12, 3}, {4, 4}, {12, 4}}

func TestPopKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, sh := range kernelShapes {
		m, Q := sh[0], sh[1]
		mm, mq := m*m, m*Q
		for _, nk := range []int{1, 2, 3, 7} {
			name := fmt.Sprintf("m=%d Q=%d nk=%d", m, Q, nk)
			E := randSlice(rng, nk*mm)
			X := randSlice(rng, nk*mq)
			w := randSlice(rng, nk)
			w[nk/2] = 0
			acc0 := randSlice(rng, mm)

			want := refPopSumW(acc0, E, X, w, m, Q)
			got := append([]float64(nil), acc0...)
			popSumW(got, E, X, w, make([]float64, nk*mq), m, Q)
			closeSlices(t, name+" popSumW", got, want)

			// Backward: C_k += adjoint of E_k, CP_k += w_k × adjoint of xs_k.
			B := randSlice(rng, mm)
			C0, CP0 := randSlice(rng, nk*mm), randSlice(rng, nk*mq)
			wantC, wantCP := refPopSumBack(C0, CP0, B, E, X, w, m, Q)
			gotC, gotCP := append([]float64(nil), C0...), append([]float64(nil), CP0...)
			popSumBack(gotC, gotCP, B, E, X, w, make([]float64, mq), make([]float64, mq), nk, m, Q)
			closeSlices(t, name+" popSumBack C", gotC, wantC)
			closeSlices(t, name+" popSumBack CP", gotCP, wantCP)
		}
	}
}

// refMul: R (n×p) += f · op(A) · op(B), where op(A) is A (n×k) or Aᵀ (A
// k×n) and op(B) is B (k×p) or Bᵀ (B p×k).
func refMul(R, A, B []float64, f float64, n, k, p int, ta, tb bool) {
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			var s float64
			for l := 0; l < k; l++ {
				a := A[i*k+l]
				if ta {
					a = A[l*n+i]
				}
				b := B[l*p+j]
				if tb {
					b = B[j*k+l]
				}
				s += a * b
			}
			R[i*p+j] += f * s
		}
	}
}

func TestDenseKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, sh := range kernelShapes {
		m, Q := sh[0], sh[1]
		for _, p := range []int{m, Q} {
			name := fmt.Sprintf("m=%d p=%d", m, p)
			A := randSlice(rng, m*m)
			Bp := randSlice(rng, m*p)
			Bmp := randSlice(rng, m*p) // m×p, used transposed as p×m
			f := 0.5 + rng.Float64()
			R0 := randSlice(rng, m*p)

			// matMul: R (m×p) += A (m×m) · B (m×p).
			want, got := append([]float64(nil), R0...), append([]float64(nil), R0...)
			refMul(want, A, Bp, 1, m, m, p, false, false)
			matMul(got, A, Bp, m, m, p)
			closeSlices(t, name+" matMul", got, want)

			// matMulAT: C (m×p) += f · Aᵀ · B, A m×m, B m×p.
			want, got = append([]float64(nil), R0...), append([]float64(nil), R0...)
			refMul(want, A, Bp, f, m, m, p, true, false)
			matMulAT(got, A, Bp, f, m, m, p)
			closeSlices(t, name+" matMulAT", got, want)

			// matMulBT: C (m×m) += f · A (m×p) · Bᵀ, B m×p.
			C0 := randSlice(rng, m*m)
			want, got = append([]float64(nil), C0...), append([]float64(nil), C0...)
			refMul(want, Bp, Bmp, f, m, p, m, false, true)
			matMulBT(got, Bp, Bmp, f, m, m, p)
			closeSlices(t, name+" matMulBT", got, want)
		}
		// matMulScaled: R (m×m) += f · A · B.
		A, B := randSlice(rng, m*m), randSlice(rng, m*m)
		R0 := randSlice(rng, m*m)
		want, got := append([]float64(nil), R0...), append([]float64(nil), R0...)
		refMul(want, A, B, 0.75, m, m, m, false, false)
		matMulScaled(got, A, B, 0.75, m)
		closeSlices(t, fmt.Sprintf("m=%d matMulScaled", m), got, want)
		// matMulScaledRows: R (n×m) += f · A (n×m) · B, a row (α) or a block.
		for _, n := range []int{1, m} {
			want, got := append([]float64(nil), R0[:n*m]...), append([]float64(nil), R0[:n*m]...)
			refMul(want, A[:n*m], B, 0.75, n, m, m, false, false)
			matMulScaledRows(got, A[:n*m], B, 0.75, n, m)
			closeSlices(t, fmt.Sprintf("m=%d n=%d matMulScaledRows", m, n), got, want)
		}
	}
}
