package nskernel

import (
	"math"
	"reflect"
)

// Numerical thresholds.
const (
	// fwdTiny: a fast-path result below fwdTiny times its shift is
	// recomputed exactly in log space.
	fwdTiny = 1e-250
	// deepE: block mantissas below deepE have their exact log stored in Lx.
	deepE = 1e-200
	// bwdThr: in the backward pass an entry whose mantissa is below
	// exp(-bwdThr) is handled exactly, and so is a product whose shifts
	// exceed the output's by more than bwdThr nats.
	bwdThr = 250.0
)

var eBad = math.Exp(-bwdThr)

// seq is the state of one sequence of the batch.
//
// Configurations (q,x) are indexed internally by x*Q+q. A γ block (a,b),
// a < b, is an m×m matrix, row (q,x), column (r,y); it is stored as
// exp(beta)·E, with Lx holding the exact log of entries whose mantissa is
// below deepE. G' blocks (k,b) (γ'[k→b], m×Q, row (u,y), column r) are
// stored likewise in X, tau, LxP.
type seq struct {
	layout
	m, nq, ns, na int // |Q||Γ|, |Q|, |Γ|, actions per column (internal)
	kern          kernelChoice
	sread         bool

	E, Lx, C, AX []float64
	axNZ         []bool // AX of the block may be nonzero
	beta         []float64
	hb           []float64 // hfac(beta − (psi[b] − psi[a])) per block

	// rowLive[a·m+i]: a stored block γ(a,·) has a nonzero entry in row i.
	// An entry (i,j) of γ(a,b) is a sum of terms with a factor from row i
	// of a block γ(a,c), c < b, so it is 0 if that row is not live, and a
	// row is live once the first block of its position, γ(a,a+1) (the
	// push block, or the initial one), is nonzero in it: with the fixed
	// bottom, γ(0,1) holds the bottom alone (state 0, symbol ⊥), and only
	// row 0 of the blocks γ(0,·) is live, whose other entries finalize
	// would otherwise recompute term by term at every column.
	rowLive []bool

	// psi is a potential over positions (cumulative maximal push weight);
	// block and G' shifts are also kept relative to it (hb, hp) so that the
	// per-(a,k,b) product weights need no exp in the common case.
	psi []float64

	X, LxP, CP, AXP []float64
	axpNZ           []bool // AXP of the G' block may be nonzero
	tau             []float64
	hp              []float64

	la, aE, Ca, AXa []float64
	abar            []float64
	ha              []float64 // hfac(abar[p] − psi[p]) per position

	// per column: push (m·m), rep (m·m), pop (m·Q) log weights, internal order
	dl         []float64
	eRep, ePop []float64 // per column mantissas
	dRep, dPop []float64 // per column shifts

	// scratch
	acc, sB, xs, tmp         []float64
	crep, axrep, cpop, axpop []float64
	gpush, atot, ptmp, ba    []float64
	atotA                    []float64
	wk, xsk                  []float64 // per-k scales and scaled G' blocks (capPos, capPos·m|Q|)
	xv                       []float64 // G' blocks of a column in a vector layout (see vec_layout.go)
	eRepT, ePopT             []float64 // a column's rep and pop weights transposed (vector kernels)
	cpt, bx                  []float64 // G' adjoints of a column and a block adjoint expanded (popSumBackZ9x3)

	// The vector payload of the vector stack (M = 0 for NS and RNS). V[p]
	// (M entries) is the vector of the stack element pushed by the step
	// that made position p (for the fixed bottom, V[1] is the initial
	// bottom's), Vbar its adjoint. P[bi] (m entries) is P_a = α[a]·γ[a→b]
	// for γ block bi = (a,b), relative to exp(abar[b]) like aE[b]: the
	// weight of the runs whose top element at b carries V[a+1].
	M          int
	V, Vbar, P []float64
	gva, aa    []float64 // per row a of a column: the reading adjoint against V[a+1] (m each); per-row α adjoint (m)
}

