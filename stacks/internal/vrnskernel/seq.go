package vrnskernel

import "math"

var negInf = math.Inf(-1)

// hLim bounds the exponents of the factors hb and hp (see seq): beyond it,
// a product weight is computed by its own exponential.
const hLim = 300

// hfac returns exp(x) for |x| ≤ hLim and 0, meaning "compute directly",
// otherwise.
func hfac(x float64) float64 {
	if x >= -hLim && x <= hLim {
		return math.Exp(x)
	}
	return 0
}

// maxShift bounds the exponent of the factors that relate two blocks'
// shifts in the backward pass. Within the range where block scaling is
// exact (see the package documentation) the factors stay far below it;
// beyond, clamping keeps the gradients finite.
const maxShift = 700

// seq is the dynamic program of one sequence of the batch.
//
// Configurations (q,x) are indexed internally by x·|Q|+q, so that the
// configurations with top symbol y are contiguous. A γ block (a,b), a < b,
// is a K×K matrix (K = |Q||Γ|), row (q,x), column (r,y), stored as
// exp(beta)·E with the largest entry of E equal to 1 (or E = 0 and beta =
// −∞). A γ′ block (k,b) is a K×|Q| matrix, row (u,y), column r, stored as
// exp(tau)·X. α[p] is exp(abar)·aE. The adjoints C, CP and Ca are the
// derivatives of the loss with respect to the mantissas E, X and aE.
//
// The pop term needs, for every split point k of every block (a,b), the
// factor exp(beta(a,k) + tau(k,b) − S(a,b)). To spare an exponential per
// split point, psi is a potential over positions (the cumulative largest
// push log-weight) and each block keeps hb = exp(beta − (psi[b] −
// psi[a])) and each γ′ block hp = exp(tau − (psi[b] − psi[k])), so that
// the factor is hb·hp·exp(psi[b] − psi[a] − S): one exponential per block.
// A factor out of range (hfac) is computed directly.
type seq struct {
	K, nq, ns, M int // |Q||Γ|, |Q|, |Γ|, vector size m
	D            int // window in positions (capPos for unlimited)
	fixed        bool
	capPos       int
	np           int // positions filled
	base         int // step t makes position base+t

	rowStart []int // block index of (a, a+1)
	colStart []int // γ′ index of (lo(b)+1, b)

	E, C   []float64 // γ blocks, K² each
	beta   []float64
	X, CP  []float64 // γ′ blocks, K|Q| each
	tau    []float64
	aE, Ca []float64 // α, K per position
	abar   []float64
	psi    []float64 // potential per position
	hb, hp []float64 // per γ and γ′ block
	// V[p] is the vector of the stack element pushed by the step that
	// made position p (for the fixed bottom, V[1] is the initial
	// bottom's); Vbar its adjoint.
	V, Vbar []float64

	// per position: replace (K²) and pop (K|Q|) weights as mantissas and
	// shifts
	eRep, ePop []float64
	dRep, dPop []float64

	// scratch
	acc, crep, cpop, gpush []float64
	xs, wk                 []float64 // scaled γ′ blocks and weights per split point
	pa, gv, es             []float64 // per row a of a column: p̂_a (K), g·V_{a+1} (K), shift factor
	bvec                   []float64 // K
}

