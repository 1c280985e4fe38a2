package nskernel

import "math"

// backward back-propagates through position b (see Tape.Backward and
// Tape.BackwardVector); for a vector stack it writes ∂L/∂v of the vector
// pushed by this step into gv.
func (s *seq) backward(b int, gr, gd, gv []float64) {
	m, Q, G := s.m, s.nq, s.ns
	mm, mq := m*m, m*Q
	col := s.dl[b*s.na : (b+1)*s.na]
	eRep, ePop := s.eRep[b*mm:(b+1)*mm], s.ePop[b*mq:(b+1)*mq]
	dRep, dPop := s.dRep[b], s.dPop[b]
	lo := s.lo(b)
	// The per-column factors of the forward pass (see step).
	inc := s.psi[b] - s.psi[b-1]
	cr, cp := hfac(dRep-inc), hfac(dPop-inc)
	vec, z6, vec9, z9, z12 := s.kern.vec6, s.kern.z6, s.kern.vec9, s.kern.z9, s.kern.z12
	vm := vec || vec9 || z12 // mulAddV serves m
	if vm {
		// Transposed rep and pop weights: the products with them below
		// become A·B for the vector kernel.
		transpose(s.eRepT, eRep, m, m)
		transpose(s.ePopT, ePop, m, Q)
	}
	clear(s.crep)
	clear(s.axrep)
	clear(s.cpop)
	clear(s.axpop)
	clear(s.gpush)

	// Reading and α[b].
	if s.abar[b] != negInf && s.M > 0 {
		s.vectorAlphaBack(b, gr)
	} else if s.abar[b] != negInf {
		aE := s.aE[b*m : (b+1)*m]
		Ca, AXa := s.Ca[b*m:(b+1)*m], s.AXa[b*m:(b+1)*m]
		var z float64
		for _, v := range aE {
			z += v
		}
		g := s.sB[:m] // the reading gradient per internal index
		for y := 0; y < G; y++ {
			for r := 0; r < Q; r++ {
				if s.sread {
					g[y*Q+r] = gr[r*G+y]
				} else {
					g[y*Q+r] = gr[y]
				}
			}
		}
		var dot float64
		for j, v := range aE {
			dot += v / z * g[j]
		}
		A, Bα := s.atotA, s.ba
		for j, v := range aE {
			A[j] = v*Ca[j] + AXa[j] + v/z*(g[j]-dot)
			if v >= eBad {
				Bα[j] = Ca[j] + AXa[j]/v + (g[j]-dot)/z
			} else {
				Bα[j] = 0
			}
		}
		lb := s.la[b*m : (b+1)*m]
		// exp(ᾱ_a + β_ab − ᾱ_b) = ha_a·hb_ab/ha_b.
		iha := 0.0
		if h := s.ha[b]; h != 0 {
			iha = 1 / h
		}
		for a := lo; a < b; a++ {
			bi := s.blk(a, b)
			if s.abar[a] == negInf || s.beta[bi] == negInf {
				continue
			}
			sh := s.abar[a] + s.beta[bi] - s.abar[b]
			if sh > bwdThr {
				for j, v := range aE {
					if v >= eBad && A[j] != 0 {
						s.exactAlphaBack(a, b, j, A[j], lb[j])
					}
				}
				continue
			}
			es := s.ha[a] * s.hb[bi] * iha
			if es == 0 {
				es = math.Exp(sh)
			}
			if es == 0 {
				continue
			}
			E, Cb := s.E[bi*mm:(bi+1)*mm], s.C[bi*mm:(bi+1)*mm]
			// Ca[a] += es·E·Bα, C_ab += es·aE[a]⊗Bα
			matMulBT(s.Ca[a*m:(a+1)*m], E, Bα, es, m, 1, m)
			matMulAT(Cb, s.aE[a*m:(a+1)*m], Bα, es, 1, m, m)
		}
		for j, v := range aE {
			if v < eBad && A[j] != 0 && lb[j] != negInf {
				for a := lo; a < b; a++ {
					s.exactAlphaBack(a, b, j, A[j], lb[j])
				}
			}
		}
	}

	if b-2 > lo {
		switch {
		case z6:
			permXTZ6x2(s.xv, s.X[s.gp(lo+1, b)*mq:], b-2-lo)
		case vec:
			permXT6x2(s.xv, s.X[s.gp(lo+1, b)*mq:], b-2-lo)
		case z9:
			permXR9x3(s.xv, s.X[s.gp(lo+1, b)*mq:], b-2-lo)
			clear(s.cpt[:(b-2-lo)*27])
		case vec9:
			permXT9x3(s.xv, s.X[s.gp(lo+1, b)*mq:], b-2-lo)
		case z12:
			permXT12x3(s.xv, s.X[s.gp(lo+1, b)*mq:], b-2-lo)
			clear(s.cpt[:(b-2-lo)*36])
		}
	}
	// γ blocks of column b.
	for a := lo; a < b; a++ {
		bi := s.blk(a, b)
		if s.beta[bi] == negInf {
			continue
		}
		E, Cb, AXb := s.E[bi*mm:(bi+1)*mm], s.C[bi*mm:(bi+1)*mm], s.AX[bi*mm:(bi+1)*mm]
		// A is the adjoint of the block times its value (∂L/∂log γ), B
		// the adjoint of its mantissas as the kernels take it.
		B, A := s.sB, s.atot
		anyBad, haveA := false, true
		clean := !s.axNZ[bi]
		if clean {
			for _, ev := range E {
				if ev < eBad {
					clean = false
					break
				}
			}
		}
		if clean {
			// The common case: B is C itself (this loop writes no block
			// of column b), and A is needed only on the rare paths.
			B, haveA = Cb, false
		} else if s.axNZ[bi] {
			for e, ev := range E {
				A[e] = ev*Cb[e] + AXb[e]
				if ev >= eBad {
					B[e] = Cb[e] + AXb[e]/ev
				} else {
					B[e] = 0
					if A[e] != 0 {
						anyBad = true
					}
				}
			}
		} else {
			// AX is zero: the same values without the division.
			B, A, Cb := B[:len(E)], A[:len(E)], Cb[:len(E)]
			for e, ev := range E {
				cv := Cb[e]
				av := ev * cv
				A[e] = av
				if ev >= eBad {
					B[e] = cv
				} else {
					B[e] = 0
					if av != 0 {
						anyBad = true
					}
				}
			}
		}
		needA := func() {
			if !haveA {
				for e, ev := range E {
					A[e] = ev * Cb[e]
				}
				haveA = true
			}
		}
		if a == b-1 {
			needA()
			copy(s.gpush, A)
			continue
		}
		// c = exp(ψ_b − ψ_a − β_ab) = 1/hb_ab.
		c := 0.0
		if h := s.hb[bi]; h != 0 {
			c = 1 / h
		}
		xb := s.blk(a, b-1)
		if s.beta[xb] != negInf && dRep != negInf {
			sh := s.beta[xb] + dRep - s.beta[bi]
			if sh > bwdThr {
				needA()
				for e, ev := range E {
					if ev >= eBad && A[e] != 0 {
						s.exactRepBack(a, b, e/m, e%m, A[e], s.lat(bi, e))
					}
				}
			} else if es := rescale(s.hb[xb]*cr*c, sh); es != 0 {
				if vm {
					mulAddV(s.C[xb*mm:(xb+1)*mm], B, s.eRepT, es, m, m, m, 1)
				} else {
					matMulBT(s.C[xb*mm:(xb+1)*mm], B, eRep, es, m, m, m)
				}
				matMulAT(s.crep, s.E[xb*mm:(xb+1)*mm], B, es, m, m, m)
			}
		}
		bk0, pk0 := s.blk(a, a+1), 0
		if a+1 <= b-2 {
			pk0 = s.gp(a+1, b)
		}
		if nk := b - 2 - a; nk > 0 {
			wk := s.wk[:nk]
			bt, tt := s.beta[bk0:bk0+nk], s.tau[pk0:pk0+nk]
			hb, hp := s.hb[bk0:bk0+nk], s.hp[pk0:pk0+nk]
			bb := s.beta[bi]
			for k := range wk {
				sh := bt[k] + tt[k] - bb // −∞ for a block of weight 0
				if sh > bwdThr {
					needA()
					for e, ev := range E {
						if ev >= eBad && A[e] != 0 {
							s.exactPopBack(a, b, a+1+k, e/m, e%m, A[e], s.lat(bi, e))
						}
					}
					wk[k] = 0
					continue
				}
				// exp(sh) = hb·hp·c when no factor is out of range (0); a
				// block of weight 0 has hb or hp 0.
				es := hb[k] * hp[k] * c
				if es == 0 {
					es = math.Exp(sh)
				}
				wk[k] = es
			}
			switch {
			case z6:
				popSumBackZ6x2(s.C[bk0*mm:(bk0+nk)*mm], s.CP[pk0*mq:(pk0+nk)*mq], B, s.E[bk0*mm:(bk0+nk)*mm], s.xv[(a-lo)*24:(a-lo+nk)*24], wk)
			case vec:
				popSumBackVec6x2(s.C[bk0*mm:(bk0+nk)*mm], s.CP[pk0*mq:(pk0+nk)*mq], B, s.E[bk0*mm:(bk0+nk)*mm], s.xv[(a-lo)*24:(a-lo+nk)*24], wk)
			case z9:
				bexp9x3(s.bx, B)
				popSumBackZ9x3(s.C[bk0*mm:(bk0+nk)*mm], s.cpt[(a-lo)*27:(a-lo+nk)*27], s.bx, s.E[bk0*mm:(bk0+nk)*mm], s.xv[(a-lo)*27:(a-lo+nk)*27], wk)
			case z12:
				popSumBackZ12x3(s.C[bk0*mm:(bk0+nk)*mm], s.cpt[(a-lo)*36:(a-lo+nk)*36], B, s.bx, s.E[bk0*mm:(bk0+nk)*mm], s.xv[(a-lo)*72:(a-lo+nk)*72], wk)
			case vec9:
				popSumBackVec9x3(s.C[bk0*mm:(bk0+nk)*mm], s.CP[pk0*mq:(pk0+nk)*mq], B, s.E[bk0*mm:(bk0+nk)*mm], s.xv[(a-lo)*27:(a-lo+nk)*27], wk)
			default:
				popSumBack(s.C[bk0*mm:(bk0+nk)*mm], s.CP[pk0*mq:(pk0+nk)*mq], B, s.E[bk0*mm:(bk0+nk)*mm], s.X[pk0*mq:(pk0+nk)*mq], wk, s.xs, s.ptmp, nk, m, Q)
			}
		}
		if anyBad {
			for e, ev := range E {
				if ev < eBad && A[e] != 0 {
					L := s.lat(bi, e)
					if L == negInf {
						continue
					}
					s.exactRepBack(a, b, e/m, e%m, A[e], L)
					for k := a + 1; k <= b-2; k++ {
						s.exactPopBack(a, b, k, e/m, e%m, A[e], L)
					}
				}
			}
		}
	}

	if z9 && b-2 > lo {
		addCPT(s.CP[s.gp(lo+1, b)*mq:], s.cpt, b-2-lo)
	}
	if z12 && b-2 > lo {
		addCPT12(s.CP[s.gp(lo+1, b)*mq:], s.cpt, b-2-lo)
	}

	// G' blocks of column b.
	for k := lo + 1; k <= b-2; k++ {
		pk, xb := s.gp(k, b), s.blk(k, b-1)
		if s.tau[pk] == negInf {
			continue
		}
		X, CPk, AXPk := s.X[pk*mq:(pk+1)*mq], s.CP[pk*mq:(pk+1)*mq], s.AXP[pk*mq:(pk+1)*mq]
		B, A := s.sB[:mq], s.atot[:mq]
		anyBad := false
		if s.axpNZ[pk] {
			for e, xv := range X {
				A[e] = xv*CPk[e] + AXPk[e]
				if xv >= eBad {
					B[e] = CPk[e] + AXPk[e]/xv
				} else {
					B[e] = 0
					if A[e] != 0 {
						anyBad = true
					}
				}
			}
		} else {
			B, A, CPk := B[:len(X)], A[:len(X)], CPk[:len(X)]
			for e, xv := range X {
				cv := CPk[e]
				av := xv * cv
				A[e] = av
				if xv >= eBad {
					B[e] = cv
				} else {
					B[e] = 0
					if av != 0 {
						anyBad = true
					}
				}
			}
		}
		if s.beta[xb] == negInf || dPop == negInf {
			continue
		}
		sh := s.beta[xb] + dPop - s.tau[pk]
		// exp(sh) = hb_{k,b−1}·cp/hp_kb.
		ihp := 0.0
		if h := s.hp[pk]; h != 0 {
			ihp = 1 / h
		}
		if sh > bwdThr {
			for e, xv := range X {
				if xv >= eBad && A[e] != 0 {
					s.exactGpBack(k, b, e/Q, e%Q, A[e], s.latP(pk, e))
				}
			}
		} else if es := rescale(s.hb[xb]*cp*ihp, sh); es != 0 {
			if vm {
				mulAddV(s.C[xb*mm:(xb+1)*mm], B, s.ePopT, es, m, Q, Q, 1)
			} else {
				matMulBT(s.C[xb*mm:(xb+1)*mm], B, ePop, es, m, m, Q)
			}
			matMulAT(s.cpop, s.E[xb*mm:(xb+1)*mm], B, es, m, m, Q)
		}
		if anyBad {
			for e, xv := range X {
				if xv < eBad && A[e] != 0 {
					if L := s.latP(pk, e); L != negInf {
						s.exactGpBack(k, b, e/Q, e%Q, A[e], L)
					}
				}
			}
		}
	}

	// ∂L/∂logΔ_b in the external layout.
	W := 2*m + Q
	for q := 0; q < Q; q++ {
		for x := 0; x < G; x++ {
			row := gd[(q*G+x)*W : (q*G+x+1)*W]
			i := x*Q + q
			for r := 0; r < Q; r++ {
				for y := 0; y < G; y++ {
					e := i*m + y*Q + r
					row[r*G+y] = s.gpush[e]
					row[m+r*G+y] = eRep[e]*s.crep[e] + s.axrep[e]
				}
				e := i*Q + r
				row[2*m+r] = ePop[e]*s.cpop[e] + s.axpop[e]
			}
		}
	}
	if s.M > 0 {
		copy(gv, s.Vbar[b*s.M:(b+1)*s.M])
	}
	_ = col
}

