package nskernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// withVec runs f with the vector kernels on (if available) or off.
func withVec(on bool, f func()) {
	old := useVec
	useVec = on && old
	defer func() { useVec = old }()
	f()
}

// TestVecKernels checks the vector pop kernels (amd64 assembly
// with AVX2 and FMA) against the reference loops.
func TestVecKernels(t *testing.T) {
	if !useVec {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(25, 26))
	const m, Q, mm, mq = 6, 2, 36, 12
	for _, nk := range []int{1, 2, 3, 7} {
		name := fmt.Sprintf("nk=%d", nk)
		E, X, w := randSlice(rng, nk*mm), randSlice(rng, nk*mq), randSlice(rng, nk)
		w[nk/2] = 0
		acc0 := randSlice(rng, mm)
		want := refPopSumW(acc0, E, X, w, m, Q)
		xv := make([]float64, nk*24)
		permXP6x2(xv, X, nk)
		got := append([]float64(nil), acc0...)
		popSumWVec6x2(got, E, xv, w)
		closeSlices(t, name+" popSumWVec6x2", got, want)

		B := randSlice(rng, mm)
		C0, CP0 := randSlice(rng, nk*mm), randSlice(rng, nk*mq)
		wantC, wantCP := refPopSumBack(C0, CP0, B, E, X, w, m, Q)
		permXT6x2(xv, X, nk)
		gotC, gotCP := append([]float64(nil), C0...), append([]float64(nil), CP0...)
		popSumBackVec6x2(gotC, gotCP, B, E, xv, w)
		closeSlices(t, name+" popSumBackVec6x2 C", gotC, wantC)
		closeSlices(t, name+" popSumBackVec6x2 CP", gotCP, wantCP)
	}
}

// TestVecKernels9x3 checks the vector pop kernels of m = 9, |Q| = 3 against
// the reference loops, with the slices cut exactly to size so that a read
// or write past a block's last entry would show, for counts of split points
// below, at and past the kernels' chunks (16 forward, 8 backward).
func TestVecKernels9x3(t *testing.T) {
	if !useVec {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(29, 30))
	const m, Q, mm, mq = 9, 3, 81, 27
	for _, nk := range []int{1, 2, 3, 8, 9, 16, 17, 41} {
		name := fmt.Sprintf("nk=%d", nk)
		E, X, w := randSlice(rng, nk*mm), randSlice(rng, nk*mq), randSlice(rng, nk)
		w[nk/2] = 0
		acc0 := randSlice(rng, mm)
		want := refPopSumW(acc0, E, X, w, m, Q)
		got := append([]float64(nil), acc0...)
		popSumWVec9x3(got, E[:nk*mm:nk*mm], X[:nk*mq:nk*mq], w)
		closeSlices(t, name+" popSumWVec9x3", got, want)

		B := randSlice(rng, mm)
		C0, CP0 := randSlice(rng, nk*mm), randSlice(rng, nk*mq)
		wantC, wantCP := refPopSumBack(C0, CP0, B, E, X, w, m, Q)
		// Guards after C and CP: the kernel must leave them alone.
		cBuf := append(append([]float64(nil), C0...), 7, 7, 7, 7)
		cpBuf := append(append([]float64(nil), CP0...), 7, 7, 7, 7)
		xt := make([]float64, nk*mq)
		permXT9x3(xt, X, nk)
		popSumBackVec9x3(cBuf[:nk*mm:nk*mm], cpBuf[:nk*mq:nk*mq], B, E, xt, w)
		closeSlices(t, name+" popSumBackVec9x3 C", cBuf[:nk*mm], wantC)
		closeSlices(t, name+" popSumBackVec9x3 CP", cpBuf[:nk*mq], wantCP)
		for _, g := range [][]float64{cBuf[nk*mm:], cpBuf[nk*mq:]} {
			for _, v := range g {
				if v != 7 {
					t.Fatalf("%s: popSumBackVec9x3 wrote past its blocks: %v", name, g)
				}
			}
		}
	}
}

