package nskernel

import "github.com/nsrnn/nsrnn/semiring"

// Back-pointer kinds of a γ entry.
const (
	bpNone int8 = iota // no term selected (or a semiring that does not select)
	bpRoot             // the fixed bottom's γ[−1→0]
	bpPush
	bpReplace
	bpPop
)

// Program is the nondeterministic stack's dynamic program (Lang's
// algorithm over the block layout) in a semiring S, for one sequence:
// the recurrences written once, whose sum-product instance the fast
// kernels of Tape compute (and are tested against) and whose max-plus
// instance is Viterbi. Configurations are indexed internally as in Tape
// (x·|Q|+q); every sum takes its terms in the order of the external index
// q·|Γ|+x (ext), which fixes a selective semiring's ties: the first of
// the best terms is kept (see Viterbi).
type Program[V any] struct {
	layout
	s         semiring.Semiring[V]
	m, nq, ns int
	ext       []int // internal index of external configuration index e

	// γ blocks (m×m each): value, and for a selective semiring the
	// back-pointer's kind and argument (a replace's previous
	// configuration; k·|Q|+u for a pop splitting at position k with
	// intermediate state u).
	val  []V
	kind []int8
	arg  []int32
	// γ′ blocks (m×|Q| each): the value of γ[k→b−1][u,y→s,z] followed by
	// a pop to r, summed over (s,z), and the selected (s,z).
	pval []V
	psz  []int32
	// α per position (m each) and its back-pointer a·m + (q,x).
	alpha []V
	afrom []int32

	push, rep, pop []V // the current column's actions
	steps          int // steps made
}

// NewProgram returns the program in semiring s of one sequence of up to
// steps steps under c's bottom behaviour and window (States, Symbols,
// Fixed and Window), at the initial stack: α is One at (0,0) at time 0,
// and for the fixed bottom γ[−1→0] is One at (0,0)→(0,0). The caller
// checks c.
func NewProgram[V any](c Config, s semiring.Semiring[V], steps int) *Program[V] {
	p := &Program[V]{s: s, nq: c.States, ns: c.Symbols}
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
	zeros := func(n int) []V {
		v := make([]V, n)
		z := s.Zero()
		for i := range v {
			v[i] = z
		}
		return v
	}
	p.val, p.kind, p.arg = zeros(nb*m*m), make([]int8, nb*m*m), make([]int32, nb*m*m)
	mq := m * p.nq
	p.pval, p.psz = zeros(ng*mq), make([]int32, ng*mq)
	p.alpha, p.afrom = zeros(capPos*m), make([]int32, capPos*m)
	p.push, p.rep, p.pop = make([]V, m*m), make([]V, m*m), make([]V, mq)
	p.alpha[0] = s.One()
	if c.Fixed {
		p.alpha[m] = s.One()
		e := p.blk(0, 1) * m * m
		p.val[e], p.kind[e] = s.One(), bpRoot
	}
	p.startPositions()
	return p
}

// Step computes the next column from the values of the step's actions,
// row, in the external layout (NumActions values).
func (p *Program[V]) Step(row []V) {
	s := p.s
	b := p.np
	p.np++
	p.steps++
	m, Q := p.m, p.nq
	mm, mq := m*m, m*Q
	splitActions(row, p.push, p.rep, p.pop, Q, p.ns)
	lo := p.lo(b)
	// γ′ blocks of column b.
	for k := lo + 1; k <= b-2; k++ {
		pi, xb := p.gp(k, b)*mq, p.blk(k, b-1)*mm
		for uy := 0; uy < m; uy++ {
			for r := 0; r < Q; r++ {
				e := pi + uy*Q + r
				for _, sz := range p.ext {
					if s.AddProduct(&p.pval[e], p.val[xb+uy*m+sz], p.pop[sz*Q+r]) {
						p.psz[e] = int32(sz)
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
				p.kind[e] = bpPush
			}
			continue
		}
		xb := p.blk(a, b-1) * mm
		for qx := 0; qx < m; qx++ {
			for ry := 0; ry < m; ry++ {
				e := bi + qx*m + ry
				y, r := ry/Q, ry%Q
				for _, sz := range p.ext {
					if s.AddProduct(&p.val[e], p.val[xb+qx*m+sz], p.rep[sz*m+ry]) {
						p.kind[e], p.arg[e] = bpReplace, int32(sz)
					}
				}
				for k := a + 1; k <= b-2; k++ {
					g1, pk := p.blk(a, k)*mm, p.gp(k, b)*mq
					for u := 0; u < Q; u++ {
						uy := y*Q + u
						if s.AddProduct(&p.val[e], p.val[g1+qx*m+uy], p.pval[pk+uy*Q+r]) {
							p.kind[e], p.arg[e] = bpPop, int32(k*Q+u)
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
				if s.AddProduct(&p.alpha[e], p.alpha[a*m+qx], p.val[bi+qx*m+ry]) {
					p.afrom[e] = int32(a*m + qx)
				}
			}
		}
	}
}

// Alpha returns α after step t (1 ≤ t ≤ the steps made; t = 0 is the
// initial stack), in the external index r·|Γ|+y: the semiring sum, over
// the runs of t steps that end in state r with y on top, of the product
// of their actions' values.
func (p *Program[V]) Alpha(t int) []V {
	pos := p.base + t
	out := make([]V, p.m)
	for e, i := range p.ext {
		out[e] = p.alpha[pos*p.m+i]
	}
	return out
}

// Trace follows the back-pointers of a selective semiring from the first
// best final configuration and returns the transitions of the steps made
// and that configuration's α.
func (p *Program[V]) Trace() ([]Transition, V) {
	m, Q := p.m, p.nq
	mm, mq := m*m, m*Q
	n := p.steps
	ops := make([]Transition, n)
	var emit func(a, b, qx, ry int)
	emit = func(a, b, qx, ry int) {
		e := p.blk(a, b)*mm + qx*m + ry
		t := b - p.base
		r, y := ry%Q, ry/Q
		switch p.kind[e] {
		case bpPush:
			ops[t-1] = Transition{Kind: TransPush, State: r, Symbol: y}
		case bpReplace:
			emit(a, b-1, qx, int(p.arg[e]))
			ops[t-1] = Transition{Kind: TransReplace, State: r, Symbol: y}
		case bpPop:
			k, u := int(p.arg[e])/Q, int(p.arg[e])%Q
			uy := y*Q + u
			sz := int(p.psz[p.gp(k, b)*mq+uy*Q+r])
			emit(a, k, qx, uy)
			emit(k, b-1, uy, sz)
			ops[t-1] = Transition{Kind: TransPop, State: r, Symbol: -1}
		}
	}
	last := p.np - 1
	best, ry := p.s.Zero(), -1
	for _, j := range p.ext {
		if p.s.Plus(&best, p.alpha[last*m+j]) {
			ry = j
		}
	}
	if ry < 0 {
		return ops, best
	}
	for b := last; b > p.base; {
		from := int(p.afrom[b*m+ry])
		a, qx := from/m, from%m
		emit(a, b, qx, ry)
		b, ry = a, qx
	}
	return ops, best
}