// kernelChoice is which vector kernels serve a sequence's shape, decided
// once, when it is made (seq.init), from the CPU's features (useVec,
// useZ; the tests turn them off before making tapes, to check the scalar
// kernels) and the shape:
type kernelChoice struct {
	// vec6: m = 6, |Q| = 2 (AVX2), with the G′ blocks of a column copied
	// into their layouts, and z6 its 512-bit pop kernels (AVX-512);
	vec6, z6 bool
	// vec9: m = 9, |Q| = 3 (AVX2; the backward kernel takes the G′ blocks
	// of a column transposed), and z9 its 512-bit pop kernels (AVX-512);
	vec9, z9 bool
	// z12: the 512-bit pop kernels of m = 12, |Q| = 3 (AVX-512).
	z12 bool
}

// chooseKernels returns the kernels for a sequence of m = |Q|·|Γ| with
// |Q| = nq whose layouts for the 512-bit kernels are allocated (bx).
func chooseKernels(m, nq int, bx bool) kernelChoice {
	return kernelChoice{
		vec6: useVec && m == 6 && nq == 2,
		z6:   useVec && useZ6 && m == 6 && nq == 2,
		vec9: useVec && m == 9 && nq == 3,
		z9:   useVec && useZ && m == 9 && nq == 3,
		z12:  useVec && useZ && m == 12 && nq == 3 && bx,
	}
}

func (s *seq) init(c Config, capPos int) {
	s.nq, s.ns = c.States, c.Symbols
	s.m = s.nq * s.ns
	m, mm := s.m, s.m*s.m
	s.na = 2*mm + m*s.nq
	s.sread = c.StateReading
	nb, ng := s.initLayout(c.Window, capPos, c.Fixed)
	s.E = make([]float64, nb*mm)
	s.Lx = make([]float64, nb*mm)
	s.C = make([]float64, nb*mm)
	s.AX = make([]float64, nb*mm)
	s.axNZ = make([]bool, nb)
	s.beta = make([]float64, nb)
	s.hb = make([]float64, nb)
	s.psi = make([]float64, capPos)
	mq := m * s.nq
	s.X = make([]float64, ng*mq)
	s.LxP = make([]float64, ng*mq)
	s.CP = make([]float64, ng*mq)
	s.AXP = make([]float64, ng*mq)
	s.axpNZ = make([]bool, ng)
	s.tau = make([]float64, ng)
	s.hp = make([]float64, ng)
	s.la = make([]float64, capPos*m)
	s.rowLive = make([]bool, capPos*m)
	s.aE = make([]float64, capPos*m)
	s.Ca = make([]float64, capPos*m)
	s.AXa = make([]float64, capPos*m)
	s.abar = make([]float64, capPos)
	s.ha = make([]float64, capPos)
	s.dl = make([]float64, capPos*s.na)
	s.eRep = make([]float64, capPos*mm)
	s.ePop = make([]float64, capPos*mq)
	s.dRep = make([]float64, capPos)
	s.dPop = make([]float64, capPos)
	s.acc = make([]float64, mm)
	s.sB = make([]float64, mm)
	s.xs = make([]float64, mq)
	s.tmp = make([]float64, mm)
	s.crep = make([]float64, mm)
	s.axrep = make([]float64, mm)
	s.cpop = make([]float64, mq)
	s.axpop = make([]float64, mq)
	s.gpush = make([]float64, mm)
	s.atot = make([]float64, mm)
	s.ptmp = make([]float64, mq)
	s.ba = make([]float64, m)
	s.atotA = make([]float64, m)
	s.wk = make([]float64, capPos)
	s.xsk = make([]float64, capPos*mq)
	switch {
	case m == 6 && s.nq == 2:
		s.xv = make([]float64, capPos*24)
	case m == 9 && s.nq == 3:
		s.xv = make([]float64, capPos*27)
		s.cpt = make([]float64, capPos*27)
		s.bx = make([]float64, 243)
	case m == 12 && s.nq == 3 && useZ:
		s.xv = make([]float64, capPos*72)
		s.cpt = make([]float64, capPos*36)
		s.bx = make([]float64, 432)
	}
	if s.xv != nil {
		s.eRepT = make([]float64, mm)
		s.ePopT = make([]float64, mq)
	}
	s.kern = chooseKernels(m, s.nq, s.bx != nil)
	if s.M = c.Vector; s.M > 0 {
		s.V = make([]float64, capPos*s.M)
		s.Vbar = make([]float64, capPos*s.M)
		s.P = make([]float64, nb*m)
		s.gva = make([]float64, capPos*m)
		s.aa = make([]float64, m)
	}
}

