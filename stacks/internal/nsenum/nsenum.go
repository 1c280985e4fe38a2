// Package nsenum enumerates the runs of the nondeterministic stack's
// weighted PDA by brute force, from the semantics alone (the stacks
// package documentation, "The nondeterministic stack"): the one oracle
// that the dynamic programs (package nskernel's fast kernels and its
// program in any semiring, stacks.Viterbi) are tested against.
//
// It follows every configuration (state, whole stack with each element's
// push time) step by step, merging equal configurations with the
// semiring's Plus and extending them by each legal transition with Times,
// so that it is exact in any semiring and small enough for a test (a few
// steps). It imports nothing of the programs it checks.
package nsenum

import (
	"fmt"
	"strings"
)

// Config is the PDA: |Q| States, |Γ| Symbols, the bottom behaviour (Fixed:
// the 2023 bottom, which may be replaced but not popped; otherwise the
// original one, never replaced or uncovered) and the memory limit Window
// (0: none; else a run is dropped once an element stays on top more than
// Window steps after it was pushed).
type Config struct {
	States, Symbols int
	Fixed           bool
	Window          int
}

// Semiring is the semiring of the weights (structurally the same as
// package nskernel's). Plus of a selective semiring reports whether v
// replaced *acc.
type Semiring[V any] interface {
	Zero() V
	One() V
	Times(a, b V) V
	Plus(acc *V, v V) bool
}

// Transition kinds, in the order of the action layout.
const (
	Push = iota
	Replace
	Pop
)

// Op is a transition: its kind, the state it goes to, and the symbol it
// pushes or writes over the top (−1 for a pop).
type Op struct{ Kind, State, Symbol int }

// Action returns the index of op, taken in state q with top symbol x, in
// a step's row of action values (the external layout: per (q, x) the
// pushes of every (r, y), the replaces, then the pops of every r).
func (c Config) Action(q, x int, op Op) int {
	m := c.States * c.Symbols
	row := (q*c.Symbols + x) * (2*m + c.States)
	switch op.Kind {
	case Push:
		return row + op.State*c.Symbols + op.Symbol
	case Replace:
		return row + m + op.State*c.Symbols + op.Symbol
	}
	return row + 2*m + op.State
}

// elem is a stack element: its symbol and the step after which it was
// pushed (−1: the fixed bottom; −2: the original bottom).
type elem struct{ sym, pushed int }

type conf struct {
	q     int
	stack []elem
}

func (c conf) key() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d|", c.q)
	for _, e := range c.stack {
		fmt.Fprintf(&sb, "%d:%d,", e.sym, e.pushed)
	}
	return sb.String()
}

// Alphas returns, for each step t = 1 … n, the semiring sum over the runs
// of t steps that end in state r with symbol y on top (index r·|Γ|+y) of
// the product, in step order, of their transitions' values, value(t, a,
// op) for the transition op taken at step t whose index in the step's row
// is a (Config.Action). A configuration no run reaches has Zero.
func Alphas[V any](c Config, s Semiring[V], n int, value func(t, a int, op Op) V) [][]V {
	Q, G := c.States, c.Symbols
	m := Q * G
	bottom := elem{0, -2}
	if c.Fixed {
		bottom.pushed = -1
	}
	start := conf{0, []elem{bottom}}
	cur := map[string]V{start.key(): s.One()}
	confs := map[string]conf{start.key(): start}
	order := []string{start.key()}
	var alphas [][]V
	for t := 1; t <= n; t++ {
		next := map[string]V{}
		nconfs := map[string]conf{}
		var norder []string
		add := func(cf conf, v V) {
			top := cf.stack[len(cf.stack)-1]
			if c.Window > 0 && top.pushed >= -1 && t-top.pushed > c.Window {
				return
			}
			k := cf.key()
			if old, ok := next[k]; ok {
				s.Plus(&old, v)
				next[k] = old
				return
			}
			acc := s.Zero()
			s.Plus(&acc, v)
			next[k], nconfs[k] = acc, cf
			norder = append(norder, k)
		}
		for _, k := range order {
			w, cf := cur[k], confs[k]
			depth := len(cf.stack)
			x := cf.stack[depth-1].sym
			for r := 0; r < Q; r++ {
				for y := 0; y < G; y++ {
					op := Op{Push, r, y}
					st := append(append([]elem(nil), cf.stack...), elem{y, t - 1})
					add(conf{r, st}, s.Times(w, value(t, c.Action(cf.q, x, op), op)))
				}
			}
			if !(depth == 1 && !c.Fixed) {
				for r := 0; r < Q; r++ {
					for y := 0; y < G; y++ {
						op := Op{Replace, r, y}
						st := append([]elem(nil), cf.stack...)
						st[depth-1].sym = y
						add(conf{r, st}, s.Times(w, value(t, c.Action(cf.q, x, op), op)))
					}
				}
			}
			if (c.Fixed && depth >= 2) || (!c.Fixed && depth >= 3) {
				for r := 0; r < Q; r++ {
					op := Op{Pop, r, -1}
					add(conf{r, append([]elem(nil), cf.stack[:depth-1]...)}, s.Times(w, value(t, c.Action(cf.q, x, op), op)))
				}
			}
		}
		cur, confs, order = next, nconfs, norder
		al := make([]V, m)
		for i := range al {
			al[i] = s.Zero()
		}
		for _, k := range order {
			cf := confs[k]
			j := cf.q*G + cf.stack[len(cf.stack)-1].sym
			s.Plus(&al[j], cur[k])
		}
		alphas = append(alphas, al)
	}
	return alphas
}
