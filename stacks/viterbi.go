package stacks

import (
	"fmt"
	"math"
)

// OpKind is the kind of a PDA transition of the nondeterministic stack.
// Its values follow the order of the action layout: push, replace, pop.
type OpKind int

const (
	// OpPush goes to a state and pushes a symbol on top of the current
	// top.
	OpPush OpKind = iota
	// OpReplace goes to a state and replaces the top symbol.
	OpReplace
	// OpPop goes to a state and pops the top symbol.
	OpPop
)

// String returns "push", "replace" or "pop".
func (k OpKind) String() string {
	switch k {
	case OpPush:
		return "push"
	case OpReplace:
		return "replace"
	case OpPop:
		return "pop"
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// Op is one transition of a run of the nondeterministic stack's weighted
// PDA.
type Op struct {
	// Kind is the kind of transition.
	Kind OpKind
	// State is the state r the transition goes to.
	State int
	// Symbol is the symbol y pushed or written over the top, and -1 for a
	// pop.
	Symbol int
}

// String returns "push(state=r, symbol=y)", "replace(state=r,
// symbol=y)" or "pop(state=r)": the state r the transition goes to and the
// symbol y it pushes or writes over the top, named so that a reader need
// not know the order.
func (o Op) String() string {
	if o.Kind == OpPop {
		return fmt.Sprintf("pop(state=%d)", o.State)
	}
	return fmt.Sprintf("%v(state=%d, symbol=%d)", o.Kind, o.State, o.Symbol)
}

// ViterbiRun is a run of the nondeterministic stack's weighted PDA, as
// found by Viterbi.
type ViterbiRun struct {
	// Ops holds the transition taken at each step t = 1, …, n in
	// Ops[t-1].
	Ops []Op
	// Stacks[t-1] is the stack contents after step t, from the bottom
	// (the initial bottom symbol, 0 unless replaced) to the top.
	Stacks [][]int
	// States[t-1] is the PDA state after step t.
	States []int
	// LogWeight is the log-weight of the run: the sum, in step order, of
	// the log-weights of its transitions. It is 0 for a run of no steps.
	LogWeight float64
}

// Viterbi returns, for each sequence of the batch, a run of highest weight
// of the nondeterministic stack's weighted PDA over all the steps given,
// ending in any configuration. Its inputs are those of Run: logWeights[t-1]
// holds step t's (batch, NumActions) log-weights, row-major, used as they
// are (Viterbi does not normalize them).
//
// The PDA starts in state 0 with a stack holding the single symbol 0 and
// takes one transition per step, whose log-weight is that of the action
// for its (state, top symbol) pair in the step's row. Runs respect the
// configuration's bottom behaviour: with Original the initial bottom is
// never replaced or uncovered, so step 1 is always a push; with Fixed it
// may be replaced and uncovered but never popped. With a memory-limited
// configuration (Window D > 0) a run is allowed only if after every step t
// the top symbol was pushed at a step i+1 with t−i ≤ D, where the Fixed
// initial bottom counts as pushed with i = −1 (so it may be the top after
// step t only while t+1 ≤ D). These are exactly the runs whose weights the
// dynamic program of Run (memory-limited or not) sums.
//
// Viterbi runs the dynamic program of Lang's algorithm in the max-plus
// semiring, with backpointers: γ[i→t][q,x→r,y] is the best weight of a run
// from step i to step t that pushes y at step i+1 on top of the top x and
// never uncovers x, and α[t][r,y] is the best weight of a run of t steps
// ending in state r with top y. It takes O(|Q|³|Γ|²n³) time and
// O(|Q|²|Γ|²n·min(n, D)) memory per sequence for n steps.
//
// Ties between runs of equal weight are broken deterministically: every
// maximization keeps the first of its best candidates, trying the final
// configurations (r, y) by increasing index r·|Γ|+y; for α, the push time
// of the top from earliest to latest, then the previous configurations by
// increasing index; for γ, replace before pop, a replace's previous
// configuration by increasing index, and a pop's split time from earliest
// to latest, then its intermediate state, then the popped configuration,
// by increasing index. So all-zero log-weights give, for an unlimited
// stack, a push of (0, 0) followed by replaces of (0, 0) (Original), or
// only replaces of (0, 0) (Fixed).
//
// Log-weights may be −∞ (an impossible transition): a run of log-weight −∞
// is returned only when no run has a finite log-weight. Viterbi returns an
// error for an invalid configuration, a batch smaller than 1, a step whose
// row has the wrong length, or a log-weight that is NaN or +∞. For no steps
// it returns runs with no transitions and log-weight 0.
func Viterbi(cfg NSConfig, batch int, logWeights [][]float64) ([]ViterbiRun, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if batch < 1 {
		return nil, fmt.Errorf("stacks: Viterbi needs a batch of at least 1, got %d", batch)
	}
	a := cfg.NumActions()
	for t, lw := range logWeights {
		if len(lw) != batch*a {
			return nil, fmt.Errorf("stacks: step %d has %d log-weights, want %d", t+1, len(lw), batch*a)
		}
		for j, v := range lw {
			if math.IsNaN(v) || math.IsInf(v, 1) {
				return nil, fmt.Errorf("stacks: step %d log-weight %d (sequence %d) is %v", t+1, j%a, j/a, v)
			}
		}
	}
	runs := make([]ViterbiRun, batch)
	rows := make([][]float64, len(logWeights))
	for b := range runs {
		for t, lw := range logWeights {
			rows[t] = lw[b*a : (b+1)*a]
		}
		runs[b] = viterbiSeq(cfg, rows)
	}
	return runs, nil
}

// Backpointer kinds of a Viterbi γ entry.
const (
	vNone int8 = iota // no run
	vRoot             // the Fixed bottom's γ[−1→0]
	vPush
	vReplace
	vPop
)

// vBlock is a γ[a→b] block of the Viterbi program, between positions a < b:
// an m×m matrix with row (q,x), column (r,y), both indexed q·|Γ|+x. arg is
// the previous configuration s·|Γ|+z of a replace, and k·|Q|+u for a pop
// splitting at position k with intermediate state u.
type vBlock struct {
	val  []float64
	kind []int8
	arg  []int32
}

// vPopBlock is a γ′[k→b] block: an m×|Q| matrix with row (u,y) and column r,
// the best weight of γ[k→b−1][u,y→s,z] followed by a pop to r, with ok
// telling whether there is such a run and sz the best (s,z).
type vPopBlock struct {
	val []float64
	ok  []bool
	sz  []int32
}

// viterbiSeq decodes one sequence whose step t log-weights are rows[t-1].
//
// Like the kernels of Run, it works in positions: for the Original bottom,
// position 0 is time 0 and step t makes position t; for the Fixed bottom,
// position 0 is the extra row i = −1, position 1 is time 0, with
// γ[0→1] one-hot at (0,0)→(0,0), and step t makes position t+1. The window
// applies to positions.
func viterbiSeq(cfg NSConfig, rows [][]float64) ViterbiRun {
	n := len(rows)
	if n == 0 {
		return ViterbiRun{Ops: []Op{}, Stacks: [][]int{}, States: []int{}}
	}
	nq, ns := cfg.States, cfg.Symbols
	m := nq * ns
	w := 2*m + nq
	base := 0
	if cfg.Bottom == Fixed {
		base = 1
	}
	np := base + n + 1
	d := cfg.Window
	if d == 0 || d > np {
		d = np
	}
	newBlock := func() *vBlock {
		return &vBlock{val: make([]float64, m*m), kind: make([]int8, m*m), arg: make([]int32, m*m)}
	}
	// gam[a][b-a-1] is γ[a→b]; gp[k][b-k-2] is γ′[k→b].
	gam := make([][]*vBlock, np)
	gp := make([][]*vPopBlock, np)
	// alpha[b][r,y] is α at position b, aok whether it has a run and
	// aFrom its backpointer a·m+(q,x).
	alpha := make([][]float64, np)
	aok := make([][]bool, np)
	aFrom := make([][]int, np)
	oneHot := func(b int) {
		alpha[b] = make([]float64, m)
		aok[b] = make([]bool, m)
		aok[b][0] = true
	}
	oneHot(0)
	if base == 1 {
		oneHot(1)
		g := newBlock()
		g.kind[0] = vRoot
		gam[0] = append(gam[0], g)
	}
	for t := 1; t <= n; t++ {
		b := base + t
		dl := rows[t-1]
		lo := max(0, b-d)
		// γ′[k→b] for the split positions of the pop terms below.
		for k := lo + 1; k <= b-2; k++ {
			g := gam[k][b-1-k-1]
			p := &vPopBlock{val: make([]float64, m*nq), ok: make([]bool, m*nq), sz: make([]int32, m*nq)}
			for uy := 0; uy < m; uy++ {
				for r := 0; r < nq; r++ {
					e := uy*nq + r
					for sz := 0; sz < m; sz++ {
						if g.kind[uy*m+sz] == vNone {
							continue
						}
						v := g.val[uy*m+sz] + dl[sz*w+2*m+r]
						if !p.ok[e] || v > p.val[e] {
							p.val[e], p.ok[e], p.sz[e] = v, true, int32(sz)
						}
					}
				}
			}
			gp[k] = append(gp[k], p)
		}
		// γ[a→b].
		for a := lo; a < b; a++ {
			g := newBlock()
			if a == b-1 {
				for qx := 0; qx < m; qx++ {
					for ry := 0; ry < m; ry++ {
						g.val[qx*m+ry] = dl[qx*w+ry]
						g.kind[qx*m+ry] = vPush
					}
				}
				gam[a] = append(gam[a], g)
				continue
			}
			prev := gam[a][b-1-a-1]
			for qx := 0; qx < m; qx++ {
				for r := 0; r < nq; r++ {
					for y := 0; y < ns; y++ {
						ry := r*ns + y
						e := qx*m + ry
						for sz := 0; sz < m; sz++ {
							if prev.kind[qx*m+sz] == vNone {
								continue
							}
							v := prev.val[qx*m+sz] + dl[sz*w+m+ry]
							if g.kind[e] == vNone || v > g.val[e] {
								g.val[e], g.kind[e], g.arg[e] = v, vReplace, int32(sz)
							}
						}
						for k := a + 1; k <= b-2; k++ {
							g1, p := gam[a][k-a-1], gp[k][b-k-2]
							for u := 0; u < nq; u++ {
								uy := u*ns + y
								if g1.kind[qx*m+uy] == vNone || !p.ok[uy*nq+r] {
									continue
								}
								v := g1.val[qx*m+uy] + p.val[uy*nq+r]
								if g.kind[e] == vNone || v > g.val[e] {
									g.val[e], g.kind[e], g.arg[e] = v, vPop, int32(k*nq+u)
								}
							}
						}
					}
				}
			}
			gam[a] = append(gam[a], g)
		}
		// α[b].
		alpha[b] = make([]float64, m)
		aok[b] = make([]bool, m)
		aFrom[b] = make([]int, m)
		for ry := 0; ry < m; ry++ {
			for a := lo; a < b; a++ {
				g := gam[a][b-a-1]
				for qx := 0; qx < m; qx++ {
					if !aok[a][qx] || g.kind[qx*m+ry] == vNone {
						continue
					}
					v := alpha[a][qx] + g.val[qx*m+ry]
					if !aok[b][ry] || v > alpha[b][ry] {
						alpha[b][ry], aok[b][ry], aFrom[b][ry] = v, true, a*m+qx
					}
				}
			}
		}
	}

	// Follow the backpointers from the best final configuration.
	ops := make([]Op, n)
	var emit func(a, b, qx, ry int)
	emit = func(a, b, qx, ry int) {
		g := gam[a][b-a-1]
		e := qx*m + ry
		t := b - base
		r, y := ry/ns, ry%ns
		switch g.kind[e] {
		case vPush:
			ops[t-1] = Op{Kind: OpPush, State: r, Symbol: y}
		case vReplace:
			emit(a, b-1, qx, int(g.arg[e]))
			ops[t-1] = Op{Kind: OpReplace, State: r, Symbol: y}
		case vPop:
			k, u := int(g.arg[e])/nq, int(g.arg[e])%nq
			uy := u*ns + y
			sz := int(gp[k][b-k-2].sz[uy*nq+r])
			emit(a, k, qx, uy)
			emit(k, b-1, uy, sz)
			ops[t-1] = Op{Kind: OpPop, State: r, Symbol: -1}
		}
	}
	last := np - 1
	ry := -1
	for j := 0; j < m; j++ {
		if aok[last][j] && (ry < 0 || alpha[last][j] > alpha[last][ry]) {
			ry = j
		}
	}
	for b := last; b > base; {
		a, qx := aFrom[b][ry]/m, aFrom[b][ry]%m
		emit(a, b, qx, ry)
		b, ry = a, qx
	}

	// Replay the run for its stacks, states and log-weight.
	run := ViterbiRun{Ops: ops, Stacks: make([][]int, n), States: make([]int, n)}
	stack, q := []int{0}, 0
	for t, op := range ops {
		top := len(stack) - 1
		row := rows[t][(q*ns+stack[top])*w:]
		switch op.Kind {
		case OpPush:
			run.LogWeight += row[op.State*ns+op.Symbol]
			stack = append(stack, op.Symbol)
		case OpReplace:
			run.LogWeight += row[m+op.State*ns+op.Symbol]
			stack[top] = op.Symbol
		case OpPop:
			run.LogWeight += row[2*m+op.State]
			stack = stack[:top]
		}
		q = op.State
		run.Stacks[t] = append([]int(nil), stack...)
		run.States[t] = q
	}
	return run
}
