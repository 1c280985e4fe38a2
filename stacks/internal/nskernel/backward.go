package nskernel

import "math"

// backward back-propagates through position b (see Tape.Backward).
func (s *seq) backward(b int, gr, gd []float64) {
	m, Q, G := s.m, s.nq, s.ns
	mm, mq := m*m, m*Q
	col := s.dl[b*s.na : (b+1)*s.na]
	eRep, ePop := s.eRep[b*mm:(b+1)*mm], s.ePop[b*mq:(b+1)*mq]
	dRep, dPop := s.dRep[b], s.dPop[b]
	lo := s.lo(b)
	clear(s.crep)
	clear(s.axrep)
	clear(s.cpop)
	clear(s.axpop)
	clear(s.gpush)

	// Reading and α[b].
	if s.abar[b] != negInf {
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
			es := math.Exp(sh)
			if es == 0 {
				continue
			}
			E, Cb := s.E[bi*mm:(bi+1)*mm], s.C[bi*mm:(bi+1)*mm]
			Caa := s.Ca[a*m : (a+1)*m]
			for i, av := range s.aE[a*m : (a+1)*m] {
				row, crow := E[i*m:(i+1)*m], Cb[i*m:(i+1)*m]
				var sum float64
				for j, bv := range Bα {
					sum += row[j] * bv
				}
				Caa[i] += es * sum
				if av *= es; av != 0 {
					for j, bv := range Bα {
						crow[j] += av * bv
					}
				}
			}
		}
		for j, v := range aE {
			if v < eBad && A[j] != 0 && lb[j] != negInf {
				for a := lo; a < b; a++ {
					s.exactAlphaBack(a, b, j, A[j], lb[j])
				}
			}
		}
	}

	// γ blocks of column b.
	for a := lo; a < b; a++ {
		bi := s.blk(a, b)
		if s.beta[bi] == negInf {
			continue
		}
		E, Cb, AXb := s.E[bi*mm:(bi+1)*mm], s.C[bi*mm:(bi+1)*mm], s.AX[bi*mm:(bi+1)*mm]
		B, A := s.sB, s.atot
		anyBad := false
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
		if a == b-1 {
			copy(s.gpush, A)
			continue
		}
		xb := s.blk(a, b-1)
		if s.beta[xb] != negInf && dRep != negInf {
			sh := s.beta[xb] + dRep - s.beta[bi]
			if sh > bwdThr {
				for e, ev := range E {
					if ev >= eBad && A[e] != 0 {
						s.exactRepBack(a, b, e/m, e%m, A[e], s.lat(bi, e))
					}
				}
			} else if es := math.Exp(sh); es != 0 {
				matMulBT(s.C[xb*mm:(xb+1)*mm], B, eRep, es, m, m, m)
				matMulAT(s.crep, s.E[xb*mm:(xb+1)*mm], B, es, m, m, m)
			}
		}
		bk0, pk0 := s.blk(a, a+1), 0
		if a+1 <= b-2 {
			pk0 = s.gp(a+1, b)
		}
		c := hfac(s.psi[b] - s.psi[a] - s.beta[bi])
		for k := a + 1; k <= b-2; k++ {
			bk, pk := bk0+k-a-1, pk0+k-a-1
			if s.beta[bk] == negInf || s.tau[pk] == negInf {
				continue
			}
			sh := s.beta[bk] + s.tau[pk] - s.beta[bi]
			if sh > bwdThr {
				for e, ev := range E {
					if ev >= eBad && A[e] != 0 {
						s.exactPopBack(a, b, k, e/m, e%m, A[e], s.lat(bi, e))
					}
				}
				continue
			}
			es := s.hb[bk] * s.hp[pk]
			if es == 0 || c == 0 {
				es = math.Exp(sh)
			} else {
				es *= c
			}
			if es == 0 {
				continue
			}
			xs := s.xs
			for e, xv := range s.X[pk*mq : (pk+1)*mq] {
				xs[e] = es * xv
			}
			t := s.ptmp
			clear(t)
			popBackKernel(s.C[bk*mm:(bk+1)*mm], t, B, s.E[bk*mm:(bk+1)*mm], xs, m, Q)
			cp := s.CP[pk*mq : (pk+1)*mq]
			for e, tv := range t {
				cp[e] += es * tv
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

	// G' blocks of column b.
	for k := lo + 1; k <= b-2; k++ {
		pk, xb := s.gp(k, b), s.blk(k, b-1)
		if s.tau[pk] == negInf {
			continue
		}
		X, CPk, AXPk := s.X[pk*mq:(pk+1)*mq], s.CP[pk*mq:(pk+1)*mq], s.AXP[pk*mq:(pk+1)*mq]
		B, A := s.sB[:mq], s.atot[:mq]
		anyBad := false
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
		if s.beta[xb] == negInf || dPop == negInf {
			continue
		}
		sh := s.beta[xb] + dPop - s.tau[pk]
		if sh > bwdThr {
			for e, xv := range X {
				if xv >= eBad && A[e] != 0 {
					s.exactGpBack(k, b, e/Q, e%Q, A[e], s.latP(pk, e))
				}
			}
		} else if es := math.Exp(sh); es != 0 {
			matMulBT(s.C[xb*mm:(xb+1)*mm], B, ePop, es, m, m, Q)
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
	_ = col
}

func (s *seq) exactAlphaBack(a, b, j int, A, L float64) {
	m := s.m
	bi := s.blk(a, b)
	for i := 0; i < m; i++ {
		w := math.Exp(s.la[a*m+i] + s.lat(bi, i*m+j) - L)
		s.AXa[a*m+i] += A * w
		s.AX[bi*m*m+i*m+j] += A * w
	}
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
}

func (s *seq) exactPopBack(a, b, k, i, j int, A, L float64) {
	m, Q := s.m, s.nq
	y, r := j/Q, j%Q
	bk, pk := s.blk(a, k), s.gp(k, b)
	for u := 0; u < Q; u++ {
		uy := y*Q + u
		w := math.Exp(s.lat(bk, i*m+uy) + s.latP(pk, uy*Q+r) - L)
		s.AX[bk*m*m+i*m+uy] += A * w
		s.AXP[pk*m*Q+uy*Q+r] += A * w
	}
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
}
