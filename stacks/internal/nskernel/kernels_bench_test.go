package nskernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Micro-benchmarks of the pop kernels at nk = 30 split points through the
// dispatchers popSumW and popSumBack (G' blocks in their own layout: on
// AVX2 and FMA the forward 9×3 case is the vector kernel, the others are
// the scalar ones); they report the multiply-adds per op in MFMA/op.
func BenchmarkPopKernels(b *testing.B) {
	for _, sh := range [][2]int{{6, 2}, {9, 3}} {
		m, Q := sh[0], sh[1]
		mm, mq := m*m, m*Q
		const nk = 30
		rng := rand.New(rand.NewPCG(1, 2))
		E, X, w := randSlice(rng, nk*mm), randSlice(rng, nk*mq), randSlice(rng, nk)
		acc, xs := make([]float64, mm), make([]float64, nk*mq)
		B, C, CP := randSlice(rng, mm), make([]float64, nk*mm), make([]float64, nk*mq)
		b.Run(fmt.Sprintf("fwd%dx%d", m, Q), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				popSumW(acc, E, X, w, xs, m, Q)
			}
			b.ReportMetric(float64(nk*mm*Q)/1e6, "MFMA/op")
		})
		b.Run(fmt.Sprintf("bwd%dx%d", m, Q), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				popSumBack(C, CP, B, E, X, w, xs[:mq], acc[:mq], nk, m, Q)
			}
			b.ReportMetric(float64(2*nk*mm*Q)/1e6, "MFMA/op")
		})
	}
}

// BenchmarkVecPopKernels: the vector pop kernels (amd64 assembly, AVX2 and
// FMA; fwdZ9x3 and bwdZ9x3 AVX-512) at nk = 30 split points, and those of
// m = 9 also at nk = 100.
func BenchmarkVecPopKernels(b *testing.B) {
	if !useVec {
		b.Skip("no vector kernels in this build or on this CPU")
	}
	const m, Q, mm, mq, nk = 6, 2, 36, 12, 30
	rng := rand.New(rand.NewPCG(1, 2))
	E, X, w := randSlice(rng, nk*mm), randSlice(rng, nk*mq), randSlice(rng, nk)
	acc, xv := make([]float64, mm), make([]float64, nk*24)
	B, C, CP := randSlice(rng, mm), make([]float64, nk*mm), make([]float64, nk*mq)
	b.Run("fwd6x2", func(b *testing.B) {
		permXP6x2(xv, X, nk)
		for i := 0; i < b.N; i++ {
			popSumWVec6x2(acc, E, xv, w)
		}
		b.ReportMetric(float64(nk*mm*Q)/1e6, "MFMA/op")
	})
	b.Run("fwdZ6x2", func(b *testing.B) {
		if !useZ6 {
			b.Skip("no AVX-512 kernels on this CPU")
		}
		permXZ6x2(xv, X, nk)
		for i := 0; i < b.N; i++ {
			popSumWZ6x2(acc, E, xv, w)
		}
		b.ReportMetric(float64(nk*mm*Q)/1e6, "MFMA/op")
	})
	b.Run("bwd6x2", func(b *testing.B) {
		permXT6x2(xv, X, nk)
		for i := 0; i < b.N; i++ {
			popSumBackVec6x2(C, CP, B, E, xv, w)
		}
		b.ReportMetric(float64(2*nk*mm*Q)/1e6, "MFMA/op")
	})
	b.Run("bwdZ6x2", func(b *testing.B) {
		if !useZ6 {
			b.Skip("no AVX-512 kernels on this CPU")
		}
		permXTZ6x2(xv, X, nk)
		for i := 0; i < b.N; i++ {
			popSumBackZ6x2(C, CP, B, E, xv, w)
		}
		b.ReportMetric(float64(2*nk*mm*Q)/1e6, "MFMA/op")
	})
	const m9, Q9, mm9, mq9 = 9, 3, 81, 27
	E9, X9, B9 := randSlice(rng, nk*mm9), randSlice(rng, nk*mq9), randSlice(rng, mm9)
	acc9, C9, CP9, xt9 := make([]float64, mm9), make([]float64, nk*mm9), make([]float64, nk*mq9), make([]float64, nk*mq9)
	// At nk = 100 the blocks (170 KiB) no longer fit the L1 cache: the
	// kernels' chunks of split points keep them there over the three
	// passes over y.
	for _, nkv := range []int{nk, 100} {
		name, Ev, Xv, wv := "", E9, X9, w
		if nkv != nk {
			name = fmt.Sprintf("-nk%d", nkv)
			Ev, Xv, wv = randSlice(rng, nkv*mm9), randSlice(rng, nkv*mq9), randSlice(rng, nkv)
		}
		Cv, CPv, xtv := make([]float64, nkv*mm9), make([]float64, nkv*mq9), make([]float64, nkv*mq9)
		b.Run("fwd9x3"+name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				popSumWVec9x3(acc9, Ev, Xv, wv)
			}
			b.ReportMetric(float64(nkv*mm9*Q9)/1e6, "MFMA/op")
		})
		b.Run("bwd9x3"+name, func(b *testing.B) {
			permXT9x3(xtv, Xv, nkv)
			for i := 0; i < b.N; i++ {
				popSumBackVec9x3(Cv, CPv, B9, Ev, xtv, wv)
			}
			b.ReportMetric(float64(2*nkv*mm9*Q9)/1e6, "MFMA/op")
		})
	}
	if useZ {
		b.Run("fwdZ9x3", func(b *testing.B) {
			permXE9x3(xt9, X9, nk)
			for i := 0; i < b.N; i++ {
				popSumWZ9x3(acc9, E9, xt9, w)
			}
			b.ReportMetric(float64(nk*mm9*Q9)/1e6, "MFMA/op")
		})
		// The 512-bit kernel, with the expansion of B it needs per call
		// (the transposes of X and of the G' adjoints are per column).
		b.Run("bwdZ9x3", func(b *testing.B) {
			permXR9x3(xt9, X9, nk)
			bx := make([]float64, 243)
			for i := 0; i < b.N; i++ {
				bexp9x3(bx, B9)
				popSumBackZ9x3(C9, CP9, bx, E9, xt9, w)
			}
			b.ReportMetric(float64(2*nk*mm9*Q9)/1e6, "MFMA/op")
		})
	}
}