// vectorAlphaBack is the reading and α part of backward for a vector
// stack. With P_a = α[a]·γ[a→b], Z = Σ_j α[b][j] and r[j,k] = Σ_a P_a[j]
// V[a+1][k] / Z, the adjoint of P_a[j] is that of α[b][j] (from later
// steps) plus (g_a[j] − dot)/Z, g_a[j] = Σ_k ∂L/∂r[j,k] V[a+1][k] and dot =
// Σ_{a,j} P_a[j] g_a[j] / Z; and ∂L/∂V[a+1][k] += Σ_j ∂L/∂r[j,k] P_a[j] / Z.
// Each row a then goes through the contraction P_a = α[a]·γ[a→b] as the
// one α[b] of the NS stack does, with the same exact fallbacks.
func (s *seq) vectorAlphaBack(b int, gr []float64) {
	m, Q, G, M := s.m, s.nq, s.ns, s.M
	mm := m * m
	lo := s.lo(b)
	aE := s.aE[b*m : (b+1)*m]
	Ca, AXa := s.Ca[b*m:(b+1)*m], s.AXa[b*m:(b+1)*m]
	var z float64
	for _, v := range aE {
		z += v
	}
	inv := 1 / z
	// A: the adjoint of α[b] from later steps times its value (∂L/∂log
	// α[b]); Bα: the adjoint of its mantissas.
	A, Bα := s.atotA, s.ba
	for j, v := range aE {
		A[j] = v*Ca[j] + AXa[j]
		if v >= eBad {
			Bα[j] = Ca[j] + AXa[j]/v
		} else {
			Bα[j] = 0
		}
	}
	var dot float64
	for a := lo; a < b; a++ {
		bi := s.blk(a, b)
		p, g := s.P[bi*m:(bi+1)*m], s.gva[(a-lo)*m:(a-lo+1)*m]
		vec := s.V[(a+1)*M : (a+2)*M]
		for y := 0; y < G; y++ {
			for r := 0; r < Q; r++ {
				var sum float64
				for k, gv := range gr[(r*G+y)*M : (r*G+y+1)*M] {
					sum += gv * vec[k]
				}
				g[y*Q+r] = sum
				dot += p[y*Q+r] * sum
			}
		}
	}
	dot *= inv
	lb := s.la[b*m : (b+1)*m]
	iha := 0.0
	if h := s.ha[b]; h != 0 {
		iha = 1 / h
	}
	Aa, Ba := s.aa, s.sB[:m]
	for a := lo; a < b; a++ {
		bi := s.blk(a, b)
		if s.abar[a] == negInf || s.beta[bi] == negInf {
			continue
		}
		p, g := s.P[bi*m:(bi+1)*m], s.gva[(a-lo)*m:(a-lo+1)*m]
		for j, v := range aE {
			R := (g[j] - dot) * inv
			Aa[j] = A[j] + v*R
			if v >= eBad {
				Ba[j] = Bα[j] + R
			} else {
				Ba[j] = 0
			}
		}
		// exp(ᾱ_a + β_ab − ᾱ_b) = ha_a·hb_ab/ha_b.
		if sh := s.abar[a] + s.beta[bi] - s.abar[b]; sh > bwdThr {
			for j, v := range aE {
				if v >= eBad && Aa[j] != 0 {
					s.exactAlphaBack(a, b, j, Aa[j], lb[j])
				}
			}
		} else if es := rescale(s.ha[a]*s.hb[bi]*iha, sh); es != 0 {
			E, Cb := s.E[bi*mm:(bi+1)*mm], s.C[bi*mm:(bi+1)*mm]
			matMulBT(s.Ca[a*m:(a+1)*m], E, Ba, es, m, 1, m)
			matMulAT(Cb, s.aE[a*m:(a+1)*m], Ba, es, 1, m, m)
		}
		for j, v := range aE {
			if v < eBad && Aa[j] != 0 && lb[j] != negInf {
				s.exactAlphaBack(a, b, j, Aa[j], lb[j])
			}
		}
		vb := s.Vbar[(a+1)*M : (a+2)*M]
		for y := 0; y < G; y++ {
			for r := 0; r < Q; r++ {
				pv := p[y*Q+r] * inv
				if pv == 0 {
					continue
				}
				for k, gv := range gr[(r*G+y)*M : (r*G+y+1)*M] {
					vb[k] += pv * gv
				}
			}
		}
	}
}