// TestPermXT9x3 checks the transposed layout entry by entry.
func TestPermXT9x3(t *testing.T) {
	const nk = 2
	X := make([]float64, nk*27)
	for i := range X {
		X[i] = float64(i)
	}
	XT := make([]float64, nk*27)
	permXT9x3(XT, X, nk)
	for k := 0; k < nk; k++ {
		for y := 0; y < 3; y++ {
			for u := 0; u < 3; u++ {
				for r := 0; r < 3; r++ {
					if got, want := XT[k*27+9*y+3*r+u], X[k*27+9*y+3*u+r]; got != want {
						t.Fatalf("k=%d (y,u,r)=(%d,%d,%d): %v, want %v", k, y, u, r, got, want)
					}
				}
			}
		}
	}
}

// TestVecTape: the tape gives the same readings and gradients with and
// without the vector kernels (to rounding).
func TestVecTape(t *testing.T) {
	if !useVec {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(27, 28))
	for _, c := range []Config{
		{States: 2, Symbols: 3, StateReading: true},
		{States: 2, Symbols: 3, Fixed: true},
		{States: 2, Symbols: 3, StateReading: true, Window: 7},
		{States: 3, Symbols: 3, StateReading: true},
		{States: 3, Symbols: 3, Fixed: true, Window: 9},
		{States: 3, Symbols: 4, StateReading: true},
		{States: 3, Symbols: 4, Fixed: true, Window: 9},
	} {
		const B, n = 3, 25
		ld := randLD(rng, c, B, n, 3)
		coef := make([][]float64, n)
		for s := range coef {
			coef[s] = randSlice(rng, B*c.ReadingSize())
		}
		var ls float64
		var gs [][]float64
		withVec(false, func() { ls, gs = lossAndGrad(NewTape(c, B, n), false, ld, coef, true) })
		// The vector kernels, with the 512-bit ones (of |Q| = 2 and 3)
		// and, where there are, without them.
		for _, z := range []bool{false, true} {
			if z && !useZ {
				continue
			}
			oldZ, oldZ6 := useZ, useZ6
			useZ, useZ6 = z, z && oldZ6
			var lv float64
			var gv [][]float64
			withVec(true, func() { lv, gv = lossAndGrad(NewTape(c, B, n), false, ld, coef, true) })
			useZ, useZ6 = oldZ, oldZ6
			if !relClose(lv, ls, 1e-12) {
				t.Fatalf("%+v, AVX-512 %v: loss %v with vector kernels, %v without", c, z, lv, ls)
			}
			for s := range gs {
				closeSlices(t, fmt.Sprintf("%+v, AVX-512 %v: gradient step %d", c, z, s+1), gv[s], gs[s])
			}
		}
	}
}