func (s *seq) init(c Config, capPos int) {
	s.nq, s.ns, s.M = c.States, c.Symbols, c.Vector
	s.K = s.nq * s.ns
	K, kk, kq := s.K, s.K*s.K, s.K*s.nq
	s.fixed = c.Fixed
	s.capPos = capPos
	s.D = c.Window
	if s.D == 0 {
		s.D = capPos
	}
	s.rowStart = make([]int, capPos+1)
	nb := 0
	for a := 0; a < capPos; a++ {
		s.rowStart[a] = nb
		nb += min(s.D, capPos-1-a)
	}
	s.rowStart[capPos] = nb
	s.colStart = make([]int, capPos+1)
	ng := 0
	for b := 0; b < capPos; b++ {
		s.colStart[b] = ng
		ng += max(0, b-2-s.lo(b))
	}
	s.colStart[capPos] = ng
	s.E = make([]float64, nb*kk)
	s.C = make([]float64, nb*kk)
	s.beta = make([]float64, nb)
	s.hb = make([]float64, nb)
	s.X = make([]float64, ng*kq)
	s.CP = make([]float64, ng*kq)
	s.tau = make([]float64, ng)
	s.hp = make([]float64, ng)
	s.aE = make([]float64, capPos*K)
	s.Ca = make([]float64, capPos*K)
	s.abar = make([]float64, capPos)
	s.psi = make([]float64, capPos)
	s.V = make([]float64, capPos*s.M)
	s.Vbar = make([]float64, capPos*s.M)
	s.eRep = make([]float64, capPos*kk)
	s.ePop = make([]float64, capPos*kq)
	s.dRep = make([]float64, capPos)
	s.dPop = make([]float64, capPos)
	s.acc = make([]float64, kk)
	s.crep = make([]float64, kk)
	s.cpop = make([]float64, kq)
	s.gpush = make([]float64, kk)
	s.xs = make([]float64, capPos*kq)
	s.wk = make([]float64, capPos)
	s.pa = make([]float64, capPos*K)
	s.gv = make([]float64, capPos*K)
	s.es = make([]float64, capPos)
	s.bvec = make([]float64, K)
}

// lo is the first row of column b.
func (s *seq) lo(b int) int { return max(0, b-s.D) }

// blk is the index of γ block (a,b).
func (s *seq) blk(a, b int) int { return s.rowStart[a] + b - a - 1 }

// gp is the index of γ′ block (k,b).
func (s *seq) gp(k, b int) int { return s.colStart[b] + k - (s.lo(b) + 1) }

// setAlpha sets α[p] to the one-hot weight of configuration 0.
func (s *seq) setAlphaOneHot(p int) {
	K := s.K
	clear(s.aE[p*K : (p+1)*K])
	s.aE[p*K] = 1
	s.abar[p] = 0
	clear(s.Ca[p*K : (p+1)*K])
}

// begin starts from the initial stack; bottom is the initial bottom's
// vector (used by the fixed behaviour only).
func (s *seq) begin(bottom []float64) {
	s.setAlphaOneHot(0)
	s.psi[0] = 0
	if s.fixed {
		s.setAlphaOneHot(1)
		s.psi[1] = 0
		bi, kk := s.blk(0, 1), s.K*s.K
		clear(s.E[bi*kk : (bi+1)*kk])
		clear(s.C[bi*kk : (bi+1)*kk])
		s.E[bi*kk] = 1
		s.beta[bi] = 0
		s.setH(0, 1)
		copy(s.V[s.M:2*s.M], bottom)
		clear(s.Vbar[s.M : 2*s.M])
		s.np = 2
	} else {
		s.np = 1
	}
	s.base = s.np - 1
}

// saveState copies the last np positions into st.
func (s *seq) saveState(np int, st *seqState) {
	K, kk, M := s.K, s.K*s.K, s.M
	off := s.np - np
	st.aE = append([]float64(nil), s.aE[off*K:s.np*K]...)
	st.abar = append([]float64(nil), s.abar[off:s.np]...)
	st.psi = append([]float64(nil), s.psi[off:s.np]...)
	st.V = append([]float64(nil), s.V[(off+1)*M:s.np*M]...)
	st.E, st.beta = nil, nil
	for a := off; a < s.np; a++ {
		for b := a + 1; b < s.np; b++ {
			bi := s.blk(a, b)
			st.E = append(st.E, s.E[bi*kk:(bi+1)*kk]...)
			st.beta = append(st.beta, s.beta[bi])
		}
	}
}