// lat returns the exact log of entry e of γ block bi.
func (s *seq) lat(bi, e int) float64 {
	mm := s.m * s.m
	v := s.E[bi*mm+e]
	if v >= deepE {
		return math.Log(v) + s.beta[bi]
	}
	return s.Lx[bi*mm+e]
}

// latP returns the exact log of entry e of G' block pi.
func (s *seq) latP(pi, e int) float64 {
	mq := s.m * s.nq
	v := s.X[pi*mq+e]
	if v >= deepE {
		return math.Log(v) + s.tau[pi]
	}
	return s.LxP[pi*mq+e]
}

// latZero reports whether entry e of γ block bi is 0, lat's −∞, without
// taking the log of a nonzero entry as lat does.
func (s *seq) latZero(bi, e int) bool {
	mm := s.m * s.m
	return s.E[bi*mm+e] < deepE && s.Lx[bi*mm+e] == negInf
}

// latPZero reports whether entry e of G' block pi is 0, latP's −∞,
// without a log.
func (s *seq) latPZero(pi, e int) bool {
	mq := s.m * s.nq
	return s.X[pi*mq+e] < deepE && s.LxP[pi*mq+e] == negInf
}

// markRows records in rowLive the nonzero rows of block bi, γ(a,·).
func (s *seq) markRows(a, bi int) {
	m := s.m
	live := s.rowLive[a*m : (a+1)*m]
	for i := range live {
		if live[i] {
			continue
		}
		for j := 0; j < m; j++ {
			if !s.latZero(bi, i*m+j) {
				live[i] = true
				break
			}
		}
	}
}

func (s *seq) clearAdj(bi int) {
	mm := s.m * s.m
	clear(s.C[bi*mm : (bi+1)*mm])
	if s.axNZ[bi] {
		clear(s.AX[bi*mm : (bi+1)*mm])
		s.axNZ[bi] = false
	}
}

// setBlockLog sets γ block bi from exact log values l (len m·m).
func (s *seq) setBlockLog(bi int, l []float64) {
	mm := s.m * s.m
	E, Lx := s.E[bi*mm:(bi+1)*mm], s.Lx[bi*mm:(bi+1)*mm]
	b := negInf
	for _, v := range l {
		b = math.Max(b, v)
	}
	s.beta[bi] = b
	for e, v := range l {
		if b == negInf {
			E[e] = 0
		} else {
			E[e] = math.Exp(v - b)
		}
		Lx[e] = v
	}
	s.clearAdj(bi)
}

const hLim = 300

func (s *seq) setH(a, b int) {
	bi := s.blk(a, b)
	s.hb[bi] = hfac(s.beta[bi] - (s.psi[b] - s.psi[a]))
}

func (s *seq) setAlpha(p int, l []float64) {
	m := s.m
	la, aE := s.la[p*m:(p+1)*m], s.aE[p*m:(p+1)*m]
	copy(la, l)
	b := negInf
	for _, v := range l {
		b = math.Max(b, v)
	}
	s.abar[p] = b
	s.ha[p] = hfac(b - s.psi[p])
	for i, v := range l {
		if b == negInf {
			aE[i] = 0
		} else {
			aE[i] = math.Exp(v - b)
		}
	}
	clear(s.Ca[p*m : (p+1)*m])
	clear(s.AXa[p*m : (p+1)*m])
}