// rescale returns h, a product of range-limited exponentials equal to
// exp(sh), or exp(sh) itself where h is 0 (a factor out of range).
func rescale(h, sh float64) float64 {
	if h != 0 {
		return h
	}
	return math.Exp(sh)
}

// transpose sets dst (c×r) to the transpose of src (r×c).
func transpose(dst, src []float64, r, c int) {
	for i := 0; i < r; i++ {
		for j, v := range src[i*c : (i+1)*c] {
			dst[j*r+i] = v
		}
	}
}

func (s *seq) exactAlphaBack(a, b, j int, A, L float64) {
	m := s.m
	bi := s.blk(a, b)
	for i := 0; i < m; i++ {
		w := math.Exp(s.la[a*m+i] + s.lat(bi, i*m+j) - L)
		s.AXa[a*m+i] += A * w
		s.AX[bi*m*m+i*m+j] += A * w
	}
	s.axNZ[bi] = true
}

func (s *seq) exactRepBack(a, b, i, j int, A, L float64) {
	m := s.m
	rep := s.dl[b*s.na+m*m : b*s.na+2*m*m]
	xb := s.blk(a, b-1)
	for sz := 0; sz < m; sz++ {
		w := math.Exp(s.lat(xb, i*m+sz) + rep[sz*m+j] - L)
		s.AX[xb*m*m+i*m+sz] += A * w
		s.axrep[sz*m+j] += A * w
	}
	s.axNZ[xb] = true
}