// beginState starts from a carried state of np positions.
func (s *seq) beginState(np int, st *seqState) {
	K, kk, M := s.K, s.K*s.K, s.M
	copy(s.aE, st.aE)
	copy(s.abar, st.abar)
	copy(s.psi, st.psi)
	clear(s.Ca[:np*K])
	copy(s.V[M:np*M], st.V)
	clear(s.Vbar[:np*M])
	j := 0
	for a := 0; a < np; a++ {
		for b := a + 1; b < np; b++ {
			bi := s.blk(a, b)
			copy(s.E[bi*kk:(bi+1)*kk], st.E[j*kk:(j+1)*kk])
			clear(s.C[bi*kk : (bi+1)*kk])
			s.beta[bi] = st.beta[j]
			s.setH(a, b)
			j++
		}
	}
	s.np = np
	s.base = np - 1
}

// setH sets hb of γ block (a,b) from its shift.
func (s *seq) setH(a, b int) {
	bi := s.blk(a, b)
	s.hb[bi] = hfac(s.beta[bi] - (s.psi[b] - s.psi[a]))
}

// weight returns exp(beta(a,k) + tau(k,b) − S) for the γ block bk = (a,k)
// and the γ′ block pk = (k,b), given c = hfac(psi[b] − psi[a] − S).
func (s *seq) weight(bk, pk int, S, c float64) float64 {
	sh := s.beta[bk] + s.tau[pk]
	if sh == negInf {
		return 0
	}
	w := s.hb[bk] * s.hp[pk]
	if w == 0 || c == 0 {
		return math.Exp(math.Min(sh-S, maxShift))
	}
	return w * c
}

// expShift sets dst = exp(src − max src) and returns max src (−∞, with
// dst zero, when every entry is −∞).
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

// normalize turns acc, the mantissas of a result with shift S, into a
// stored block: dst = acc / max acc, returning the block's shift.
func normalize(dst, acc []float64, S float64) float64 {
	mx := 0.0
	for _, v := range acc {
		mx = math.Max(mx, v)
	}
	if mx == 0 || S == negInf {
		clear(dst)
		return negInf
	}
	f := 1 / mx
	for i, v := range acc {
		dst[i] = v * f
	}
	return S + math.Log(mx)
}

// factor returns exp(sh), clamped at exp(maxShift).
func factor(sh float64) float64 { return math.Exp(math.Min(sh, maxShift)) }