// begin starts from the initial stack; bottom is the initial bottom's
// vector of a vector stack with the fixed behaviour (ignored otherwise).
func (s *seq) begin(bottom []float64) {
	m := s.m
	oh := s.tmp[:m*m]
	for i := range oh {
		oh[i] = negInf
	}
	oh[0] = 0
	s.psi[0], s.psi[1] = 0, 0
	s.setAlpha(0, oh[:m])
	clear(s.rowLive)
	if s.fixed {
		s.setAlpha(1, oh[:m])
		for i := range oh {
			oh[i] = negInf
		}
		oh[0] = 0
		s.setBlockLog(s.blk(0, 1), oh)
		s.markRows(0, s.blk(0, 1))
		s.setH(0, 1)
		if s.M > 0 {
			copy(s.V[s.M:2*s.M], bottom)
			clear(s.Vbar[s.M : 2*s.M])
		}
	}
	s.startPositions()
}

const (
	kindGamma = iota
	kindGp
)

// finalize turns fast-path results R (shift S) into a stored block: it
// recomputes underflowing entries exactly and returns the block shift. On
// the fast path (fast true) the mantissas are R scaled by a power of two,
// E = R·2^−e exactly, and the shift is S + e·ln 2: no exp or log.
func (s *seq) finalize(R []float64, S float64, E, Lx []float64, kind, a, b int) (shift float64, e int, fast bool) {
	if S != negInf {
		// Fast path: no entry underflows and none needs its exact log.
		rmin, rmax := minMax(R)
		if rmin >= fwdTiny { // false for NaN
			f, e := pow2Scale(rmax)
			if rmin*f >= deepE {
				E = E[:len(R)]
				for i, v := range R {
					E[i] = v * f
				}
				return S + float64(e)*math.Ln2, e, true
			}
		}
	}
	cols := s.m
	if kind == kindGp {
		cols = s.nq
	}
	beta := negInf
	rmax := 0.0
	for e, v := range R {
		if v >= fwdTiny && S != negInf {
			if v > rmax {
				rmax = v
			}
			continue
		}
		var l float64
		if kind == kindGamma {
			l = negInf // every term has a factor 0 (see rowLive)
			if s.rowLive[a*s.m+e/cols] {
				l = s.exactGamma(a, b, e/cols, e%cols)
			}
		} else {
			l = s.exactGp(a, b, e/cols, e%cols)
		}
		Lx[e] = l
		R[e] = -1
		beta = math.Max(beta, l)
	}
	if rmax > 0 {
		beta = math.Max(beta, S+math.Log(rmax))
	}
	if beta == negInf {
		for e := range E {
			E[e] = 0
			Lx[e] = negInf
		}
		return beta, 0, false
	}
	f := math.Exp(S - beta)
	for e, v := range R {
		if v >= 0 {
			E[e] = v * f
			if E[e] < deepE {
				Lx[e] = math.Log(v) + S
			}
		} else {
			E[e] = math.Exp(Lx[e] - beta)
		}
	}
	return beta, 0, false
}

