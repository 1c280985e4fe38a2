package stacks_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/stacks"
)

// Tests of stacks.ActionTypeWeights, the pure function of the action
// log-weights that gives the paper's Figure 3 quantity.

// softmax3 is the softmax of three scores.
func softmax3(s [3]float64) [3]float64 {
	mx := math.Max(s[0], math.Max(s[1], s[2]))
	var out [3]float64
	z := 0.0
	for i, v := range s {
		out[i] = math.Exp(v - mx)
		z += out[i]
	}
	for i := range out {
		out[i] /= z
	}
	return out
}

// typeWeightsNear checks got against want[t−1][b] (step-major).
func typeWeightsNear(t *testing.T, got [][][3]float64, want [][][3]float64, tol float64) {
	t.Helper()
	for b := range got {
		if len(got[b]) != len(want) {
			t.Fatalf("sequence %d: %d steps, want %d", b, len(got[b]), len(want))
		}
		for k := range got[b] {
			for j := range 3 {
				if !(math.Abs(got[b][k][j]-want[k][b][j]) <= tol) {
					t.Errorf("sequence %d step %d: %v, want %v", b, k+1, got[b][k], want[k][b])
					break
				}
			}
		}
	}
}

// TestNSActionTypeWeightsByHand: with |Q| = |Γ| = 1 there is one action of
// each type, (push, replace, pop) in that order, and α̂ is always [1], so
// the normalized type weights are the softmax of the three scores — the
// log-weights themselves for the unnormalized variants, their
// log-softmax for the normalized ones — for every variant, both bottoms
// and with a window (the weights count actions, feasible or not).
func TestNSActionTypeWeightsByHand(t *testing.T) {
	const batch = 2
	// scores[t−1][b] = (push, replace, pop).
	scores := [][][3]float64{
		{{0.2, -0.3, 1.1}, {1.2, 0.2, 0.1}},
		{{-1.8, 2.7, 1.1}, {4.2, -2.3, -0.9}},
		{{-1.8, 0.7, 2.1}, {-29.8, 104.7, -28.9}},
	}
	var want [][][3]float64
	for _, step := range scores {
		want = append(want, [][3]float64{softmax3(step[0]), softmax3(step[1])})
	}
	for _, v := range nsVariants {
		for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
			for _, window := range []int{0, 1} {
				cfg := nsConfig(1, 1, v.normalized, v.stateReading, bottom, window)
				t.Run(nsName(cfg), func(t *testing.T) {
					var lw [][]float64
					for _, step := range scores {
						row := append(append([]float64{}, step[0][:]...), step[1][:]...)
						if cfg.Normalized {
							logSoftmaxRows(row, cfg)
						}
						lw = append(lw, row)
					}
					got, err := stacks.ActionTypeWeights(cfg, batch, lw)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != batch {
						t.Fatalf("%d sequences, want %d", len(got), batch)
					}
					typeWeightsNear(t, got, want, 1e-12)
				})
			}
		}
	}
}

// nsRandomLogWeights returns log-weights for steps steps: standard normal
// scores, normalized over each (q, x) row for NS and NS+S; with sparse,
// about a quarter of the scores are −∞.
func nsRandomLogWeights(rng *rand.Rand, cfg stacks.NSConfig, batch, steps int, sparse bool) [][]float64 {
	lw := make([][]float64, steps)
	for t := range lw {
		lw[t] = make([]float64, batch*cfg.NumActions())
		for i := range lw[t] {
			lw[t][i] = rng.NormFloat64()
			if sparse && rng.IntN(4) == 0 {
				lw[t][i] = math.Inf(-1)
			}
		}
		if cfg.Normalized {
			logSoftmaxRows(lw[t], cfg)
		}
	}
	return lw
}

// bruteAlpha returns α̂[t], t = 0 … n, for one sequence (rows[t−1] holds
// step t's log-weights): the weight of the runs of the PDA that end step
// t in state q with top symbol x, at index q·|Γ|+x, normalized to sum 1
// (all zero when every run has weight zero). It enumerates the runs, with
// the transitions of vLegalOps (viterbi_test.go).
func bruteAlpha(cfg stacks.NSConfig, rows [][]float64) [][]float64 {
	n, m := len(rows), cfg.States*cfg.Symbols
	w := 2*m + cfg.States
	alpha := make([][]float64, n+1)
	for t := range alpha {
		alpha[t] = make([]float64, m)
	}
	bottom := vElem{0, -2}
	if cfg.Bottom == stacks.Fixed {
		bottom.i = -1
	}
	var walk func(t, q int, st []vElem, lw float64)
	walk = func(t, q int, st []vElem, lw float64) {
		top := st[len(st)-1]
		alpha[t][q*cfg.Symbols+top.sym] += math.Exp(lw)
		if t == n {
			return
		}
		row := rows[t][(q*cfg.Symbols+top.sym)*w:]
		for _, op := range vLegalOps(cfg, t+1, st) {
			v := lw + row[vAction(cfg, op)]
			if math.IsInf(v, -1) {
				continue
			}
			switch op.Kind {
			case stacks.OpPush:
				walk(t+1, op.State, append(st[:len(st):len(st)], vElem{op.Symbol, t}), v)
			case stacks.OpReplace:
				ns := append([]vElem(nil), st...)
				ns[len(ns)-1].sym = op.Symbol
				walk(t+1, op.State, ns, v)
			case stacks.OpPop:
				walk(t+1, op.State, st[:len(st)-1], v)
			}
		}
	}
	walk(0, 0, []vElem{bottom}, 0)
	for _, a := range alpha {
		sum := 0.0
		for _, v := range a {
			sum += v
		}
		if sum > 0 {
			for i := range a {
				a[i] /= sum
			}
		}
	}
	return alpha
}

