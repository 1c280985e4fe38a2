//go:build goexperiment.simd && amd64

package nskernel

// Vector pop kernels for m = 6, |Q| = 2 on AVX2 and FMA, built with
// GOEXPERIMENT=simd. The G' blocks come in the layouts of vec_layout.go.
// Each kernel makes one pass over the split points k per vector pattern
// (vectors v, v+3, v+6 of a block share their symbols), keeping that
// pattern's sums or B entries in registers. Each kernel ends with VZEROUPPER:
// the scalar code around it (math.Exp in particular) is legacy SSE, which
// runs many times slower after 256-bit instructions leave the upper halves
// of the registers dirty.

import (
	"simd/archsimd"
	"unsafe"
)

// useVec selects the vector kernels; tests turn it off to check the scalar
// kernels in the same binary.
var useVec = archsimd.X86.AVX2() && archsimd.X86.FMA()

var hasAVX = archsimd.X86.AVX()

// vecClean clears the upper halves of the vector registers (VZEROUPPER).
// With GOEXPERIMENT=simd (Go 1.26) the runtime restores full AVX-512 or
// AVX2 register state after an asynchronous preemption, which leaves the
// upper halves dirty until the next VZEROUPPER; meanwhile every switch
// between VEX and legacy SSE instructions is slow, so that math.Exp
// (which mixes both) takes about 25 times as long. Step and Backward call
// vecClean once per sequence.
func vecClean() {
	if hasAVX {
		archsimd.ClearAVXUpperBits()
	}
}

type v4 = [4]float64

func ld(p unsafe.Pointer) archsimd.Float64x4 { return archsimd.LoadFloat64x4((*v4)(p)) }

// popSumWVec6x2 is popSumW for m = 6, |Q| = 2 with the G' blocks in the
// forward layout XP (24 entries per block, see permXP6x2).
func popSumWVec6x2(acc, E, XP, w []float64) {
	nk := len(w)
	if nk == 0 {
		return
	}
	acc, E, XP = acc[:36], E[:nk*36], XP[:nk*24] // bounds for the walk below
	ab, eb, xb := unsafe.Pointer(&acc[0]), unsafe.Pointer(&E[0]), unsafe.Pointer(&XP[0])
	for p := uintptr(0); p < 3; p++ {
		a0, a1, a2 := unsafe.Add(ab, p*32), unsafe.Add(ab, p*32+96), unsafe.Add(ab, p*32+192)
		s0, s1, s2 := ld(a0), ld(a1), ld(a2)
		ep, xp := unsafe.Add(eb, p*32), unsafe.Add(xb, p*64)
		for k, f := range w {
			fv := archsimd.BroadcastFloat64x4(f)
			x := (*[8]float64)(xp)
			e := (*[28]float64)(ep)
			x0 := archsimd.LoadFloat64x4((*v4)(x[0:4])).Mul(fv)
			x1 := archsimd.LoadFloat64x4((*v4)(x[4:8])).Mul(fv)
			t := archsimd.LoadFloat64x4((*v4)(e[0:4]))
			s0 = t.SelectFromPairGrouped(0, 2, t).MulAdd(x0, s0)
			s0 = t.SelectFromPairGrouped(1, 3, t).MulAdd(x1, s0)
			t = archsimd.LoadFloat64x4((*v4)(e[12:16]))
			s1 = t.SelectFromPairGrouped(0, 2, t).MulAdd(x0, s1)
			s1 = t.SelectFromPairGrouped(1, 3, t).MulAdd(x1, s1)
			t = archsimd.LoadFloat64x4((*v4)(e[24:28]))
			s2 = t.SelectFromPairGrouped(0, 2, t).MulAdd(x0, s2)
			s2 = t.SelectFromPairGrouped(1, 3, t).MulAdd(x1, s2)
			if k+1 < nk { // no pointer past the end of E or XP
				ep, xp = unsafe.Add(ep, 288), unsafe.Add(xp, 192)
			}
		}
		s0.Store((*v4)(a0))
		s1.Store((*v4)(a1))
		s2.Store((*v4)(a2))
	}
	archsimd.ClearAVXUpperBits()
}