// step computes the next column from ld (external action layout) and, for
// a vector stack, v (the pushed vector), and writes the reading into out.
func (s *seq) step(ld, v, out []float64) {
	b := s.np
	s.np++
	if s.M > 0 {
		copy(s.V[b*s.M:(b+1)*s.M], v)
		clear(s.Vbar[b*s.M : (b+1)*s.M])
	}
	m, Q, G := s.m, s.nq, s.ns
	mm, mq := m*m, m*Q
	col := s.dl[b*s.na : (b+1)*s.na]
	push, rep, pop := col[:mm], col[mm:2*mm], col[2*mm:]
	splitActions(ld, push, rep, pop, Q, G)
	eRep, ePop := s.eRep[b*mm:(b+1)*mm], s.ePop[b*mq:(b+1)*mq]
	s.dRep[b] = expShift(eRep, rep)
	s.dPop[b] = expShift(ePop, pop)
	dRep, dPop := s.dRep[b], s.dPop[b]
	inc := negInf
	for _, v := range push {
		if v > inc {
			inc = v
		}
	}
	if inc == negInf {
		inc = 0
	}
	s.psi[b] = s.psi[b-1] + inc
	// A rep or pop weight relative to the potential: exp(β_{a,b−1} + dRep
	// − S) = hb_{a,b−1}·cr·exp(ψ_b − ψ_a − S), and likewise for pops.
	cr, cp := hfac(dRep-inc), hfac(dPop-inc)

	lo := s.lo(b)
	// G' blocks of column b.
	for k := lo + 1; k <= b-2; k++ {
		pi, xb := s.gp(k, b), s.blk(k, b-1)
		R := s.acc[:mq]
		clear(R)
		S := s.beta[xb] + dPop
		if S != negInf {
			matMul(R, s.E[xb*mm:(xb+1)*mm], ePop, m, m, Q)
		}
		tau, e, fast := s.finalize(R, S, s.X[pi*mq:(pi+1)*mq], s.LxP[pi*mq:(pi+1)*mq], kindGp, k, b)
		s.tau[pi] = tau
		// τ − (ψ_b − ψ_k) = (β_{k,b−1} − (ψ_{b−1} − ψ_k)) + (dPop − inc) + e·ln 2.
		s.hp[pi] = scaledH(tau-(s.psi[b]-s.psi[k]), s.hb[xb]*cp, e, fast)
		clear(s.CP[pi*mq : (pi+1)*mq])
		if s.axpNZ[pi] {
			clear(s.AXP[pi*mq : (pi+1)*mq])
			s.axpNZ[pi] = false
		}
	}
	vec, z6, z9, z12 := s.kern.vec6, s.kern.z6, s.kern.z9, s.kern.z12
	if b-2 > lo {
		switch {
		case z6:
			permXZ6x2(s.xv, s.X[s.gp(lo+1, b)*mq:], b-2-lo)
		case vec:
			permXP6x2(s.xv, s.X[s.gp(lo+1, b)*mq:], b-2-lo)
		case z9:
			permXE9x3(s.xv, s.X[s.gp(lo+1, b)*mq:], b-2-lo)
		case z12:
			permXE12x3(s.xv, s.X[s.gp(lo+1, b)*mq:], b-2-lo)
		}
	}
	// γ blocks of column b.
	for a := lo; a < b; a++ {
		bi := s.blk(a, b)
		s.clearAdj(bi)
		if a == b-1 {
			s.setBlockLog(bi, push)
			s.markRows(a, bi)
			s.setH(a, b)
			continue
		}
		acc := s.acc
		clear(acc)
		M := negInf
		bk0, pk0 := s.blk(a, a+1), 0
		nk := b - 2 - a
		if nk > 0 {
			pk0 = s.gp(a+1, b)
			bt, tt := s.beta[bk0:bk0+nk], s.tau[pk0:pk0+nk]
			for k, v := range bt {
				if v += tt[k]; v > M {
					M = v
				}
			}
		}
		xb := s.blk(a, b-1)
		Mr := s.beta[xb] + dRep
		S := M
		if Mr > S {
			S = Mr
		}
		c := hfac(s.psi[b] - s.psi[a] - S) // 0 for S = −∞
		if M != negInf {
			wk := s.wk[:nk]
			bt, tt := s.beta[bk0:bk0+nk], s.tau[pk0:pk0+nk]
			hb, hp := s.hb[bk0:bk0+nk], s.hp[pk0:pk0+nk]
			for k := range wk {
				// w = exp(β_ak + τ_kb − S) = hb·hp·c when no factor is
				// out of range (0); a block of weight 0 has hb or hp 0.
				w := hb[k] * hp[k] * c
				if w == 0 {
					w = math.Exp(bt[k] + tt[k] - S)
				}
				wk[k] = w
			}
			switch {
			case z6:
				popSumWZ6x2(acc, s.E[bk0*mm:(bk0+nk)*mm], s.xv[(a-lo)*24:(a-lo+nk)*24], wk)
			case vec:
				popSumWVec6x2(acc, s.E[bk0*mm:(bk0+nk)*mm], s.xv[(a-lo)*24:(a-lo+nk)*24], wk)
			case z9:
				popSumWZ9x3(acc, s.E[bk0*mm:(bk0+nk)*mm], s.xv[(a-lo)*27:(a-lo+nk)*27], wk)
			case z12:
				popSumWZ12x3(acc, s.E[bk0*mm:(bk0+nk)*mm], s.xv[(a-lo)*72:(a-lo+nk)*72], wk)
			default:
				popSumW(acc, s.E[bk0*mm:(bk0+nk)*mm], s.X[pk0*mq:(pk0+nk)*mq], wk, s.xsk[:nk*mq], m, Q)
			}
		}
		if Mr != negInf {
			fr := s.hb[xb] * cr * c
			if fr == 0 {
				fr = math.Exp(Mr - S)
			}
			if fr != 0 {
				matMulScaled(acc, s.E[xb*mm:(xb+1)*mm], eRep, fr, m)
			}
		}
		beta, e, fast := s.finalize(acc, S, s.E[bi*mm:(bi+1)*mm], s.Lx[bi*mm:(bi+1)*mm], kindGamma, a, b)
		s.beta[bi] = beta
		// β − (ψ_b − ψ_a) = (S − (ψ_b − ψ_a)) + e·ln 2, and exp(S − (ψ_b − ψ_a)) = 1/c.
		hS := 0.0
		if c != 0 {
			hS = 1 / c
		}
		s.hb[bi] = scaledH(beta-(s.psi[b]-s.psi[a]), hS, e, fast)
	}
	// α[b].
	acc := s.acc[:m]
	clear(acc)
	M := negInf
	for a := lo; a < b; a++ {
		bi := s.blk(a, b)
		if v := s.abar[a] + s.beta[bi]; v > M {
			M = v
		}
		if s.M > 0 {
			clear(s.P[bi*m : (bi+1)*m])
		}
	}
	if M != negInf {
		// exp(ᾱ_a + β_ab − M) = ha_a·hb_ab·exp(ψ_b − M).
		cm := hfac(s.psi[b] - M)
		for a := lo; a < b; a++ {
			bi := s.blk(a, b)
			v := s.abar[a] + s.beta[bi]
			if v == negInf {
				continue
			}
			w := s.ha[a] * s.hb[bi] * cm
			if w == 0 {
				w = math.Exp(v - M)
			}
			if w == 0 {
				continue
			}
			if s.M > 0 {
				// The vector stack keeps the terms P_a of α[b].
				p := s.P[bi*m : (bi+1)*m]
				matMulScaledRows(p, s.aE[a*m:(a+1)*m], s.E[bi*mm:(bi+1)*mm], w, 1, m)
				for j, pv := range p {
					acc[j] += pv
				}
				continue
			}
			matMulScaledRows(acc, s.aE[a*m:(a+1)*m], s.E[bi*mm:(bi+1)*mm], w, 1, m)
		}
	}
	la := s.tmp[:m]
	exact := false
	for j, v := range acc {
		if v >= fwdTiny && M != negInf {
			la[j] = math.Log(v) + M
		} else {
			la[j] = s.exactAlpha(b, j)
			exact = true
		}
	}
	s.setAlpha(b, la)
	if s.M > 0 {
		s.vectorReading(b, acc, exact, out)
		return
	}
	s.reading(b, out)
}