func (s *seq) exactPopBack(a, b, k, i, j int, A, L float64) {
	m, Q := s.m, s.nq
	y, r := j/Q, j%Q
	bk, pk := s.blk(a, k), s.gp(k, b)
	for u := 0; u < Q; u++ {
		uy := y*Q + u
		w := 0.0 // exp(−∞): no logs for a factor 0, as in exactGamma
		if !s.latZero(bk, i*m+uy) && !s.latPZero(pk, uy*Q+r) {
			w = math.Exp(s.lat(bk, i*m+uy) + s.latP(pk, uy*Q+r) - L)
		}
		s.AX[bk*m*m+i*m+uy] += A * w
		s.AXP[pk*m*Q+uy*Q+r] += A * w
	}
	s.axNZ[bk] = true
	s.axpNZ[pk] = true
}

func (s *seq) exactGpBack(k, b, i, r int, A, L float64) {
	m, Q := s.m, s.nq
	pop := s.dl[b*s.na+2*m*m : (b+1)*s.na]
	xb := s.blk(k, b-1)
	for sz := 0; sz < m; sz++ {
		w := math.Exp(s.lat(xb, i*m+sz) + pop[sz*Q+r] - L)
		s.AX[xb*m*m+i*m+sz] += A * w
		s.axpop[sz*Q+r] += A * w
	}
	s.axNZ[xb] = true
}
