package nskernel

// The max-plus instance of the dynamic program: Lang's algorithm with max
// for sum and + for product, over the block layout, positions and action
// order of the sum-product program (layout, splitActions), column by
// column in the same order (the γ′ blocks of a column, then its γ blocks
// by push, replace and pop over the split points, then α), with
// back-pointers in place of adjoints. It finds a run of highest weight;
// stacks.Viterbi is its interface.

// Transition kinds of a decoded run, in the order of the action layout.
const (
	TransPush = iota
	TransReplace
	TransPop
)

// Transition is one step of a decoded run: its kind (TransPush,
// TransReplace or TransPop), the state it goes to and the symbol it pushes
// or writes over the top (−1 for a pop).
type Transition struct{ Kind, State, Symbol int }

// Back-pointer kinds of a max-plus γ entry.
const (
	mpNone int8 = iota // no run
	mpRoot             // the fixed bottom's γ[−1→0]
	mpPush
	mpReplace
	mpPop
)

// maxPlus is the max-plus program of one sequence. Configurations are
// indexed internally as in seq (x·|Q|+q); every maximization tries its
// candidates in the order of the external index q·|Γ|+x (ext), which fixes
// the ties (see Viterbi).
type maxPlus struct {
	layout
	m, nq, ns int
	ext       []int // internal index of external configuration index e

	// γ blocks (m×m each): best weight, back-pointer kind and argument
	// (a replace's previous configuration; k·|Q|+u for a pop splitting at
	// position k with intermediate state u).
	val  []float64
	kind []int8
	arg  []int32
	// γ′ blocks (m×|Q| each): best weight of γ[k→b−1][u,y→s,z] followed by
	// a pop to r, whether there is such a run, and the best (s,z).
	pval []float64
	pok  []bool
	psz  []int32
	// α per position (m each), whether it has a run, and its back-pointer
	// a·m + (q,x).
	alpha []float64
	aok   []bool
	afrom []int32

	push, rep, pop []float64 // the current column's actions
}

func newMaxPlus(c Config, steps int) *maxPlus {
	p := &maxPlus{nq: c.States, ns: c.Symbols}
	m := p.nq * p.ns
	p.m = m
	capPos := capPositions(c.Window, steps)
	nb, ng := p.initLayout(c.Window, capPos, c.Fixed)
	p.ext = make([]int, m)
	for q := 0; q < p.nq; q++ {
		for x := 0; x < p.ns; x++ {
			p.ext[q*p.ns+x] = x*p.nq + q
		}
	}
	p.val, p.kind, p.arg = make([]float64, nb*m*m), make([]int8, nb*m*m), make([]int32, nb*m*m)
	mq := m * p.nq
	p.pval, p.pok, p.psz = make([]float64, ng*mq), make([]bool, ng*mq), make([]int32, ng*mq)
	p.alpha, p.aok, p.afrom = make([]float64, capPos*m), make([]bool, capPos*m), make([]int32, capPos*m)
	p.push, p.rep, p.pop = make([]float64, m*m), make([]float64, m*m), make([]float64, mq)
	return p
}

// begin starts from the initial stack: α one-hot at (0,0) at time 0, and
// for the fixed bottom γ[−1→0] one-hot at (0,0)→(0,0).
func (p *maxPlus) begin() {
	p.aok[0] = true
	if p.fixed {
		p.aok[p.m] = true
		p.kind[p.blk(0, 1)*p.m*p.m] = mpRoot
	}
	p.startPositions()
}

