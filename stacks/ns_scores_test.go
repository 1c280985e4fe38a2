package stacks_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

// scoresLayer puts a stack made by NewNSScores, which has no Actions layer,
// through the conformance suite: its instances compute the action scores
// from h as h·M, for a fixed random matrix M (not a parameter), so that
// the suite's gradients with respect to h check the stack's gradients
// with respect to its scores.
type scoresLayer struct {
	*stacks.NS
	m *tensor.Dense // (hidden, NumActions)
}

func newScoresLayer(hidden int, cfg stacks.NSConfig) (stacks.Layer, error) {
	s, err := stacks.NewNSScores("scores", cfg)
	if err != nil {
		return nil, err
	}
	return &scoresLayer{NS: s, m: dense(rand.New(rand.NewPCG(uint64(hidden), 8)), 1, hidden, cfg.NumActions())}, nil
}

var scoresIDs atomic.Uint64

func (l *scoresLayer) Bind(pb *param.Binding, batch, steps int, carry bool) (stacks.Instance, error) {
	inst, err := l.NS.Bind(pb, batch, steps, carry)
	if err != nil {
		return nil, err
	}
	m := input(pb.Graph(), fmt.Sprint("M#", scoresIDs.Add(1)), l.m)
	return &scoresInstance{Instance: inst, m: m}, nil
}

type scoresInstance struct {
	stacks.Instance
	m *G.Node
}

func (in *scoresInstance) Step(t int, h *G.Node) (*G.Node, error) {
	s, err := G.Mul(h, in.m)
	if err != nil {
		return nil, err
	}
	return in.Instance.Step(t, s)
}

// NewRunner gives a runner that computes the scores as the instances do.
func (l *scoresLayer) NewRunner(batch, maxSteps int) (stacks.Runner, error) {
	r, err := l.NS.NewRunner(batch, maxSteps)
	if err != nil {
		return nil, err
	}
	return &scoresRunner{Runner: r, m: l.m.Float64s(), batch: batch, actions: l.Config().NumActions()}, nil
}

type scoresRunner struct {
	stacks.Runner
	m              []float64
	batch, actions int
}

func (r *scoresRunner) Step(h, out []float64) error {
	hidden := len(r.m) / r.actions
	s := make([]float64, r.batch*r.actions)
	for b := 0; b < r.batch; b++ {
		for j := 0; j < r.actions; j++ {
			for k := 0; k < hidden; k++ {
				s[b*r.actions+j] += h[b*hidden+k] * r.m[k*r.actions+j]
			}
		}
	}
	return r.Runner.Step(s, out)
}

// TestConformanceNSScores runs the conformance suite on stacks without an
// Actions layer, through scoresLayer.
func TestConformanceNSScores(t *testing.T) {
	for _, v := range nsVariants {
		for _, window := range []int{0, 2} {
			bottom := stacks.Original
			if v.stateReading {
				bottom = stacks.Fixed
			}
			cfg := nsConfig(2, 2, v.normalized, v.stateReading, bottom, window)
			stackstest.Test(t, nsName(cfg), func(hidden int) (stacks.Layer, error) { return newScoresLayer(hidden, cfg) })
		}
	}
}

// TestNSScores checks a stack made by NewNSScores fed with the action
// scores directly: it has no parameters, its readings are Run's on the
// log-weights the scores define (normalized by log-softmax for NS and
// NS+S), and ActionLogWeights returns those log-weights.
func TestNSScores(t *testing.T) {
	const batch, steps = 2, 5
	for i, cfg := range nsAllConfigs(0, 3) {
		t.Run(nsName(cfg), func(t *testing.T) {
			s, err := stacks.NewNSScores("scores", cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Params()) != 0 {
				t.Fatalf("a score stack has parameters %v", s.Params())
			}
			d := stackstest.NewData(rand.New(rand.NewPCG(uint64(i), 5)), batch, cfg.NumActions(), cfg.ReadingSize(), steps)
			var lw [][]float64
			for _, x := range d.X {
				for j := range x {
					x[j] *= 3
				}
				l := append([]float64(nil), x...)
				if cfg.Normalized {
					logSoftmaxRows(l, cfg)
				}
				lw = append(lw, l)
			}
			n := newNet(t, s, d, stackstest.Options{Steps: steps})
			defer n.Close()
			runNet(t, n)
			want, err := stacks.Run(cfg, batch, lw)
			if err != nil {
				t.Fatal(err)
			}
			nearAll(t, "reading", n.Readings(), want, 1e-12)
			got, err := n.Instance.(stacks.ActionRecorder).ActionLogWeights()
			if err != nil {
				t.Fatal(err)
			}
			nearAll(t, "log-weights", got, lw, 1e-12)
		})
	}
}