// BenchmarkPopKernelsWorkingSet runs the 512-bit pop kernels of m = 9,
// |Q| = 3 over a row of nk = 30 blocks chosen in turn from regions of
// growing total size, the same work per op. Within the L1 and L2 caches
// the rate is that of the arithmetic; beyond them it is that of the memory
// the blocks stream from. A training step of the dynamic program reads
// every block of a sequence's triangle once per step (n = 80: 81·8 bytes
// times 3,240 blocks, 2.1 MB, per sequence of the batch), so it runs at
// the rate of the largest region.
func BenchmarkPopKernelsWorkingSet(b *testing.B) {
	if !useZ {
		b.Skip("no 512-bit pop kernels in this build or on this CPU")
	}
	const nk, mm, mq = 30, 81, 27
	for _, regions := range []int{1, 8, 64, 512} {
		rng := rand.New(rand.NewPCG(1, 2))
		E, C := randSlice(rng, regions*nk*mm), make([]float64, regions*nk*mm)
		X, w, B := randSlice(rng, nk*mq), randSlice(rng, nk), randSlice(rng, mm)
		xt, acc, cpt, bx := make([]float64, nk*mq), make([]float64, mm), make([]float64, nk*mq), make([]float64, 243)
		size := fmt.Sprintf("%dKiB", regions*nk*mm*8/1024)
		b.Run("fwd-"+size, func(b *testing.B) {
			permXE9x3(xt, X, nk)
			for i := 0; i < b.N; i++ {
				r := (i % regions) * nk * mm
				popSumWZ9x3(acc, E[r:r+nk*mm], xt, w)
			}
			b.ReportMetric(float64(b.N)*nk*mm*3/b.Elapsed().Seconds()/1e9, "GFMA/s")
		})
		b.Run("bwd-"+size, func(b *testing.B) {
			permXR9x3(xt, X, nk)
			for i := 0; i < b.N; i++ {
				r := (i % regions) * nk * mm
				bexp9x3(bx, B)
				popSumBackZ9x3(C[r:r+nk*mm], cpt, bx, E[r:r+nk*mm], xt, w)
			}
			b.ReportMetric(float64(b.N)*nk*mm*6/b.Elapsed().Seconds()/1e9, "GFMA/s")
		})
	}
}
