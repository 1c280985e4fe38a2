package nsrnn_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/stacks"
)

// opIndex is the index of the transition op from configuration (q, x) in
// a step's row of log-weights (the layout of package stacks: one row of
// 2|Q||Γ|+|Q| actions per configuration q·|Γ|+x, pushes, then replaces,
// then pops).
func opIndex(cfg stacks.NSConfig, q, x int, op stacks.Op) int {
	qg := cfg.States * cfg.Symbols
	base := (q*cfg.Symbols + x) * (2*qg + cfg.States)
	switch op.Kind {
	case stacks.OpPush:
		return base + op.State*cfg.Symbols + op.Symbol
	case stacks.OpReplace:
		return base + qg + op.State*cfg.Symbols + op.Symbol
	}
	return base + 2*qg + op.State
}

// stackItem is a symbol on the stack with the step that pushed it (0 for
// the initial bottom).
type stackItem struct{ sym, pushed int }

// allowed reports whether the PDA may take op from a stack st after step
// t−1 (st is the stack before step t), and returns the stack after it.
// It implements the rules stated by stacks.Viterbi: the bottom
// behaviours and the window D.
func allowed(cfg stacks.NSConfig, st []stackItem, t int, op stacks.Op) ([]stackItem, bool) {
	next := append([]stackItem(nil), st...)
	top := len(st) - 1
	switch op.Kind {
	case stacks.OpPush:
		next = append(next, stackItem{op.Symbol, t})
	case stacks.OpReplace:
		if top == 0 && cfg.Bottom == stacks.Original {
			return nil, false // the initial bottom is never replaced
		}
		next[top].sym = op.Symbol
	case stacks.OpPop:
		if top == 0 || (top == 1 && cfg.Bottom == stacks.Original) {
			return nil, false // never pop or (Original) uncover the bottom
		}
		next = next[:top]
	}
	// The top must have been pushed at step i+1 with t−i ≤ D; the
	// initial bottom counts as pushed with i = −1.
	if cfg.Window > 0 && t-(next[len(next)-1].pushed-1) > cfg.Window {
		return nil, false
	}
	return next, true
}

// allOps lists every transition of a configuration.
func allOps(cfg stacks.NSConfig) []stacks.Op {
	var ops []stacks.Op
	for _, k := range []stacks.OpKind{stacks.OpPush, stacks.OpReplace} {
		for r := 0; r < cfg.States; r++ {
			for y := 0; y < cfg.Symbols; y++ {
				ops = append(ops, stacks.Op{Kind: k, State: r, Symbol: y})
			}
		}
	}
	for r := 0; r < cfg.States; r++ {
		ops = append(ops, stacks.Op{Kind: stacks.OpPop, State: r, Symbol: -1})
	}
	return ops
}

// bestRunWeight is the highest log-weight of any run over the steps of
// lw, by enumerating them all.
func bestRunWeight(cfg stacks.NSConfig, lw [][]float64) float64 {
	ops := allOps(cfg)
	best := math.Inf(-1)
	var walk func(t, q int, st []stackItem, w float64)
	walk = func(t, q int, st []stackItem, w float64) {
		if t > len(lw) {
			best = max(best, w)
			return
		}
		x := st[len(st)-1].sym
		for _, op := range ops {
			if next, ok := allowed(cfg, st, t, op); ok {
				walk(t+1, op.State, next, w+lw[t-1][opIndex(cfg, q, x, op)])
			}
		}
	}
	walk(1, 0, []stackItem{{0, 0}}, 0)
	return best
}