// step computes the next position from ld (the step's action log-weights,
// external layout) and v (the pushed vector), and writes the reading into
// out.
func (s *seq) step(ld, v, out []float64) {
	b := s.np
	s.np++
	K, Q, G, M := s.K, s.nq, s.ns, s.M
	kk, kq := K*K, K*Q
	copy(s.V[b*M:(b+1)*M], v)
	clear(s.Vbar[b*M : (b+1)*M])

	// The push block (b−1, b) and the replace and pop weights.
	pb := s.blk(b-1, b)
	push := s.E[pb*kk : (pb+1)*kk]
	rep := s.eRep[b*kk : (b+1)*kk]
	pop := s.ePop[b*kq : (b+1)*kq]
	W := 2*K + Q
	for q := 0; q < Q; q++ {
		for x := 0; x < G; x++ {
			row := ld[(q*G+x)*W : (q*G+x+1)*W]
			i := x*Q + q
			for r := 0; r < Q; r++ {
				for y := 0; y < G; y++ {
					push[i*K+y*Q+r] = row[r*G+y]
					rep[i*K+y*Q+r] = row[K+r*G+y]
				}
				pop[i*Q+r] = row[2*K+r]
			}
		}
	}
	s.beta[pb] = expShift(push, push)
	inc := s.beta[pb]
	if inc == negInf {
		inc = 0
	}
	s.psi[b] = s.psi[b-1] + inc
	s.setH(b-1, b)
	s.dRep[b] = expShift(rep, rep)
	s.dPop[b] = expShift(pop, pop)
	dRep, dPop := s.dRep[b], s.dPop[b]
	clear(s.C[pb*kk : (pb+1)*kk])

	lo := s.lo(b)
	// γ′ blocks (k, b).
	for k := lo + 1; k <= b-2; k++ {
		pi, xb := s.gp(k, b), s.blk(k, b-1)
		R := s.acc[:kq]
		clear(R)
		S := s.beta[xb] + dPop
		if S != negInf {
			matMul(R, s.E[xb*kk:(xb+1)*kk], pop, K, K, Q)
		}
		s.tau[pi] = normalize(s.X[pi*kq:(pi+1)*kq], R, S)
		s.hp[pi] = hfac(s.tau[pi] - (s.psi[b] - s.psi[k]))
		clear(s.CP[pi*kq : (pi+1)*kq])
	}
	// γ blocks (a, b), a ≤ b−2.
	for a := lo; a <= b-2; a++ {
		bi, xb := s.blk(a, b), s.blk(a, b-1)
		S := s.beta[xb] + dRep
		for k := a + 1; k <= b-2; k++ {
			S = math.Max(S, s.beta[s.blk(a, k)]+s.tau[s.gp(k, b)])
		}
		acc := s.acc
		clear(acc)
		if S != negInf {
			// The split points k = a+1 … b−2: their γ blocks (a,k) and
			// γ′ blocks (k,b) lie contiguously.
			if nk := b - 2 - a; nk > 0 {
				bk0, pk0 := s.blk(a, a+1), s.gp(a+1, b)
				c := hfac(s.psi[b] - s.psi[a] - S)
				xs := s.xs[:nk*kq]
				for k := 0; k < nk; k++ {
					w := s.weight(bk0+k, pk0+k, S, c)
					x := s.X[(pk0+k)*kq : (pk0+k+1)*kq]
					for e, xv := range x {
						xs[k*kq+e] = w * xv
					}
				}
				popSum(acc, s.E[bk0*kk:(bk0+nk)*kk], xs, nk, K, Q)
			}
			if sh := s.beta[xb] + dRep; sh != negInf {
				if w := math.Exp(sh - S); w != 0 {
					matMulScaled(acc, s.E[xb*kk:(xb+1)*kk], rep, w, K)
				}
			}
		}
		s.beta[bi] = normalize(s.E[bi*kk:(bi+1)*kk], acc, S)
		s.setH(a, b)
		clear(s.C[bi*kk : (bi+1)*kk])
	}

	// α[b] and the reading: P_a = α[a]·γ[a→b] is the weight of the runs
	// whose top element at b was pushed by the step that made position
	// a+1; it carries V[a+1].
	Mx := negInf
	for a := lo; a < b; a++ {
		Mx = math.Max(Mx, s.abar[a]+s.beta[s.blk(a, b)])
	}
	acc := s.acc[:K]
	clear(acc)
	pa := s.pa[:(b-lo)*K]
	clear(pa)
	if Mx != negInf {
		for a := lo; a < b; a++ {
			bi := s.blk(a, b)
			sh := s.abar[a] + s.beta[bi]
			if sh == negInf {
				continue
			}
			w := math.Exp(sh - Mx)
			if w == 0 {
				continue
			}
			p := pa[(a-lo)*K : (a-lo+1)*K]
			vecMat(p, s.aE[a*K:(a+1)*K], s.E[bi*kk:(bi+1)*kk], w, K)
			for j, pv := range p {
				acc[j] += pv
			}
		}
	}
	var z float64
	for _, v := range acc {
		z += v
	}
	s.abar[b] = normalize(s.aE[b*K:(b+1)*K], acc, Mx)
	clear(s.Ca[b*K : (b+1)*K])
	clear(out)
	if s.abar[b] == negInf {
		return
	}
	inv := 1 / z
	for a := lo; a < b; a++ {
		p := pa[(a-lo)*K : (a-lo+1)*K]
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
