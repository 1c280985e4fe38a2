package stacks_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"

	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/internal/nsenum"
)

// vElem is a stack element of the brute-force enumerator: its symbol and
// the step i+1 at which it was pushed, as i (−1 for the Fixed initial
// bottom, −2 for the Original one, which is never the top after a step).
type vElem struct{ sym, i int }

// vAction returns the index, within the (q,x) row of the action layout, of
// op's log-weight.
func vAction(cfg stacks.NSConfig, op stacks.Op) int {
	m := cfg.States * cfg.Symbols
	switch op.Kind {
	case stacks.OpPush:
		return op.State*cfg.Symbols + op.Symbol
	case stacks.OpReplace:
		return m + op.State*cfg.Symbols + op.Symbol
	}
	return 2*m + op.State
}

// vLegalOps returns the transitions the PDA may take at step t from state q
// with stack st, in the order push (r,y), replace (r,y), pop r with r and
// y increasing, keeping only those after which the top respects the
// window.
func vLegalOps(cfg stacks.NSConfig, t int, st []vElem) []stacks.Op {
	var ops []stacks.Op
	n := len(st)
	fixed := cfg.Bottom == stacks.Fixed
	inWindow := func(top vElem) bool {
		return cfg.Window == 0 || t-top.i <= cfg.Window
	}
	for r := 0; r < cfg.States; r++ {
		for y := 0; y < cfg.Symbols; y++ {
			ops = append(ops, stacks.Op{Kind: stacks.OpPush, State: r, Symbol: y})
		}
	}
	if (fixed || n > 1) && inWindow(st[n-1]) {
		for r := 0; r < cfg.States; r++ {
			for y := 0; y < cfg.Symbols; y++ {
				ops = append(ops, stacks.Op{Kind: stacks.OpReplace, State: r, Symbol: y})
			}
		}
	}
	if ((fixed && n >= 2) || (!fixed && n >= 3)) && inWindow(st[n-2]) {
		for r := 0; r < cfg.States; r++ {
			ops = append(ops, stacks.Op{Kind: stacks.OpPop, State: r, Symbol: -1})
		}
	}
	return ops
}

// topTwo is a value of the top-two semiring with paths: the best run's
// weight and transitions, and the best weight of the other runs (the
// two-best semiring, so that a near tie can be told from a clear best).
type topTwo struct {
	w, second   float64
	ok, hasNext bool
	ops         []nsenum.Op
}

type topTwoSemiring struct{}

func (topTwoSemiring) Zero() topTwo { return topTwo{} }
func (topTwoSemiring) One() topTwo  { return topTwo{ok: true} }

// Times extends the runs of a by the single transition b.
func (topTwoSemiring) Times(a, b topTwo) topTwo {
	if !a.ok || !b.ok {
		return topTwo{}
	}
	return topTwo{w: a.w + b.w, second: a.second + b.w, ok: true, hasNext: a.hasNext,
		ops: append(append([]nsenum.Op(nil), a.ops...), b.ops...)}
}

// Plus merges two sets of runs, keeping the first of the best.
func (topTwoSemiring) Plus(acc *topTwo, v topTwo) bool {
	if !v.ok {
		return false
	}
	if !acc.ok {
		*acc = v
		return true
	}
	if v.w > acc.w {
		second := acc.w
		if v.hasNext && v.second > second {
			second = v.second
		}
		*acc = topTwo{w: v.w, second: second, ok: true, hasNext: true, ops: v.ops}
		return true
	}
	if !acc.hasNext || v.w > acc.second {
		acc.second, acc.hasNext = v.w, true
	}
	if v.hasNext && v.second > acc.second {
		acc.second = v.second
	}
	return false
}