// TestMulAdd checks the vector product kernels (mulAdd6, mulAdd9, mulAdd12,
// through mulAddV) in each of their uses (A·B, Aᵀ·B, and A·Bᵀ through a transposed
// B of |Q| rows) against plain loops, with guard entries after R.
func TestMulAdd(t *testing.T) {
	if !useVec {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	for _, sz := range []struct {
		m, Q      int
		seed, seq uint64
	}{{9, 3, 31, 32}, {6, 2, 33, 34}, {12, 3, 43, 44}} {
		if !hasMulAdd(sz.m) {
			continue // m = 12 needs AVX-512
		}
		m, mm := sz.m, sz.m*sz.m
		rng := rand.New(rand.NewPCG(sz.seed, sz.seq))
		for _, c := range []struct {
			name      string
			K, sr, sc int
		}{{"A·B", m, m, 1}, {"Aᵀ·B", m, 1, m}, {fmt.Sprintf("A(%d×%d)·B(%d×%d)", m, sz.Q, sz.Q, m), sz.Q, sz.Q, 1}, {"K=1", 1, m, 1}} {
			name := fmt.Sprintf("m=%d %s", m, c.name)
			A, B := randSlice(rng, (m-1)*c.sr+(c.K-1)*c.sc+1), randSlice(rng, c.K*m)
			R0 := randSlice(rng, mm)
			const f = 0.625
			want := append([]float64(nil), R0...)
			for l := 0; l < m; l++ {
				for j := 0; j < m; j++ {
					var s float64
					for i := 0; i < c.K; i++ {
						s += A[l*c.sr+i*c.sc] * B[i*m+j]
					}
					want[l*m+j] += f * s
				}
			}
			buf := append(append([]float64(nil), R0...), 7, 7, 7, 7)
			mulAddV(buf[:mm:mm], A[:len(A):len(A)], B[:len(B):len(B)], f, m, c.K, c.sr, c.sc)
			closeSlices(t, name, buf[:mm], want)
			for _, v := range buf[mm:] {
				if v != 7 {
					t.Fatalf("%s: mulAddV wrote past R: %v", name, buf[mm:])
				}
			}
		}
	}
}

// TestZKernel9x3 checks the 512-bit pop kernels of m = 9, |Q| = 3 (with
// their layouts: permXE9x3; bexp9x3, permXR9x3, addCPT) against the
// reference loops, with the outputs cut exactly to size and guarded.
func TestZKernel9x3(t *testing.T) {
	if !useZ {
		t.Skip("no AVX-512 kernels in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(37, 38))
	const m, Q, mm, mq = 9, 3, 81, 27
	for _, nk := range []int{1, 2, 5} {
		name := fmt.Sprintf("nk=%d", nk)
		E, X, w := randSlice(rng, nk*mm), randSlice(rng, nk*mq), randSlice(rng, nk)
		w[nk/2] = 0
		B := randSlice(rng, mm)
		C0, CP0 := randSlice(rng, nk*mm), randSlice(rng, nk*mq)
		acc0 := randSlice(rng, mm)
		want := refPopSumW(acc0, E, X, w, m, Q)
		xe := make([]float64, nk*mq)
		permXE9x3(xe, X, nk)
		accBuf := append(append([]float64(nil), acc0...), 7, 7, 7, 7, 7, 7, 7, 7)
		popSumWZ9x3(accBuf[:mm:mm], E[:nk*mm:nk*mm], xe[:nk*mq:nk*mq], w)
		closeSlices(t, name+" popSumWZ9x3", accBuf[:mm], want)
		for _, v := range accBuf[mm:] {
			if v != 7 {
				t.Fatalf("%s: popSumWZ9x3 wrote past acc: %v", name, accBuf[mm:])
			}
		}

		wantC, wantCP := refPopSumBack(C0, CP0, B, E, X, w, m, Q)
		cBuf := append(append([]float64(nil), C0...), 7, 7, 7, 7, 7, 7, 7, 7)
		cpt := append(make([]float64, nk*mq), 7, 7, 7, 7, 7, 7, 7, 7)
		xr, bx := make([]float64, nk*mq), make([]float64, 243)
		permXR9x3(xr, X, nk)
		bexp9x3(bx, B)
		popSumBackZ9x3(cBuf[:nk*mm:nk*mm], cpt[:nk*mq:nk*mq], bx, E[:nk*mm:nk*mm], xr[:nk*mq:nk*mq], w)
		gotCP := append([]float64(nil), CP0...)
		addCPT(gotCP, cpt, nk)
		closeSlices(t, name+" popSumBackZ9x3 C", cBuf[:nk*mm], wantC)
		closeSlices(t, name+" popSumBackZ9x3 CP", gotCP, wantCP)
		for _, g := range [][]float64{cBuf[nk*mm:], cpt[nk*mq:]} {
			for _, v := range g {
				if v != 7 {
					t.Fatalf("%s: popSumBackZ9x3 wrote past its blocks: %v", name, g)
				}
			}
		}
	}
}

// TestMinMax checks minMax (the vector one where there is one) against
// minMaxGo and a sort, for every length up to 100, with a NaN anywhere.
func TestMinMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	for n := 1; n <= 100; n++ {
		R := make([]float64, n)
		for i := range R {
			R[i] = rng.NormFloat64() * math.Exp(rng.NormFloat64()*100)
		}
		want := slices.Clone(R)
		slices.Sort(want)
		lo, hi := minMax(R)
		glo, ghi := minMaxGo(R)
		if lo != want[0] || hi != want[n-1] || glo != lo || ghi != hi {
			t.Fatalf("n=%d: minMax %v %v, minMaxGo %v %v, want %v %v", n, lo, hi, glo, ghi, want[0], want[n-1])
		}
		R[rng.IntN(n)] = math.NaN()
		if lo, _ := minMax(R); !math.IsNaN(lo) {
			t.Fatalf("n=%d: minMax of a slice with a NaN: lo = %v", n, lo)
		}
		if lo, _ := minMaxGo(R); !math.IsNaN(lo) {
			t.Fatalf("n=%d: minMaxGo of a slice with a NaN: lo = %v", n, lo)
		}
	}
}

// TestZKernel12x3 checks the 512-bit pop kernels of m = 12, |Q| = 3 (with
// their layouts: permXE12x3; permXT12x3, addCPT12) against the reference
// loops, with the outputs cut exactly to size and guarded, a zero weight
// (skipped by the backward kernel) among the others.
func TestZKernel12x3(t *testing.T) {
	if !useZ {
		t.Skip("no AVX-512 kernels in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	const m, Q, mm, mq = 12, 3, 144, 36
	guard := []float64{7, 7, 7, 7, 7, 7, 7, 7}
	for _, nk := range []int{1, 2, 5, 33} {
		name := fmt.Sprintf("nk=%d", nk)
		E, X, w := randSlice(rng, nk*mm), randSlice(rng, nk*mq), randSlice(rng, nk)
		w[nk/2] = 0
		B := randSlice(rng, mm)
		C0, CP0 := randSlice(rng, nk*mm), randSlice(rng, nk*mq)
		acc0 := randSlice(rng, mm)
		want := refPopSumW(acc0, E, X, w, m, Q)
		xe := make([]float64, nk*2*mq)
		permXE12x3(xe, X, nk)
		accBuf := append(slices.Clone(acc0), guard...)
		popSumWZ12x3(accBuf[:mm:mm], E[:nk*mm:nk*mm], xe, w)
		closeSlices(t, name+" popSumWZ12x3", accBuf[:mm], want)
		if !slices.Equal(accBuf[mm:], guard) {
			t.Fatalf("%s: popSumWZ12x3 wrote past acc: %v", name, accBuf[mm:])
		}

		wantC, wantCP := refPopSumBack(C0, CP0, B, E, X, w, m, Q)
		cBuf := append(slices.Clone(C0), guard...)
		cpt := append(make([]float64, nk*mq), guard...)
		xt, bx := make([]float64, nk*2*mq), make([]float64, 432)
		permXT12x3(xt, X, nk)
		popSumBackZ12x3(cBuf[:nk*mm:nk*mm], cpt[:nk*mq:nk*mq], B, bx, E[:nk*mm:nk*mm], xt, w)
		gotCP := slices.Clone(CP0)
		addCPT12(gotCP, cpt, nk)
		closeSlices(t, name+" popSumBackZ12x3 C", cBuf[:nk*mm], wantC)
		closeSlices(t, name+" popSumBackZ12x3 CP", gotCP, wantCP)
		for _, g := range [][]float64{cBuf[nk*mm:], cpt[nk*mq:]} {
			if !slices.Equal(g, guard) {
				t.Fatalf("%s: popSumBackZ12x3 wrote past its blocks: %v", name, g)
			}
		}
	}
}

// TestZKernel6x2 checks the 512-bit forward pop kernel of m = 6, |Q| = 2
// against the reference loop and, bit for bit, against the AVX2 kernel
// whose operations it does lane by lane, with acc cut to size and guarded
// so that a write past it would show.
func TestZKernel6x2(t *testing.T) {
	if !useZ6 {
		t.Skip("no AVX-512 kernels in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	const m, Q, mm, mq = 6, 2, 36, 12
	for _, nk := range []int{1, 2, 3, 7, 30} {
		name := fmt.Sprintf("nk=%d", nk)
		E, X, w := randSlice(rng, nk*mm), randSlice(rng, nk*mq), randSlice(rng, nk)
		w[nk/2] = 0
		acc0 := randSlice(rng, mm)
		want := refPopSumW(acc0, E, X, w, m, Q)
		xp, xz := make([]float64, nk*24), make([]float64, nk*24)
		permXP6x2(xp, X, nk)
		permXZ6x2(xz, X, nk)
		vec := append([]float64(nil), acc0...)
		popSumWVec6x2(vec, E, xp, w)
		accBuf := append(append([]float64(nil), acc0...), 7, 7, 7, 7, 7, 7, 7, 7)
		popSumWZ6x2(accBuf[:mm:mm], E[:nk*mm:nk*mm], xz[:nk*24:nk*24], w)
		closeSlices(t, name+" popSumWZ6x2", accBuf[:mm], want)
		for i := range vec {
			if math.Float64bits(accBuf[i]) != math.Float64bits(vec[i]) {
				t.Fatalf("%s: entry %d is %v, the AVX2 kernel's %v: not the same bits", name, i, accBuf[i], vec[i])
			}
		}
		for _, v := range accBuf[mm:] {
			if v != 7 {
				t.Fatalf("%s: popSumWZ6x2 wrote past acc: %v", name, accBuf[mm:])
			}
		}
	}
}

// TestZKernelBack6x2 checks the backward pop kernel of m = 6, |Q| = 2
// with its γ adjoints in 512-bit vectors against the reference loop and,
// bit for bit, against the AVX2 kernel, with the blocks cut to size and
// guarded so that a write past them would show.
func TestZKernelBack6x2(t *testing.T) {
	if !useZ6 {
		t.Skip("no AVX-512 kernels in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(43, 44))
	const m, Q, mm, mq = 6, 2, 36, 12
	for _, nk := range []int{1, 2, 3, 7, 30} {
		name := fmt.Sprintf("nk=%d", nk)
		E, X, w := randSlice(rng, nk*mm), randSlice(rng, nk*mq), randSlice(rng, nk)
		w[nk/2] = 0
		B := randSlice(rng, mm)
		C0, CP0 := randSlice(rng, nk*mm), randSlice(rng, nk*mq)
		wantC, wantCP := refPopSumBack(C0, CP0, B, E, X, w, m, Q)
		xt, xz := make([]float64, nk*24), make([]float64, nk*24)
		permXT6x2(xt, X, nk)
		permXTZ6x2(xz, X, nk)
		vecC, vecCP := append([]float64(nil), C0...), append([]float64(nil), CP0...)
		popSumBackVec6x2(vecC, vecCP, B, E, xt, w)
		cBuf := append(append([]float64(nil), C0...), 7, 7, 7, 7, 7, 7, 7, 7)
		cpBuf := append(append([]float64(nil), CP0...), 7, 7, 7, 7, 7, 7, 7, 7)
		popSumBackZ6x2(cBuf[:nk*mm:nk*mm], cpBuf[:nk*mq:nk*mq], B, E[:nk*mm:nk*mm], xz[:nk*24:nk*24], w)
		closeSlices(t, name+" popSumBackZ6x2 C", cBuf[:nk*mm], wantC)
		closeSlices(t, name+" popSumBackZ6x2 CP", cpBuf[:nk*mq], wantCP)
		for _, c := range []struct {
			what      string
			got, want []float64
		}{{"C", cBuf, vecC}, {"CP", cpBuf, vecCP}} {
			for i, v := range c.want {
				if math.Float64bits(c.got[i]) != math.Float64bits(v) {
					t.Fatalf("%s: %s entry %d is %v, the AVX2 kernel's %v: not the same bits", name, c.what, i, c.got[i], v)
				}
			}
			for _, v := range c.got[len(c.want):] {
				if v != 7 {
					t.Fatalf("%s: popSumBackZ6x2 wrote past %s: %v", name, c.what, c.got[len(c.want):])
				}
			}
		}
	}
}
