package nskernel

import (
	"math"
)

// lse accumulates log-sum-exp online.
type lse struct{ m, s float64 }

func newLSE() lse { return lse{m: negInf} }

func (l *lse) add(v float64) {
	if v == negInf {
		return
	}
	if v <= l.m {
		l.s += math.Exp(v - l.m)
		return
	}
	l.s = l.s*math.Exp(l.m-v) + 1
	l.m = v
}

func (l *lse) val() float64 {
	if l.m == negInf {
		return negInf
	}
	return l.m + math.Log(l.s)
}

// exactGamma returns the exact log of entry (i,j) of γ block (a,b), a ≤ b−2.
func (s *seq) exactGamma(a, b, i, j int) float64 {
	m, Q := s.m, s.nq
	col := s.dl[b*s.na : (b+1)*s.na]
	rep := col[m*m : 2*m*m]
	acc := newLSE()
	xb := s.blk(a, b-1)
	for sz := 0; sz < m; sz++ {
		acc.add(s.lat(xb, i*m+sz) + rep[sz*m+j])
	}
	// A term with a factor 0 adds nothing, and its logs are not taken.
	// With the fixed bottom, entries of γ are 0 whatever the weights, and
	// most terms of their recomputation at every column are such: taking
	// their logs made a training step of |Q| = 3, |Γ| = 3 twice as slow
	// (BenchmarkForwardBackwardFixed).
	y, r := j/Q, j%Q
	for k := a + 1; k <= b-2; k++ {
		bi, pi := s.blk(a, k), s.gp(k, b)
		for u := 0; u < Q; u++ {
			uy := y*Q + u
			if s.latZero(bi, i*m+uy) || s.latPZero(pi, uy*Q+r) {
				continue
			}
			acc.add(s.lat(bi, i*m+uy) + s.latP(pi, uy*Q+r))
		}
	}
	return acc.val()
}

// exactP returns the exact log of entry j of P_a = α[a]·γ[a→b].
func (s *seq) exactP(a, b, j int) float64 {
	m := s.m
	acc := newLSE()
	bi := s.blk(a, b)
	for i := 0; i < m; i++ {
		acc.add(s.la[a*m+i] + s.lat(bi, i*m+j))
	}
	return acc.val()
}

// exactGp returns the exact log of entry (i,r) of G' block (k,b).
func (s *seq) exactGp(k, b, i, r int) float64 {
	m, Q := s.m, s.nq
	pop := s.dl[b*s.na+2*m*m : (b+1)*s.na]
	acc := newLSE()
	xb := s.blk(k, b-1)
	for sz := 0; sz < m; sz++ {
		acc.add(s.lat(xb, i*m+sz) + pop[sz*Q+r])
	}
	return acc.val()
}

// exactAlpha returns the exact log of α[b] entry j.
func (s *seq) exactAlpha(b, j int) float64 {
	m := s.m
	acc := newLSE()
	for a := s.lo(b); a < b; a++ {
		bi := s.blk(a, b)
		for i := 0; i < m; i++ {
			acc.add(s.la[a*m+i] + s.lat(bi, i*m+j))
		}
	}
	return acc.val()
}
