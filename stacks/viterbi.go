package stacks

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
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

// WriteTable writes the run as a table aligned with the symbols it was
// decoded on: a header row, then per input symbol w_t (inputs[t-1], as
// text) its step t, the transition taken after reading it, the PDA state
// and the stack depth (symbols above the initial bottom) after that
// transition, and the stack, bottom first. A symbol after the run's last
// step (a model makes no stack update after a string's last symbol) has
// "-" for its transition; with inputs shorter than the run, the steps
// beyond them have an empty symbol.
//
//	t  w_t  op                       state  depth  stack (bottom first)
//	1  a    push(state=1, symbol=2)  1      1      0 2
//	2  b    -
func (r ViterbiRun) WriteTable(w io.Writer, inputs []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "t\tw_t\top\tstate\tdepth\tstack (bottom first)")
	for t := range max(len(inputs), len(r.Ops)) {
		x := ""
		if t < len(inputs) {
			x = inputs[t]
		}
		if t >= len(r.Ops) {
			fmt.Fprintf(tw, "%d\t%s\t-\t\t\t\n", t+1, x)
			continue
		}
		st := make([]string, len(r.Stacks[t]))
		for i, y := range r.Stacks[t] {
			st[i] = strconv.Itoa(y)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\n", t+1, x, r.Ops[t], r.States[t], len(r.Stacks[t])-1, strings.Join(st, " "))
	}
	return tw.Flush()
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
// Viterbi runs the dynamic program of Run, Lang's algorithm, in the max-plus
// semiring with backpointers (the same program over the same block layout,
// positions and window; see nskernel): γ[i→t][q,x→r,y] is the best weight of a run
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

// viterbiSeq decodes one sequence whose step t log-weights are rows[t-1]:
// the max-plus instance of the stacks' dynamic program (nskernel.Viterbi)
// finds the transitions, and replaying them gives the stacks, states and
// log-weight.
func viterbiSeq(cfg NSConfig, rows [][]float64) ViterbiRun {
	n := len(rows)
	if n == 0 {
		return ViterbiRun{Ops: []Op{}, Stacks: [][]int{}, States: []int{}}
	}
	nq, ns := cfg.States, cfg.Symbols
	m := nq * ns
	w := 2*m + nq
	ops := make([]Op, n)
	for t, tr := range nskernel.Viterbi(cfg.kernel(), rows) {
		// The kinds of both follow the action layout: push, replace, pop.
		ops[t] = Op{Kind: OpKind(tr.Kind), State: tr.State, Symbol: tr.Symbol}
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