// vectorReading writes the reading of position b of a vector stack,
//
//	r[(r·|Γ|+y)·M+j] = Σ_a P_a[y·|Q|+r] · V[a+1]_j / Σ α[b],
//
// and leaves the terms P_a relative to exp(abar[b]) for the backward pass.
// acc holds α[b] relative to exp(M) as the fast path summed it, the P_a
// likewise; exact tells that an entry of α[b] underflowed there, in which
// case every P_a is recomputed exactly in log space.
func (s *seq) vectorReading(b int, acc []float64, exact bool, out []float64) {
	m, Q, G, M := s.m, s.nq, s.ns, s.M
	lo := s.lo(b)
	clear(out)
	if s.abar[b] == negInf {
		return
	}
	if exact {
		for a := lo; a < b; a++ {
			bi := s.blk(a, b)
			p := s.P[bi*m : (bi+1)*m]
			for j := range p {
				if l := s.exactP(a, b, j); l != negInf {
					p[j] = math.Exp(l - s.abar[b])
				} else {
					p[j] = 0
				}
			}
		}
	} else {
		// abar[b] is M + log(max acc): rescale the terms to it.
		mx := 0.0
		for _, v := range acc {
			mx = math.Max(mx, v)
		}
		f := 1 / mx
		for a := lo; a < b; a++ {
			bi := s.blk(a, b)
			for j := range s.P[bi*m : (bi+1)*m] {
				s.P[bi*m+j] *= f
			}
		}
	}
	var z float64
	for _, v := range s.aE[b*m : (b+1)*m] {
		z += v
	}
	inv := 1 / z
	for a := lo; a < b; a++ {
		bi := s.blk(a, b)
		p := s.P[bi*m : (bi+1)*m]
		vec := s.V[(a+1)*M : (a+2)*M]
		for y := 0; y < G; y++ {
			for r := 0; r < Q; r++ {
				pv := p[y*Q+r] * inv
				if pv == 0 {
					continue
				}
				o := out[(r*G+y)*M : (r*G+y+1)*M]
				for j, vv := range vec {
					o[j] += pv * vv
				}
			}
		}
	}
}