// vBrute enumerates every run of the PDA over the steps of rows (one
// sequence: rows[t-1] has NumActions entries) with the shared enumerator
// (package nsenum) in the top-two semiring, and returns one of highest
// log-weight, that weight, and the highest weight among the other runs.
func vBrute(cfg stacks.NSConfig, rows [][]float64) (best []stacks.Op, bestW, second float64) {
	ec := nsenum.Config{States: cfg.States, Symbols: cfg.Symbols, Fixed: cfg.Bottom == stacks.Fixed, Window: cfg.Window}
	alphas := nsenum.Alphas[topTwo](ec, topTwoSemiring{}, len(rows), func(t, a int, op nsenum.Op) topTwo {
		return topTwo{w: rows[t-1][a], ok: true, ops: []nsenum.Op{op}}
	})
	var all topTwo
	for _, v := range alphas[len(rows)-1] {
		topTwoSemiring{}.Plus(&all, v)
	}
	second = math.Inf(-1)
	if all.hasNext {
		second = all.second
	}
	for _, op := range all.ops {
		best = append(best, stacks.Op{Kind: stacks.OpKind(op.Kind), State: op.State, Symbol: op.Symbol})
	}
	return best, all.w, second
}

// vReplay checks that run is a legal run of the PDA over rows (one
// sequence), with the stacks and states it reports, and returns the sum of
// its log-weights in step order.
func vReplay(cfg stacks.NSConfig, rows [][]float64, run stacks.ViterbiRun) (float64, error) {
	n := len(rows)
	if len(run.Ops) != n || len(run.Stacks) != n || len(run.States) != n {
		return 0, fmt.Errorf("run of %d ops, %d stacks, %d states for %d steps", len(run.Ops), len(run.Stacks), len(run.States), n)
	}
	w := 2*cfg.States*cfg.Symbols + cfg.States
	bottom := vElem{0, -2}
	if cfg.Bottom == stacks.Fixed {
		bottom.i = -1
	}
	st, q, lw := []vElem{bottom}, 0, 0.0
	for t := 1; t <= n; t++ {
		op := run.Ops[t-1]
		legal := false
		for _, o := range vLegalOps(cfg, t, st) {
			legal = legal || o == op
		}
		if !legal {
			return 0, fmt.Errorf("step %d: %v is not legal from state %d, stack %v", t, op, q, st)
		}
		lw += rows[t-1][(q*cfg.Symbols+st[len(st)-1].sym)*w+vAction(cfg, op)]
		switch op.Kind {
		case stacks.OpPush:
			st = append(st, vElem{op.Symbol, t - 1})
		case stacks.OpReplace:
			st = append([]vElem(nil), st...)
			st[len(st)-1].sym = op.Symbol
		case stacks.OpPop:
			st = st[:len(st)-1]
		}
		q = op.State
		if top := st[len(st)-1]; cfg.Window > 0 && t-top.i > cfg.Window {
			return 0, fmt.Errorf("step %d: top %v outside window %d", t, top, cfg.Window)
		}
		syms := make([]int, len(st))
		for j, e := range st {
			syms[j] = e.sym
		}
		if !reflect.DeepEqual(run.Stacks[t-1], syms) || run.States[t-1] != q {
			return 0, fmt.Errorf("step %d: reported state %d, stack %v; want %d, %v", t, run.States[t-1], run.Stacks[t-1], q, syms)
		}
	}
	return lw, nil
}

// vRows returns the rows of sequence b of the batch.
func vRows(cfg stacks.NSConfig, logWeights [][]float64, b int) [][]float64 {
	a := cfg.NumActions()
	rows := make([][]float64, len(logWeights))
	for t, lw := range logWeights {
		rows[t] = lw[b*a : (b+1)*a]
	}
	return rows
}

// vRandom returns n steps of random log-weights for a batch; with sparse,
// about a third of them are −∞.
func vRandom(rng *rand.Rand, cfg stacks.NSConfig, batch, n int, sparse bool) [][]float64 {
	lw := make([][]float64, n)
	for t := range lw {
		lw[t] = make([]float64, batch*cfg.NumActions())
		for j := range lw[t] {
			lw[t][j] = rng.NormFloat64()
			if sparse && rng.IntN(3) == 0 {
				lw[t][j] = math.Inf(-1)
			}
		}
	}
	return lw
}

