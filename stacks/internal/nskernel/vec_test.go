package nskernel

import (
	"fmt"
	"math/rand/v2"
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
	} {
		const B, n = 3, 25
		ld := randLD(rng, c, B, n, 3)
		coef := make([][]float64, n)
		for s := range coef {
			coef[s] = randSlice(rng, B*c.ReadingSize())
		}
		var lv, ls float64
		var gv, gs [][]float64
		withVec(true, func() { lv, gv = lossAndGrad(NewTape(c, B, n), false, ld, coef, true) })
		withVec(false, func() { ls, gs = lossAndGrad(NewTape(c, B, n), false, ld, coef, true) })
		if !relClose(lv, ls, 1e-12) {
			t.Fatalf("%+v: loss %v with vector kernels, %v without", c, lv, ls)
		}
		for s := range gs {
			closeSlices(t, fmt.Sprintf("%+v gradient step %d", c, s+1), gv[s], gs[s])
		}
	}
}
