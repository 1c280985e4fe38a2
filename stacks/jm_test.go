package stacks_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/internal/baseline"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
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
	near(t, "s_1", tape.Stack(1, 0), []float64{0.7, 1.4}, 1e-12)
	near(t, "r_1", r, []float64{0.7, 1.4}, 1e-12)
	tape.Forward(2, a[1], v[1], r)
	// s_2[1] = 0.5·v2 + 0.3·s_1[1] = (1.71, 0.42); s_2[2] = 0.5·s_1[1].
	near(t, "s_2", tape.Stack(2, 0), []float64{1.71, 0.42, 0.35, 0.7}, 1e-12)
	near(t, "r_2", r, []float64{1.71, 0.42}, 1e-12)
	tape.Forward(3, a[2], v[2], r)
	// s_3[1] = 0.1·v3 + 0.1·s_2[1] + 0.8·s_2[2] = (0.451, 1.102);
	// s_3[2] = 0.1·s_2[1] + 0.1·s_2[2] = (0.206, 0.112);
	// s_3[3] = 0.1·s_2[2] = (0.035, 0.07).
	near(t, "s_3", tape.Stack(3, 0), []float64{0.451, 1.102, 0.206, 0.112, 0.035, 0.07}, 1e-12)
	near(t, "r_3", r, []float64{0.451, 1.102}, 1e-12)

	// Depth limit 1: s_2 = [(1.71, 0.42)], the pushed-down cell is lost;
	// s_3[1] = 0.1·v3 + 0.1·s_2[1] + 0.8·0 = (0.171, 0.542).
	tape = baseline.NewJM(1, 2, 1)
	tape.Begin(3, nil, false)
	tape.Forward(1, a[0], v[0], r)
	tape.Forward(2, a[1], v[1], r)
	near(t, "limited s_2", tape.Stack(2, 0), []float64{1.71, 0.42}, 1e-12)
	tape.Forward(3, a[2], v[2], r)
	near(t, "limited r_3", r, []float64{0.171, 0.542}, 1e-12)

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
	near(t, "trimmed r_3", r, []float64{0.451, 1.102}, 1e-12)
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
		v[s] = dense(rng, 1, batch, m).Float64s()
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
// = 0.78·v. Pushing the hidden state instead, v = h_t.
func TestJMLayerByHand(t *testing.T) {
	for _, push := range []bool{false, true} {
		s, err := stacks.NewJM("jm", 2, 2, push, 0)
		if err != nil {
			t.Fatal(err)
		}
		ps := s.Params()
		copy(ps[1].Data(), []float64{math.Log(6), math.Log(3), 0})
		d := stackstest.NewData(rand.New(rand.NewPCG(1, 1)), 1, 2, 2, 2)
		var v []float64
		if push {
			d.X[1] = d.X[0]
			v = d.X[0]
		} else {
			copy(ps[3].Data(), []float64{0.3, -1.2})
			sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
			v = []float64{sig(0.3), sig(-1.2)}
		}
		n := newNet(t, s, d, stackstest.Options{Steps: 2})
		runNet(t, n)
		n.Close()
		near(t, "r_0", n.Instance.Initial().Value().Data().([]float64), []float64{0, 0}, 0)
		nearAll(t, "r", n.Readings(), [][]float64{{0.6 * v[0], 0.6 * v[1]}, {0.78 * v[0], 0.78 * v[1]}}, 1e-12)
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
		if s.Hidden() != c.hidden || s.ReadingSize() != c.m || s.PushHidden() != c.push || s.DepthLimit() != 10 {
			t.Errorf("%+v: hidden %d, reading size %d, push hidden %v, depth limit %d", c, s.Hidden(), s.ReadingSize(), s.PushHidden(), s.DepthLimit())
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

func BenchmarkJM60(b *testing.B) {
	s, _ := stacks.NewJM("jm", 20, 20, false, 0)
	bench(b, s)
}

func BenchmarkJM60PushHidden(b *testing.B) {
	s, _ := stacks.NewJM("jm", 20, 20, true, 0)
	bench(b, s)
}