// expShift sets dst = exp(src − max src) and returns max src.
func expShift(dst, src []float64) float64 {
	mx := negInf
	for _, v := range src {
		mx = math.Max(mx, v)
	}
	for i, v := range src {
		if mx == negInf {
			dst[i] = 0
		} else {
			dst[i] = math.Exp(v - mx)
		}
	}
	return mx
}

// reading writes the reading of position b.
func (s *seq) reading(b int, out []float64) {
	m, Q, G := s.m, s.nq, s.ns
	clear(out)
	if s.abar[b] == negInf {
		return
	}
	aE := s.aE[b*m : (b+1)*m]
	var z float64
	for _, v := range aE {
		z += v
	}
	for y := 0; y < G; y++ {
		for r := 0; r < Q; r++ {
			p := aE[y*Q+r] / z
			if s.sread {
				out[r*G+y] = p
			} else {
				out[y] += p
			}
		}
	}
}

// bytes returns the memory of the sequence's slices, in bytes.
func (s *seq) bytes() float64 { return sliceBytes(reflect.ValueOf(s).Elem()) }

// sliceBytes sums the capacities of the slices among the fields of the
// struct v (and of its embedded structs), in bytes.
func sliceBytes(v reflect.Value) float64 {
	n := 0.0
	for i := 0; i < v.NumField(); i++ {
		switch f := v.Field(i); f.Kind() {
		case reflect.Slice:
			n += float64(f.Cap()) * float64(f.Type().Elem().Size())
		case reflect.Struct:
			n += sliceBytes(f)
		}
	}
	return n
}