// vCheck checks the runs Viterbi returns for logWeights: legal, with the
// stacks and states they report, and a LogWeight that is the sum of their
// log-weights.
func vCheck(t *testing.T, cfg stacks.NSConfig, batch int, logWeights [][]float64) []stacks.ViterbiRun {
	t.Helper()
	runs, err := stacks.Viterbi(cfg, batch, logWeights)
	if err != nil {
		t.Fatalf("%+v: %v", cfg, err)
	}
	if len(runs) != batch {
		t.Fatalf("%+v: %d runs for a batch of %d", cfg, len(runs), batch)
	}
	for b, run := range runs {
		lw, err := vReplay(cfg, vRows(cfg, logWeights, b), run)
		if err != nil {
			t.Fatalf("%+v, sequence %d: %v\nops %v", cfg, b, err, run.Ops)
		}
		if lw != run.LogWeight && !(math.IsInf(lw, -1) && math.IsInf(run.LogWeight, -1)) {
			t.Errorf("%+v, sequence %d: LogWeight %v, replayed %v", cfg, b, run.LogWeight, lw)
		}
	}
	return runs
}

func TestViterbiBruteForce(t *testing.T) {
	// Steps per (|Q|, |Γ|), so that the enumeration stays small.
	steps := map[[2]int]int{
		{1, 1}: 6, {1, 2}: 6, {1, 3}: 5,
		{2, 1}: 6, {2, 2}: 5, {2, 3}: 4,
		{3, 1}: 5, {3, 2}: 4, {3, 3}: 4,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const batch = 2
	cases := 0
	for nq := 1; nq <= 3; nq++ {
		for ns := 1; ns <= 3; ns++ {
			n := steps[[2]int{nq, ns}]
			for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
				for _, window := range []int{0, 1, 2, 3, n - 1, n, n + 1} {
					for _, sparse := range []bool{false, true} {
						cfg := stacks.NSConfig{States: nq, Symbols: ns, Normalized: true, Bottom: bottom, Window: window}
						lw := vRandom(rng, cfg, batch, n, sparse)
						runs := vCheck(t, cfg, batch, lw)
						for b, run := range runs {
							ops, bw, second := vBrute(cfg, vRows(cfg, lw, b))
							if math.IsInf(bw, -1) {
								if !math.IsInf(run.LogWeight, -1) {
									t.Errorf("%+v, sequence %d: LogWeight %v, but every run has weight 0", cfg, b, run.LogWeight)
								}
								continue
							}
							if math.Abs(run.LogWeight-bw) > 1e-9 {
								t.Errorf("%+v, sparse %t, sequence %d: LogWeight %v, brute force %v\ngot  %v\nwant %v", cfg, sparse, b, run.LogWeight, bw, run.Ops, ops)
								continue
							}
							// Compare the runs unless the best is (nearly) tied.
							if bw-second > 1e-9 && !reflect.DeepEqual(run.Ops, ops) {
								t.Errorf("%+v, sparse %t, sequence %d: got %v, want %v", cfg, sparse, b, run.Ops, ops)
							}
							cases++
						}
					}
				}
			}
		}
	}
	if cases < 400 {
		t.Errorf("only %d sequences compared", cases)
	}
}

func TestViterbiTies(t *testing.T) {
	for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
		for _, window := range []int{0, 1, 2, 4} {
			for _, qg := range [][2]int{{1, 1}, {2, 3}, {3, 2}} {
				cfg := stacks.NSConfig{States: qg[0], Symbols: qg[1], Bottom: bottom, Window: window}
				const batch, n = 3, 5
				lw := make([][]float64, n)
				for i := range lw {
					lw[i] = make([]float64, batch*cfg.NumActions())
				}
				runs := vCheck(t, cfg, batch, lw)
				again := vCheck(t, cfg, batch, lw)
				if !reflect.DeepEqual(runs, again) {
					t.Errorf("%+v: two calls differ:\n%v\n%v", cfg, runs, again)
				}
				for b, run := range runs {
					if run.LogWeight != 0 {
						t.Errorf("%+v, sequence %d: LogWeight %v, want 0", cfg, b, run.LogWeight)
					}
					if !reflect.DeepEqual(run, runs[0]) {
						t.Errorf("%+v: sequence %d decoded as %v, sequence 0 as %v", cfg, b, run.Ops, runs[0].Ops)
					}
				}
				if window != 0 {
					continue
				}
				// The documented tie rule for unlimited stacks.
				want := make([]stacks.Op, n)
				for i := range want {
					want[i] = stacks.Op{Kind: stacks.OpReplace}
				}
				if bottom == stacks.Original {
					want[0].Kind = stacks.OpPush
				}
				if !reflect.DeepEqual(runs[0].Ops, want) {
					t.Errorf("%+v: all-zero weights give %v, want %v", cfg, runs[0].Ops, want)
				}
			}
		}
	}
}

