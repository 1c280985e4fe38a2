package stacks_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/internal/gradcheck"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
)

// scoreNet builds a graph in which the action scores of step t are
// x_t W for an input x_t of shape (batch, 3), fed to a stack made by
// NewNSScores, with loss Σ_t Σ C_t ⊙ r_t.
func scoreNet(t *testing.T, cfg stacks.NSConfig, rng *rand.Rand, batch, steps int) (*G.ExprGraph, *G.Node, G.Nodes, []*nstTap) {
	t.Helper()
	s, err := stacks.NewNSScores("scores", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Params()) != 0 {
		t.Fatalf("a score stack has parameters %v", s.Params())
	}
	g := G.NewGraph()
	inst, err := s.Bind(g, batch, steps)
	if err != nil {
		t.Fatal(err)
	}
	w := blInput(g, "W", blDense(rng, 1.5, 3, cfg.NumActions()))
	wrt := G.Nodes{w}
	var loss *G.Node
	var taps []*nstTap
	for k := 1; k <= steps; k++ {
		x := blInput(g, fmt.Sprint("x", k), blDense(rng, 1, batch, 3))
		wrt = append(wrt, x)
		r, err := inst.Step(k, G.Must(G.Mul(x, w)))
		if err != nil {
			t.Fatal(err)
		}
		tap, term := nstTapOf(r, blDense(rng, 1, batch, s.ReadingSize()).Float64s())
		taps = append(taps, tap)
		if loss == nil {
			loss = term
		} else {
			loss = G.Must(G.Add(loss, term))
		}
	}
	return g, loss, wrt, taps
}

// TestNSScoresGradients checks a stack fed with action scores by
// finite differences through the whole graph, for every variant.
func TestNSScoresGradients(t *testing.T) {
	for i, cfg := range nstAllConfigs(0, 2) {
		rng := rand.New(rand.NewPCG(uint64(i), 4))
		g, loss, wrt, _ := scoreNet(t, cfg, rng, 2, 4)
		bad, _, err := gradcheck.Check(g, loss, wrt, gradcheck.Options{Floor: 1e-2})
		if err != nil {
			t.Fatalf("%s: %v", nstName(cfg), err)
		}
		for _, b := range bad {
			t.Errorf("%s: %v", nstName(cfg), b)
		}
	}
}

// TestNSScoresMatchesRun checks that the graph's readings equal Run's on the
// log-weights the scores define (normalized by log-softmax for NS).
func TestNSScoresMatchesRun(t *testing.T) {
	const batch, steps = 2, 5
	for i, cfg := range nstAllConfigs(0, 3) {
		rng := rand.New(rand.NewPCG(uint64(i), 5))
		s, err := stacks.NewNSScores("scores", cfg)
		if err != nil {
			t.Fatal(err)
		}
		g := G.NewGraph()
		inst, _ := s.Bind(g, batch, steps)
		var taps []*nstTap
		var logw [][]float64
		for k := 1; k <= steps; k++ {
			sc := blDense(rng, 3, batch, cfg.NumActions())
			lw := append([]float64(nil), sc.Float64s()...)
			if cfg.Normalized {
				nstLogSoftmax(lw, cfg, batch)
			}
			logw = append(logw, lw)
			r, err := inst.Step(k, blInput(g, fmt.Sprint("s", k), sc))
			if err != nil {
				t.Fatal(err)
			}
			tap, _ := nstTapOf(r, nil)
			taps = append(taps, tap)
		}
		m := G.NewTapeMachine(g)
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		want, err := stacks.Run(cfg, batch, logw)
		if err != nil {
			t.Fatal(err)
		}
		nstClose(t, nstName(cfg), nstSeen(taps), want, 1e-12)
		m.Close()
	}
	if _, err := stacks.NewNSScores("bad", stacks.NSConfig{States: 0, Symbols: 1}); err == nil {
		t.Error("NewNSScores accepted |Q| = 0")
	}
	s, _ := stacks.NewNSScores("scores", nstConfig(1, 1, false, false, stacks.Original, 0))
	g := G.NewGraph()
	inst, _ := s.Bind(g, 2, 1)
	wrong := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 4), G.WithName("wrong"))
	if _, err := inst.Step(1, wrong); err == nil {
		t.Error("a score node of the wrong width was accepted")
	}
}

// nstLogSoftmax normalizes log-weights over each (q, x) row in place.
func nstLogSoftmax(lw []float64, cfg stacks.NSConfig, batch int) {
	kc := nskernel.Config{States: cfg.States, Symbols: cfg.Symbols, Fixed: cfg.Bottom == stacks.Fixed, StateReading: cfg.StateReading, Window: cfg.Window}
	nskernel.LogSoftmaxRows(lw, lw, kc, batch)
}
