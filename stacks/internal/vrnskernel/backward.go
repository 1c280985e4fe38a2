package vrnskernel

// backward back-propagates through position b: gr is ∂L/∂r (external
// layout), gd receives ∂L/∂logΔ (external layout) and gv ∂L/∂v of the
// vector pushed by this step. The adjoints of earlier positions are
// accumulated in place.
func (s *seq) backward(b int, gr, gd, gv []float64) {
	K, Q, G, M := s.K, s.nq, s.ns, s.M
	kk, kq := K*K, K*Q
	eRep, ePop := s.eRep[b*kk:(b+1)*kk], s.ePop[b*kq:(b+1)*kq]
	dRep, dPop := s.dRep[b], s.dPop[b]
	lo := s.lo(b)
	clear(s.crep)
	clear(s.cpop)
	clear(s.gpush)

	// The reading and α[b]. With P_a = α[a]·γ[a→b], Z = Σ_a Σ_j P_a[j] and
	// r[j,k] = Σ_a P_a[j] V[a+1][k] / Z,
	//   ∂L/∂P_a[j] = ᾱ_b[j] + (Σ_k g[j,k] V[a+1][k] − Σ_{j,k} g r) / Z
	//   ∂L/∂V[a+1][k] += Σ_j g[j,k] P_a[j] / Z.
	// In mantissas relative to abar[b], p̂_a = P_a e^{−abar[b]}.
	if s.abar[b] != negInf {
		aEb, Cab := s.aE[b*K:(b+1)*K], s.Ca[b*K:(b+1)*K]
		var z float64
		for _, v := range aEb {
			z += v
		}
		inv := 1 / z
		var dot float64
		for a := lo; a < b; a++ {
			bi := s.blk(a, b)
			ra := a - lo
			p, g := s.pa[ra*K:(ra+1)*K], s.gv[ra*K:(ra+1)*K]
			clear(p)
			s.es[ra] = 0
			sh := s.abar[a] + s.beta[bi]
			if sh == negInf {
				continue
			}
			es := factor(sh - s.abar[b])
			if es == 0 {
				continue
			}
			s.es[ra] = es
			vecMat(p, s.aE[a*K:(a+1)*K], s.E[bi*kk:(bi+1)*kk], es, K)
			vec := s.V[(a+1)*M : (a+2)*M]
			for y := 0; y < G; y++ {
				for r := 0; r < Q; r++ {
					gg := gr[(r*G+y)*M : (r*G+y+1)*M]
					var sum float64
					for k, vv := range vec {
						sum += gg[k] * vv
					}
					g[y*Q+r] = sum
					dot += p[y*Q+r] * sum
				}
			}
		}
		dot *= inv
		B := s.bvec
		for a := lo; a < b; a++ {
			ra := a - lo
			es := s.es[ra]
			if es == 0 {
				continue
			}
			bi := s.blk(a, b)
			p, g := s.pa[ra*K:(ra+1)*K], s.gv[ra*K:(ra+1)*K]
			for j := range B {
				B[j] = Cab[j] + (g[j]-dot)*inv
			}
			E, Cb := s.E[bi*kk:(bi+1)*kk], s.C[bi*kk:(bi+1)*kk]
			Caa := s.Ca[a*K : (a+1)*K]
			for i, av := range s.aE[a*K : (a+1)*K] {
				row, crow := E[i*K:(i+1)*K], Cb[i*K:(i+1)*K]
				var sum float64
				for j, bv := range B {
					sum += row[j] * bv
				}
				Caa[i] += es * sum
				if av *= es; av != 0 {
					for j, bv := range B {
						crow[j] += av * bv
					}
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

	// γ blocks (a, b).
	for a := lo; a < b; a++ {
		bi := s.blk(a, b)
		by := s.beta[bi]
		if by == negInf {
			continue
		}
		E, Cy := s.E[bi*kk:(bi+1)*kk], s.C[bi*kk:(bi+1)*kk]
		if a == b-1 {
			for e, ev := range E {
				s.gpush[e] = ev * Cy[e]
			}
			continue
		}
		xb := s.blk(a, b-1)
		if sh := s.beta[xb] + dRep; sh != negInf {
			if es := factor(sh - by); es != 0 {
				matMulBT(s.C[xb*kk:(xb+1)*kk], Cy, eRep, es, K, K, K)
				matMulAT(s.crep, s.E[xb*kk:(xb+1)*kk], Cy, es, K, K, K)
			}
		}
		c := hfac(s.psi[b] - s.psi[a] - by)
		for k := a + 1; k <= b-2; k++ {
			bk, pk := s.blk(a, k), s.gp(k, b)
			if es := s.weight(bk, pk, by, c); es != 0 {
				popBack(s.C[bk*kk:(bk+1)*kk], s.CP[pk*kq:(pk+1)*kq], Cy, s.E[bk*kk:(bk+1)*kk], s.X[pk*kq:(pk+1)*kq], es, K, Q)
			}
		}
	}

	// γ′ blocks (k, b).
	for k := lo + 1; k <= b-2; k++ {
		pk, xb := s.gp(k, b), s.blk(k, b-1)
		tk := s.tau[pk]
		if tk == negInf {
			continue
		}
		sh := s.beta[xb] + dPop
		if sh == negInf {
			continue
		}
		if es := factor(sh - tk); es != 0 {
			CPk := s.CP[pk*kq : (pk+1)*kq]
			matMulBT(s.C[xb*kk:(xb+1)*kk], CPk, ePop, es, K, K, Q)
			matMulAT(s.cpop, s.E[xb*kk:(xb+1)*kk], CPk, es, K, K, Q)
		}
	}

	// ∂L/∂logΔ in the external layout, and ∂L/∂v.
	W := 2*K + Q
	for q := 0; q < Q; q++ {
		for x := 0; x < G; x++ {
			row := gd[(q*G+x)*W : (q*G+x+1)*W]
			i := x*Q + q
			for r := 0; r < Q; r++ {
				for y := 0; y < G; y++ {
					e := i*K + y*Q + r
					row[r*G+y] = s.gpush[e]
					row[K+r*G+y] = eRep[e] * s.crep[e]
				}
				e := i*Q + r
				row[2*K+r] = ePop[e] * s.cpop[e]
			}
		}
	}
	copy(gv, s.Vbar[b*M:(b+1)*M])
}