// TestNSActionTypeWeightsFormula checks the weights for |Q| = |Γ| = 2,
// where α̂ is not one-hot, against the definition
//
//	Σ_{q,x} α̂[t−1][q,x] Σ_{δ of type k} Δ[t][q,x→δ] / Σ_{q,x} α̂[t−1][q,x] Σ_δ Δ[t][q,x→δ]
//
// with α̂ found by enumerating the runs of the PDA, for every variant,
// both bottoms, unlimited and limited, with and without impossible
// actions.
func TestNSActionTypeWeightsFormula(t *testing.T) {
	const batch, steps = 2, 4
	rng := rand.New(rand.NewPCG(3, 3))
	for _, cfg := range nsAllConfigs(0, 2) {
		for _, sparse := range []bool{false, true} {
			t.Run(nsName(cfg)+map[bool]string{false: "", true: "/sparse"}[sparse], func(t *testing.T) {
				lw := nsRandomLogWeights(rng, cfg, batch, steps, sparse)
				got, err := stacks.ActionTypeWeights(cfg, batch, lw)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != batch {
					t.Fatalf("%d sequences, want %d", len(got), batch)
				}
				m := cfg.States * cfg.Symbols
				w := 2*m + cfg.States
				want := make([][][3]float64, steps)
				for b := 0; b < batch; b++ {
					alpha := bruteAlpha(cfg, vRows(cfg, lw, b))
					for k := 0; k < steps; k++ {
						var ws [3]float64
						for c := 0; c < m; c++ {
							for j := 0; j < w; j++ {
								ws[min(j/m, 2)] += alpha[k][c] * math.Exp(lw[k][(b*m+c)*w+j])
							}
						}
						if total := ws[0] + ws[1] + ws[2]; total > 0 {
							for j := range ws {
								ws[j] /= total
							}
						}
						want[k] = append(want[k], ws)
					}
				}
				typeWeightsNear(t, got, want, 1e-12)
			})
		}
	}
}

// TestNSActionTypeWeightsVariants: the action-type weights depend on the
// log-weights, the bottom and the window, not on the reading or on how the
// log-weights were made, so NS and NS+U (which read symbols) give exactly
// what NS+S and RNS give on the same log-weights.
func TestNSActionTypeWeightsVariants(t *testing.T) {
	const batch, steps = 3, 6
	rng := rand.New(rand.NewPCG(4, 4))
	for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
		for _, window := range []int{0, 3} {
			lw := nsRandomLogWeights(rng, nsConfig(2, 3, false, false, bottom, window), batch, steps, false)
			var first [][][3]float64
			for i, v := range nsVariants {
				cfg := nsConfig(2, 3, v.normalized, v.stateReading, bottom, window)
				got, err := stacks.ActionTypeWeights(cfg, batch, lw)
				if err != nil {
					t.Fatalf("%s: %v", nsName(cfg), err)
				}
				if i == 0 {
					first = got
					continue
				}
				for b := range got {
					for k := range got[b] {
						if got[b][k] != first[b][k] {
							t.Errorf("%s, sequence %d, step %d: %v, but %s gives %v", nsName(cfg), b, k+1, got[b][k], nsVariants[0].name, first[b][k])
						}
					}
				}
			}
		}
	}
}

// TestNSActionTypeWeightsNoRun: at a step where every action's
// log-weight is −Inf the stack has no run; that step's weights are 0, not
// NaN, and so are the later ones, whose forward weights are all 0.
func TestNSActionTypeWeightsNoRun(t *testing.T) {
	cfg := nsConfig(2, 2, true, true, stacks.Original, 0)
	rng := rand.New(rand.NewPCG(5, 5))
	lw := nsRandomLogWeights(rng, cfg, 1, 4, false)
	for i := range lw[1] {
		lw[1][i] = math.Inf(-1)
	}
	got, err := stacks.ActionTypeWeights(cfg, 1, lw)
	if err != nil {
		t.Fatal(err)
	}
	for k, w := range got[0] {
		for _, v := range w {
			if math.IsNaN(v) || (k >= 1 && v != 0) {
				t.Errorf("step %d: %v", k+1, w)
			}
		}
	}
}