// popSumBackVec6x2 is popSumBack for m = 6, |Q| = 2 with the G' blocks in the
// backward layout XT (24 entries per block, see permXT6x2).
func popSumBackVec6x2(C, CP, B, E, XT, es []float64) {
	nk := len(es)
	if nk == 0 {
		return
	}
	B = B[:36]
	C, CP, E, XT = C[:nk*36], CP[:nk*12], E[:nk*36], XT[:nk*24] // bounds for the walks below
	bb := unsafe.Pointer(&B[0])
	cb, pb, eb, xb := unsafe.Pointer(&C[0]), unsafe.Pointer(&CP[0]), unsafe.Pointer(&E[0]), unsafe.Pointer(&XT[0])
	// C_k += B ⋆ (f·X_k)ᵀ: entry (i,y,u) += B(i,y,0)·f·X(y,u,0) + B(i,y,1)·f·X(y,u,1).
	for p := uintptr(0); p < 3; p++ {
		b0, b1, b2 := ld(unsafe.Add(bb, p*32)), ld(unsafe.Add(bb, p*32+96)), ld(unsafe.Add(bb, p*32+192))
		d00, d01 := b0.SelectFromPairGrouped(0, 2, b0), b0.SelectFromPairGrouped(1, 3, b0)
		d10, d11 := b1.SelectFromPairGrouped(0, 2, b1), b1.SelectFromPairGrouped(1, 3, b1)
		d20, d21 := b2.SelectFromPairGrouped(0, 2, b2), b2.SelectFromPairGrouped(1, 3, b2)
		cp, xp := unsafe.Add(cb, p*32), unsafe.Add(xb, p*64)
		for k, f := range es {
			fv := archsimd.BroadcastFloat64x4(f)
			x := (*[8]float64)(xp)
			c := (*[28]float64)(cp)
			x0 := archsimd.LoadFloat64x4((*v4)(x[0:4])).Mul(fv)
			x1 := archsimd.LoadFloat64x4((*v4)(x[4:8])).Mul(fv)
			c0 := (*v4)(c[0:4])
			d01.MulAdd(x1, d00.MulAdd(x0, archsimd.LoadFloat64x4(c0))).Store(c0)
			c1 := (*v4)(c[12:16])
			d11.MulAdd(x1, d10.MulAdd(x0, archsimd.LoadFloat64x4(c1))).Store(c1)
			c2 := (*v4)(c[24:28])
			d21.MulAdd(x1, d20.MulAdd(x0, archsimd.LoadFloat64x4(c2))).Store(c2)
			if k+1 < nk {
				cp, xp = unsafe.Add(cp, 288), unsafe.Add(xp, 192)
			}
		}
	}
	// CP_k += f·(E_kᵀ ⋆ B): entry (y,u,r) += f·Σ_i E(i,y,u)·B(i,y,r). Per
	// pattern, same = Σ E_v⊙B_v holds the terms u = r and swap = Σ
	// E_v⊙swap(B_v) those u ≠ r, for the symbols yA (lanes 0, 1) and yB
	// (lanes 2, 3).
	for p := uintptr(0); p < 3; p++ {
		b0, b1, b2 := ld(unsafe.Add(bb, p*32)), ld(unsafe.Add(bb, p*32+96)), ld(unsafe.Add(bb, p*32+192))
		w0, w1, w2 := b0.SelectFromPairGrouped(1, 2, b0), b1.SelectFromPairGrouped(1, 2, b1), b2.SelectFromPairGrouped(1, 2, b2)
		ya, yb := uintptr(vecPat[p][0])*32, uintptr(vecPat[p][1])*32
		ep, pp := unsafe.Add(eb, p*32), pb
		for k, f := range es {
			e := (*[28]float64)(ep)
			e0 := archsimd.LoadFloat64x4((*v4)(e[0:4]))
			e1 := archsimd.LoadFloat64x4((*v4)(e[12:16]))
			e2 := archsimd.LoadFloat64x4((*v4)(e[24:28]))
			same := e2.MulAdd(b2, e1.MulAdd(b1, e0.Mul(b0)))
			swap := e2.MulAdd(w2, e1.MulAdd(w1, e0.Mul(w0)))
			lo := same.SelectFromPairGrouped(0, 2, swap) // s0 w0 | s2 w2
			hi := swap.SelectFromPairGrouped(1, 3, same) // w1 s1 | w3 s3
			fv := archsimd.BroadcastFloat64x4(f)
			pa, pz := (*v4)(unsafe.Add(pp, ya)), (*v4)(unsafe.Add(pp, yb))
			lo.Select128FromPair(0, 2, hi).MulAdd(fv, archsimd.LoadFloat64x4(pa)).Store(pa)
			lo.Select128FromPair(1, 3, hi).MulAdd(fv, archsimd.LoadFloat64x4(pz)).Store(pz)
			if k+1 < nk {
				ep, pp = unsafe.Add(ep, 288), unsafe.Add(pp, 96)
			}
		}
	}
	archsimd.ClearAVXUpperBits()
}
