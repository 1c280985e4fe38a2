package nskernel

import (
	"fmt"
	"math"
)

// LogValues returns the state's weights in log space, per sequence: log α
// of each carried position (Positions()·m values, index r·|Γ|+y for state
// r and symbol y) and log γ of each block (a, b), a < b < Positions(),
// ordered by a then b (m·m values each, row q·|Γ|+x, column r·|Γ|+y): the
// layout of StateFromLog. Entries whose mantissa is below the range where
// it is exact are taken from their exact logarithms. A vector stack's
// vectors are Vectors'.
func (s *State) LogValues() (logAlpha, logGamma [][]float64) {
	Q, G := s.cfg.States, s.cfg.Symbols
	m, mm := Q*G, Q*G*Q*G
	nb := s.np * (s.np - 1) / 2
	logAlpha = make([][]float64, s.batch)
	logGamma = make([][]float64, s.batch)
	for n := range s.elems {
		e := &s.elems[n]
		la := make([]float64, s.np*m)
		for p := 0; p < s.np; p++ {
			for r := 0; r < Q; r++ {
				for y := 0; y < G; y++ {
					la[p*m+r*G+y] = e.la[p*m+y*Q+r]
				}
			}
		}
		lg := make([]float64, nb*mm)
		for bi := 0; bi < nb; bi++ {
			E, Lx, beta := e.E[bi*mm:(bi+1)*mm], e.Lx[bi*mm:(bi+1)*mm], e.beta[bi]
			out := lg[bi*mm : (bi+1)*mm]
			for q := 0; q < Q; q++ {
				for x := 0; x < G; x++ {
					for r := 0; r < Q; r++ {
						for y := 0; y < G; y++ {
							in := (x*Q+q)*m + y*Q + r
							v := Lx[in]
							if E[in] >= deepE && beta != negInf {
								v = math.Log(E[in]) + beta
							}
							out[(q*G+x)*m+r*G+y] = v
						}
					}
				}
			}
		}
		logAlpha[n], logGamma[n] = la, lg
	}
	return logAlpha, logGamma
}

// Vectors returns a vector stack's carried vectors, per sequence: the
// vector of the element pushed by the step that made each carried
// position 1 … Positions()−1 (with the fixed bottom, position 1's is the
// bottom's), (Positions()−1)·Vector values; nil for the NS stack.
func (s *State) Vectors() [][]float64 {
	if s.cfg.Vector == 0 {
		return nil
	}
	out := make([][]float64, s.batch)
	for n := range s.elems {
		out[n] = append([]float64(nil), s.elems[n].V...)
	}
	return out
}

// StateFromLog returns the state of a memory-limited NS, RNS or vector
// stack that carries np positions (1 ≤ np ≤ Window) with the given
// weights, in the layout of LogValues, and for a vector stack the vectors
// of Vectors (nil otherwise): what another implementation of the dynamic
// program (the GPU's) hands to this one. Each block is stored as the CPU's
// own exact blocks are (setBlockLog: mantissas relative to the block's
// largest entry, with their exact logarithms), α likewise, and the
// potentials follow α's scale.
func StateFromLog(c Config, batch, np int, logAlpha, logGamma, vectors [][]float64) (*State, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	switch {
	case c.Vector > 0 && len(vectors) != batch, c.Vector == 0 && vectors != nil:
		return nil, fmt.Errorf("stacks: a state of batch %d with %d sequences of vectors, vector size %d", batch, len(vectors), c.Vector)
	case c.Window < 1 || np < 1 || np > c.Window:
		return nil, fmt.Errorf("stacks: a state of %d positions for window %d", np, c.Window)
	case batch < 1 || len(logAlpha) != batch || len(logGamma) != batch:
		return nil, fmt.Errorf("stacks: a state of batch %d with %d and %d sequences of weights", batch, len(logAlpha), len(logGamma))
	}
	Q, G := c.States, c.Symbols
	m, mm := Q*G, Q*G*Q*G
	nb := np * (np - 1) / 2
	st := &State{cfg: c, batch: batch, np: np, elems: make([]seqState, batch)}
	for n := range st.elems {
		if len(logAlpha[n]) != np*m || len(logGamma[n]) != nb*mm {
			return nil, fmt.Errorf("stacks: sequence %d has %d values of α and %d of γ, want %d and %d", n, len(logAlpha[n]), len(logGamma[n]), np*m, nb*mm)
		}
		e := &st.elems[n]
		if c.Vector > 0 {
			if len(vectors[n]) != (np-1)*c.Vector {
				return nil, fmt.Errorf("stacks: sequence %d has %d vector values, want %d", n, len(vectors[n]), (np-1)*c.Vector)
			}
			e.V = append([]float64(nil), vectors[n]...)
		}
		e.la = make([]float64, np*m)
		e.aE = make([]float64, np*m)
		e.abar = make([]float64, np)
		e.psi = make([]float64, np)
		for p := 0; p < np; p++ {
			b := negInf
			for r := 0; r < Q; r++ {
				for y := 0; y < G; y++ {
					v := logAlpha[n][p*m+r*G+y]
					if math.IsNaN(v) || math.IsInf(v, 1) {
						return nil, fmt.Errorf("stacks: sequence %d: log α %v at position %d", n, v, p)
					}
					e.la[p*m+y*Q+r] = v
					b = math.Max(b, v)
				}
			}
			e.abar[p] = b
			for i := p * m; i < (p+1)*m; i++ {
				if b != negInf {
					e.aE[i] = math.Exp(e.la[i] - b)
				}
			}
		}
		for p := 1; p < np; p++ {
			if e.abar[p] != negInf && e.abar[0] != negInf {
				e.psi[p] = e.abar[p] - e.abar[0]
			}
		}
		e.E = make([]float64, nb*mm)
		e.Lx = make([]float64, nb*mm)
		e.beta = make([]float64, nb)
		for bi := 0; bi < nb; bi++ {
			in := logGamma[n][bi*mm : (bi+1)*mm]
			b := negInf
			for _, v := range in {
				if math.IsNaN(v) || math.IsInf(v, 1) {
					return nil, fmt.Errorf("stacks: sequence %d: log γ %v in block %d", n, v, bi)
				}
				b = math.Max(b, v)
			}
			e.beta[bi] = b
			E, Lx := e.E[bi*mm:(bi+1)*mm], e.Lx[bi*mm:(bi+1)*mm]
			for q := 0; q < Q; q++ {
				for x := 0; x < G; x++ {
					for r := 0; r < Q; r++ {
						for y := 0; y < G; y++ {
							v := in[(q*G+x)*m+r*G+y]
							i := (x*Q+q)*m + y*Q + r
							Lx[i] = v
							if b != negInf {
								E[i] = math.Exp(v - b)
							}
						}
					}
				}
			}
		}
	}
	return st, nil
}
