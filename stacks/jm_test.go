package stacks_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/nsrnn/nsrnn/internal/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/internal/baseline"
)

// TestJMByHand runs three steps of a superposition stack with given action
// distributions and pushed vectors, without and with depth limit 1; the
// expected cells are worked out by hand from the update
// new[i] = push·old[i−1] + noop·old[i] + pop·old[i+1], old[0] = v_t.
func TestJMByHand(t *testing.T) {
	a := [][]float64{{0.7, 0.2, 0.1}, {0.5, 0.3, 0.2}, {0.1, 0.1, 0.8}}
	v := [][]float64{{1, 2}, {3, 0}, {0, 5}}
	r := make([]float64, 2)

	tape := baseline.NewJM(1, 2, 0)
	tape.Begin(3, nil, false)
	tape.Forward(1, a[0], v[0], r)
	// s_1 = [0.7·v1].
	blNear(t, "s_1", tape.Stack(1, 0), []float64{0.7, 1.4})
	blNear(t, "r_1", r, []float64{0.7, 1.4})
	tape.Forward(2, a[1], v[1], r)
	// s_2[1] = 0.5·v2 + 0.3·s_1[1] = (1.71, 0.42); s_2[2] = 0.5·s_1[1].
	blNear(t, "s_2", tape.Stack(2, 0), []float64{1.71, 0.42, 0.35, 0.7})
	blNear(t, "r_2", r, []float64{1.71, 0.42})
	tape.Forward(3, a[2], v[2], r)
	// s_3[1] = 0.1·v3 + 0.1·s_2[1] + 0.8·s_2[2] = (0.451, 1.102);
	// s_3[2] = 0.1·s_2[1] + 0.1·s_2[2] = (0.206, 0.112);
	// s_3[3] = 0.1·s_2[2] = (0.035, 0.07).
	blNear(t, "s_3", tape.Stack(3, 0), []float64{0.451, 1.102, 0.206, 0.112, 0.035, 0.07})
	blNear(t, "r_3", r, []float64{0.451, 1.102})

	// Depth limit 1: s_2 = [(1.71, 0.42)], the pushed-down cell is lost;
	// s_3[1] = 0.1·v3 + 0.1·s_2[1] + 0.8·0 = (0.171, 0.542).
	tape = baseline.NewJM(1, 2, 1)
	tape.Begin(3, nil, false)
	tape.Forward(1, a[0], v[0], r)
	tape.Forward(2, a[1], v[1], r)
	blNear(t, "limited s_2", tape.Stack(2, 0), []float64{1.71, 0.42})
	tape.Forward(3, a[2], v[2], r)
	blNear(t, "limited r_3", r, []float64{0.171, 0.542})

	// With trimming for a 3-step pass, s_2 keeps 2 cells and s_3 one, and
	// the readings do not change.
	tape = baseline.NewJM(1, 2, 0)
	tape.Begin(3, nil, true)
	for s := 1; s <= 3; s++ {
		tape.Forward(s, a[s-1], v[s-1], r)
	}
	if tape.Height(2) != 2 || tape.Height(3) != 1 {
		t.Errorf("trimmed heights %d, %d, want 2, 1", tape.Height(2), tape.Height(3))
	}
	blNear(t, "trimmed r_3", r, []float64{0.451, 1.102})
}

// TestJMTrim checks on random actions that the trimmed tape reads exactly
// what the whole stack reads, with and without a depth limit.
func TestJMTrim(t *testing.T) {
	const batch, m, steps = 3, 2, 13
	rng := rand.New(rand.NewPCG(2, 2))
	a := make([][]float64, steps)
	v := make([][]float64, steps)
	for s := range a {
		a[s] = make([]float64, 3*batch)
		for b := 0; b < batch; b++ {
			x, y := rng.Float64(), rng.Float64()
			lo, hi := min(x, y), max(x, y)
			copy(a[s][3*b:], []float64{lo, hi - lo, 1 - hi})
		}
		v[s] = blDense(rng, 1, batch, m).Float64s()
	}
	for _, depth := range []int{0, 3} {
		whole, trimmed := baseline.NewJM(batch, m, depth), baseline.NewJM(batch, m, depth)
		whole.Begin(steps, nil, false)
		trimmed.Begin(steps, nil, true)
		r1, r2 := make([]float64, batch*m), make([]float64, batch*m)
		for s := 1; s <= steps; s++ {
			whole.Forward(s, a[s-1], v[s-1], r1)
			trimmed.Forward(s, a[s-1], v[s-1], r2)
			for i := range r1 {
				if r1[i] != r2[i] {
					t.Fatalf("depth %d step %d: whole %v trimmed %v", depth, s, r1, r2)
				}
			}
		}
		if depth == 0 && (whole.Height(steps) != steps || trimmed.Height(steps) != 1 || trimmed.Height(steps/2) != steps/2) {
			t.Errorf("heights %d, %d, %d", whole.Height(steps), trimmed.Height(steps), trimmed.Height(steps/2))
		}
	}
}