// TestViterbiLonger checks longer sequences, beyond the brute force: the
// decoded run is legal, weighs at least as much as random legal runs, and
// no less under a wider window.
func TestViterbiLonger(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 24
	for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
		cfg := stacks.NSConfig{States: 2, Symbols: 2, Bottom: bottom}
		rowLen := 2*cfg.States*cfg.Symbols + cfg.States
		lw := vRandom(rng, cfg, 1, n, false)
		rows := vRows(cfg, lw, 0)
		prev := math.Inf(-1)
		for _, window := range []int{1, 2, 3, 5, 8, n - 1, n, n + 1, 0} {
			cfg.Window = window
			run := vCheck(t, cfg, 1, lw)[0]
			if run.LogWeight < prev-1e-9 {
				t.Errorf("%+v: LogWeight %v below that of a narrower window, %v", cfg, run.LogWeight, prev)
			}
			prev = run.LogWeight
			// Random legal runs weigh no more.
			for range 300 {
				st := []vElem{{0, -2}}
				if bottom == stacks.Fixed {
					st[0].i = -1
				}
				q, w := 0, 0.0
				for s := 1; s <= n; s++ {
					legal := vLegalOps(cfg, s, st)
					op := legal[rng.IntN(len(legal))]
					w += rows[s-1][(q*cfg.Symbols+st[len(st)-1].sym)*rowLen+vAction(cfg, op)]
					switch op.Kind {
					case stacks.OpPush:
						st = append(st, vElem{op.Symbol, s - 1})
					case stacks.OpReplace:
						st = append([]vElem(nil), st...)
						st[len(st)-1].sym = op.Symbol
					case stacks.OpPop:
						st = st[:len(st)-1]
					}
					q = op.State
				}
				if w > run.LogWeight+1e-9 {
					t.Fatalf("%+v: a random run weighs %v, more than the decoded %v", cfg, w, run.LogWeight)
				}
			}
		}
	}
}

func TestViterbiImpossible(t *testing.T) {
	// Every log-weight −∞: some legal run, of log-weight −∞.
	for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
		cfg := stacks.NSConfig{States: 2, Symbols: 2, Bottom: bottom, Window: 2}
		lw := make([][]float64, 4)
		for i := range lw {
			lw[i] = make([]float64, cfg.NumActions())
			for j := range lw[i] {
				lw[i][j] = math.Inf(-1)
			}
		}
		if run := vCheck(t, cfg, 1, lw)[0]; !math.IsInf(run.LogWeight, -1) {
			t.Errorf("%+v: LogWeight %v, want -Inf", cfg, run.LogWeight)
		}
	}
}

func TestViterbiNoSteps(t *testing.T) {
	cfg := stacks.NSConfig{States: 2, Symbols: 3, Bottom: stacks.Fixed}
	for _, lw := range [][][]float64{nil, {}} {
		runs, err := stacks.Viterbi(cfg, 2, lw)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 {
			t.Fatalf("%d runs for a batch of 2", len(runs))
		}
		for _, run := range runs {
			if len(run.Ops) != 0 || len(run.Stacks) != 0 || len(run.States) != 0 || run.LogWeight != 0 {
				t.Errorf("no steps gave %+v", run)
			}
		}
	}
}

func TestViterbiErrors(t *testing.T) {
	good := stacks.NSConfig{States: 2, Symbols: 2}
	a := good.NumActions()
	row := func(batch int, v float64) []float64 {
		r := make([]float64, batch*a)
		r[len(r)-1] = v
		return r
	}
	for _, c := range []struct {
		name  string
		cfg   stacks.NSConfig
		batch int
		lw    [][]float64
	}{
		{"no states", stacks.NSConfig{Symbols: 2}, 1, nil},
		{"no symbols", stacks.NSConfig{States: 2}, 1, nil},
		{"negative window", stacks.NSConfig{States: 2, Symbols: 2, Window: -1}, 1, nil},
		{"unknown bottom", stacks.NSConfig{States: 2, Symbols: 2, Bottom: 7}, 1, nil},
		{"zero batch", good, 0, nil},
		{"negative batch", good, -1, nil},
		{"short row", good, 1, [][]float64{row(1, 0), make([]float64, a-1)}},
		{"long row", good, 1, [][]float64{make([]float64, a+1)}},
		{"row for another batch", good, 2, [][]float64{row(1, 0)}},
		{"nil row", good, 1, [][]float64{nil}},
		{"NaN", good, 2, [][]float64{row(2, 0), row(2, math.NaN())}},
		{"+Inf", good, 1, [][]float64{row(1, math.Inf(1))}},
	} {
		runs, err := stacks.Viterbi(c.cfg, c.batch, c.lw)
		if err == nil {
			t.Errorf("%s: no error, runs %v", c.name, runs)
		}
	}
	if _, err := stacks.Viterbi(good, 1, [][]float64{row(1, math.Inf(-1))}); err != nil {
		t.Errorf("-Inf log-weight: %v", err)
	}
}