// step computes the next column from ld (external action layout).
func (p *maxPlus) step(ld []float64) {
	b := p.np
	p.np++
	m, Q := p.m, p.nq
	mm, mq := m*m, m*Q
	splitActions(ld, p.push, p.rep, p.pop, Q, p.ns)
	lo := p.lo(b)
	// γ′ blocks of column b.
	for k := lo + 1; k <= b-2; k++ {
		pi, xb := p.gp(k, b)*mq, p.blk(k, b-1)*mm
		for uy := 0; uy < m; uy++ {
			for r := 0; r < Q; r++ {
				e := pi + uy*Q + r
				for _, sz := range p.ext {
					if p.kind[xb+uy*m+sz] == mpNone {
						continue
					}
					v := p.val[xb+uy*m+sz] + p.pop[sz*Q+r]
					if !p.pok[e] || v > p.pval[e] {
						p.pval[e], p.pok[e], p.psz[e] = v, true, int32(sz)
					}
				}
			}
		}
	}
	// γ blocks of column b.
	for a := lo; a < b; a++ {
		bi := p.blk(a, b) * mm
		if a == b-1 {
			copy(p.val[bi:bi+mm], p.push)
			for e := bi; e < bi+mm; e++ {
				p.kind[e] = mpPush
			}
			continue
		}
		xb := p.blk(a, b-1) * mm
		for qx := 0; qx < m; qx++ {
			for ry := 0; ry < m; ry++ {
				e := bi + qx*m + ry
				y, r := ry/Q, ry%Q
				for _, sz := range p.ext {
					if p.kind[xb+qx*m+sz] == mpNone {
						continue
					}
					v := p.val[xb+qx*m+sz] + p.rep[sz*m+ry]
					if p.kind[e] == mpNone || v > p.val[e] {
						p.val[e], p.kind[e], p.arg[e] = v, mpReplace, int32(sz)
					}
				}
				for k := a + 1; k <= b-2; k++ {
					g1, pk := p.blk(a, k)*mm, p.gp(k, b)*mq
					for u := 0; u < Q; u++ {
						uy := y*Q + u
						if p.kind[g1+qx*m+uy] == mpNone || !p.pok[pk+uy*Q+r] {
							continue
						}
						v := p.val[g1+qx*m+uy] + p.pval[pk+uy*Q+r]
						if p.kind[e] == mpNone || v > p.val[e] {
							p.val[e], p.kind[e], p.arg[e] = v, mpPop, int32(k*Q+u)
						}
					}
				}
			}
		}
	}
	// α[b].
	for ry := 0; ry < m; ry++ {
		e := b*m + ry
		for a := lo; a < b; a++ {
			bi := p.blk(a, b) * mm
			for _, qx := range p.ext {
				if !p.aok[a*m+qx] || p.kind[bi+qx*m+ry] == mpNone {
					continue
				}
				v := p.alpha[a*m+qx] + p.val[bi+qx*m+ry]
				if !p.aok[e] || v > p.alpha[e] {
					p.alpha[e], p.aok[e], p.afrom[e] = v, true, int32(a*m+qx)
				}
			}
		}
	}
}

// trace follows the back-pointers from the best final configuration and
// returns the transitions of the n steps.
func (p *maxPlus) trace(n int) []Transition {
	m, Q := p.m, p.nq
	mm, mq := m*m, m*Q
	ops := make([]Transition, n)
	var emit func(a, b, qx, ry int)
	emit = func(a, b, qx, ry int) {
		e := p.blk(a, b)*mm + qx*m + ry
		t := b - p.base
		r, y := ry%Q, ry/Q
		switch p.kind[e] {
		case mpPush:
			ops[t-1] = Transition{Kind: TransPush, State: r, Symbol: y}
		case mpReplace:
			emit(a, b-1, qx, int(p.arg[e]))
			ops[t-1] = Transition{Kind: TransReplace, State: r, Symbol: y}
		case mpPop:
			k, u := int(p.arg[e])/Q, int(p.arg[e])%Q
			uy := y*Q + u
			sz := int(p.psz[p.gp(k, b)*mq+uy*Q+r])
			emit(a, k, qx, uy)
			emit(k, b-1, uy, sz)
			ops[t-1] = Transition{Kind: TransPop, State: r, Symbol: -1}
		}
	}
	last := p.np - 1
	ry := -1
	for _, j := range p.ext {
		if p.aok[last*m+j] && (ry < 0 || p.alpha[last*m+j] > p.alpha[last*m+ry]) {
			ry = j
		}
	}
	for b := last; b > p.base; {
		from := int(p.afrom[b*m+ry])
		a, qx := from/m, from%m
		emit(a, b, qx, ry)
		b, ry = a, qx
	}
	return ops
}

// Viterbi returns a run of highest weight of one sequence whose step t
// log-weights (NumActions, external layout, used as they are) are
// rows[t−1], under c's bottom behaviour and window (States, Symbols, Fixed
// and Window; the reading is irrelevant), ending in any configuration: the
// max-plus instance of the program whose sum-product instance Tape runs.
// Every maximization keeps the first of its best candidates: the final
// configurations (r,y), α's previous configurations, a replace's previous
// configuration and a pop's popped configuration by increasing index
// r·|Γ|+y; α's push time of the top from earliest to latest; for γ,
// replace before pop, and a pop's split time from earliest to latest, then
// its intermediate state. A run of log-weight −∞ is returned only when no
// run has a finite one. The caller checks c and the rows (none NaN or +∞).
func Viterbi(c Config, rows [][]float64) []Transition {
	if len(rows) == 0 {
		return []Transition{}
	}
	p := newMaxPlus(c, len(rows))
	p.begin()
	for _, ld := range rows {
		p.step(ld)
	}
	return p.trace(len(rows))
}