// TestJMLayerByHand checks the Actions layer's wiring: with zero weights
// the actions are softmax(b_a) and v = σ(b_v). With b_a = (ln 6, ln 3,
// ln 1), a = (0.6, 0.3, 0.1), so r_1 = 0.6·v and r_2 = 0.6·v + 0.3·0.6·v
// = 0.78·v.
func TestJMLayerByHand(t *testing.T) {
	s, err := stacks.NewJM("jm", 2, 2, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	ps := s.Params()
	copy(ps[1].Data(), []float64{math.Log(6), math.Log(3), 0})
	copy(ps[3].Data(), []float64{0.3, -1.2})
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	v := []float64{sig(0.3), sig(-1.2)}
	g := G.NewGraph()
	inst, err := s.Bind(g, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	h := blInput(g, "h", blDense(rand.New(rand.NewPCG(1, 1)), 1, 1, 2))
	r1, _ := inst.Step(1, h)
	r2, _ := inst.Step(2, h)
	blRun(t, g)
	blNear(t, "r_1", r1.Value().Data().([]float64), []float64{0.6 * v[0], 0.6 * v[1]})
	blNear(t, "r_2", r2.Value().Data().([]float64), []float64{0.78 * v[0], 0.78 * v[1]})
}

func TestJMGradients(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hidden, m  int
		pushHidden bool
		depth      int
		steps      int
		feedback   bool
	}{
		{"learned", 3, 2, false, 0, 6, false},
		{"learned feedback", 3, 2, false, 0, 6, true},
		{"push hidden", 3, 3, true, 0, 6, false},
		{"push hidden feedback", 3, 3, true, 0, 6, true},
		{"depth limit 2", 3, 2, false, 2, 7, true},
		{"push hidden depth limit 1", 3, 3, true, 1, 5, true},
		{"one step", 3, 2, false, 0, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.steps), uint64(tc.depth)))
			s, err := stacks.NewJM("jm", tc.hidden, tc.m, tc.pushHidden, tc.depth)
			if err != nil {
				t.Fatal(err)
			}
			s.Scheme = param.Scheme{Uniform: 1}
			s.Init(rng)
			blCheck(t, blBuild(t, s, rng, 2, tc.hidden, tc.steps, tc.feedback))
		})
	}
}

func TestJMParams(t *testing.T) {
	for _, c := range []struct {
		hidden, m int
		push      bool
	}{{20, 2, false}, {20, 40, false}, {256, 22, false}, {20, 20, true}, {247, 247, true}} {
		s, err := stacks.NewJM("jm", c.hidden, c.m, c.push, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := (c.hidden + 1) * 3
		if !c.push {
			want += (c.hidden + 1) * c.m
		}
		if got := param.Count(s.Params()); got != want {
			t.Errorf("%+v: %d parameters, want %d", c, got, want)
		}
	}
	for _, c := range []struct {
		hidden, m int
		push      bool
		depth     int
	}{{0, 2, false, 0}, {3, 0, false, 0}, {3, 2, true, 0}, {3, 3, false, -1}} {
		if _, err := stacks.NewJM("jm", c.hidden, c.m, c.push, c.depth); err == nil {
			t.Errorf("NewJM(%+v) gave no error", c)
		}
	}
}

// TestJMCarry checks that a depth-limited stack run as two chunks of one
// graph, carrying the stack between the runs, reads exactly what it reads
// in one run of a longer graph, and that ResetCarry starts afresh.
func TestJMCarry(t *testing.T) {
	const batch, hidden, chunk = 2, 3, 4
	rng := rand.New(rand.NewPCG(9, 9))
	s, _ := stacks.NewJM("jm", hidden, 2, false, 3)
	s.Scheme = param.Scheme{Uniform: 1}
	s.Init(rng)
	hs := make([][]float64, 2*chunk)
	for i := range hs {
		hs[i] = blDense(rng, 1, batch, hidden).Float64s()
	}
	// build returns a graph of n steps, its instance, its h nodes and its
	// readings.
	build := func(n int) (*G.ExprGraph, stacks.Instance, []*G.Node, []*G.Node) {
		g := G.NewGraph()
		inst, err := s.Bind(g, batch, n)
		if err != nil {
			t.Fatal(err)
		}
		var hn, rs []*G.Node
		for k := 1; k <= n; k++ {
			h := blInput(g, fmt.Sprint("h", k), blDense(rng, 0, batch, hidden))
			r, err := inst.Step(k, h)
			if err != nil {
				t.Fatal(err)
			}
			hn, rs = append(hn, h), append(rs, r)
		}
		return g, inst, hn, rs
	}
	values := func(ns []*G.Node) [][]float64 {
		var out [][]float64
		for _, n := range ns {
			out = append(out, append([]float64(nil), n.Value().Data().([]float64)...))
		}
		return out
	}
	g, _, hn, rs := build(2 * chunk)
	for k, h := range hn {
		copy(h.Value().Data().([]float64), hs[k])
	}
	blRun(t, g)
	whole := values(rs)

	var inst stacks.Instance
	g, inst, hn, rs = build(chunk)
	c, ok := inst.(interface {
		Carry()
		ResetCarry()
	})
	if !ok {
		t.Fatal("a depth-limited JM instance is not a carrier")
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	runChunk := func(from int) [][]float64 {
		for k, h := range hn {
			copy(h.Value().Data().([]float64), hs[from+k])
		}
		m.Reset()
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		return values(rs)
	}
	first := runChunk(0)
	c.Carry()
	second := runChunk(chunk)
	for k := 0; k < chunk; k++ {
		blNear(t, fmt.Sprint("first chunk reading ", k+1), first[k], whole[k])
		blNear(t, fmt.Sprint("second chunk reading ", chunk+k+1), second[k], whole[chunk+k])
	}
	blNear(t, "carried r_0", inst.Initial().Value().Data().([]float64), whole[chunk-1])
	c.ResetCarry()
	again := runChunk(0)
	blNear(t, "after reset", again[chunk-1], whole[chunk-1])
}

func BenchmarkJM60(b *testing.B) {
	s, _ := stacks.NewJM("jm", 20, 20, false, 0)
	blBench(b, s)
}

func BenchmarkJM60PushHidden(b *testing.B) {
	s, _ := stacks.NewJM("jm", 20, 20, true, 0)
	blBench(b, s)
}