func TestOpString(t *testing.T) {
	for _, c := range []struct {
		op   stacks.Op
		want string
	}{
		{stacks.Op{Kind: stacks.OpPush, State: 1, Symbol: 2}, "push(state=1, symbol=2)"},
		{stacks.Op{Kind: stacks.OpReplace, State: 0, Symbol: 1}, "replace(state=0, symbol=1)"},
		{stacks.Op{Kind: stacks.OpPop, State: 2, Symbol: -1}, "pop(state=2)"},
	} {
		if got := c.op.String(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func ExampleViterbi() {
	// One state and two symbols; every transition has log-weight −5
	// except one per step, for the configuration the favoured run is in.
	cfg := stacks.NSConfig{States: 1, Symbols: 2, Normalized: true}
	const w = 5 // 2|Q||Γ| + |Q| actions per (q, x) row
	favour := []struct{ x, action int }{
		{0, 1},     // step 1, top 0: push(0, 1)
		{1, 0},     // step 2, top 1: push(0, 0)
		{0, 4},     // step 3, top 0: pop(0)
		{1, 2 + 0}, // step 4, top 1: replace(0, 0)
	}
	logWeights := make([][]float64, len(favour))
	for t, f := range favour {
		logWeights[t] = make([]float64, cfg.NumActions())
		for j := range logWeights[t] {
			logWeights[t][j] = -5
		}
		logWeights[t][f.x*w+f.action] = 0
	}
	runs, err := stacks.Viterbi(cfg, 1, logWeights)
	if err != nil {
		fmt.Println(err)
		return
	}
	run := runs[0]
	for t, op := range run.Ops {
		fmt.Printf("step %d: %-26v  state %d, stack %v\n", t+1, op, run.States[t], run.Stacks[t])
	}
	fmt.Println("log-weight", run.LogWeight)
	// Output:
	// step 1: push(state=0, symbol=1)     state 0, stack [0 1]
	// step 2: push(state=0, symbol=0)     state 0, stack [0 1 0]
	// step 3: pop(state=0)                state 0, stack [0 1]
	// step 4: replace(state=0, symbol=0)  state 0, stack [0 0]
	// log-weight 0
}

func ExampleViterbiRun_WriteTable() {
	run := stacks.ViterbiRun{
		Ops: []stacks.Op{
			{Kind: stacks.OpPush, State: 1, Symbol: 2},
			{Kind: stacks.OpReplace, State: 0, Symbol: 1},
			{Kind: stacks.OpPop, State: 1, Symbol: -1},
		},
		States: []int{1, 0, 1},
		Stacks: [][]int{{0, 2}, {0, 1}, {0}},
	}
	// A string of four symbols: a model updates its stack after each but
	// the last.
	if err := run.WriteTable(os.Stdout, []string{"a", "b", "#", "b"}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// t  w_t  op                          state  depth  stack (bottom first)
	// 1  a    push(state=1, symbol=2)     1      1      0 2
	// 2  b    replace(state=0, symbol=1)  0      1      0 1
	// 3  #    pop(state=1)                1      0      0
	// 4  b    -
}

func BenchmarkViterbi(b *testing.B) {
	cfg := stacks.NSConfig{States: 2, Symbols: 3, Normalized: true}
	lw := vRandom(rand.New(rand.NewPCG(5, 6)), cfg, 1, 40, false)
	for b.Loop() {
		if _, err := stacks.Viterbi(cfg, 1, lw); err != nil {
			b.Fatal(err)
		}
	}
}