// TestModelViterbi: on small random models of the nondeterministic
// kinds, Model.Viterbi is stacks.Viterbi on the model's
// ActionLogWeights; the run it returns is a legal run whose states and
// stacks follow from its operations and whose LogWeight is the sum of its
// operations' log-weights; and on short strings no run is better (checked
// by enumerating every run).
func TestModelViterbi(t *testing.T) {
	base := nsrnn.Config{InputVocab: 3, OutputVocab: 4, Hidden: 5, States: 2, Symbols: 2, InitRange: 1}
	with := func(f func(*nsrnn.Config)) nsrnn.Config { c := base; f(&c); return c }
	configs := map[string]nsrnn.Config{
		"rns":         with(func(c *nsrnn.Config) { c.Kind = nsrnn.RNS }),
		"rns 3 syms":  with(func(c *nsrnn.Config) { c.Kind = nsrnn.RNS; c.Symbols = 3; c.States = 1 }),
		"rns D=3":     with(func(c *nsrnn.Config) { c.Kind = nsrnn.RNS; c.Window = 3 }),
		"rns fixed":   with(func(c *nsrnn.Config) { c.Kind = nsrnn.RNS; c.Bottom = stacks.Fixed }),
		"rns fixed 3": with(func(c *nsrnn.Config) { c.Kind = nsrnn.RNS; c.Bottom = stacks.Fixed; c.Window = 3 }),
		"ns":          with(func(c *nsrnn.Config) { c.Kind = nsrnn.NS }),
		"ns+s":        with(func(c *nsrnn.Config) { c.Kind = nsrnn.NSS }),
		"ns+u":        with(func(c *nsrnn.Config) { c.Kind = nsrnn.NSU }),
	}
	rng := rand.New(rand.NewPCG(4, 2))
	for name, cfg := range configs {
		m, err := nsrnn.New(cfg, 11)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		scfg, ok := m.StackConfig()
		if !ok {
			t.Fatalf("%s: no stack configuration", name)
		}
		for _, n := range []int{0, 1, 2, 6, 6, 6, 13} {
			w := make([]int, n)
			for i := range w {
				w[i] = rng.IntN(cfg.InputVocab)
			}
			run, err := m.Viterbi(w)
			if err != nil {
				t.Fatalf("%s %v: %v", name, w, err)
			}
			lw, err := m.ActionLogWeights(w)
			if err != nil {
				t.Fatalf("%s %v: %v", name, w, err)
			}
			want, err := stacks.Viterbi(scfg, 1, lw)
			if err != nil {
				t.Fatalf("%s %v: %v", name, w, err)
			}
			if !reflect.DeepEqual(run, want[0]) {
				t.Errorf("%s %v: Model.Viterbi gives %+v, stacks.Viterbi on ActionLogWeights %+v", name, w, run, want[0])
			}
			steps := max(n-1, 0)
			if len(run.Ops) != steps || len(run.States) != steps || len(run.Stacks) != steps || len(lw) != steps {
				t.Fatalf("%s %v: %d ops, %d states, %d stacks, %d steps of log-weights, want %d",
					name, w, len(run.Ops), len(run.States), len(run.Stacks), len(lw), steps)
			}
			// Replay the run: every operation is legal from the
			// configuration the previous ones reached, the states and
			// stacks are the ones it reaches, and LogWeight is the sum
			// of the operations' log-weights in step order.
			q, st, sum := 0, []stackItem{{0, 0}}, 0.0
			for i, op := range run.Ops {
				x := st[len(st)-1].sym
				next, ok := allowed(scfg, st, i+1, op)
				if !ok {
					t.Fatalf("%s %v: step %d: %v is not allowed from state %d and stack %v", name, w, i+1, op, q, st)
				}
				sum += lw[i][opIndex(scfg, q, x, op)]
				q, st = op.State, next
				syms := make([]int, len(st))
				for j, it := range st {
					syms[j] = it.sym
				}
				if run.States[i] != q || !reflect.DeepEqual(run.Stacks[i], syms) {
					t.Fatalf("%s %v: after step %d the run says state %d, stack %v; its operations give %d, %v",
						name, w, i+1, run.States[i], run.Stacks[i], q, syms)
				}
			}
			if math.Abs(run.LogWeight-sum) > 1e-12*math.Max(1, math.Abs(sum)) {
				t.Errorf("%s %v: LogWeight %v, sum of the operations' log-weights %v", name, w, run.LogWeight, sum)
			}
			if n <= 6 {
				if b := bestRunWeight(scfg, lw); math.Abs(b-run.LogWeight) > 1e-9*math.Max(1, math.Abs(b)) {
					t.Errorf("%s %v: Viterbi's run has log-weight %v, the best run by enumeration %v", name, w, run.LogWeight, b)
				}
			}
		}
	}
}

// TestModelViterbiNeedsNondeterministicStack: the other kinds have no run
// to decode.
func TestModelViterbiNeedsNondeterministicStack(t *testing.T) {
	m, err := nsrnn.New(nsrnn.Config{Kind: nsrnn.LSTM, InputVocab: 2, OutputVocab: 3, Hidden: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Viterbi([]int{0, 1, 0}); err == nil {
		t.Error("Viterbi on an LSTM succeeded")
	}
}
