package nskernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A state rebuilt from its log values (LogValues, StateFromLog) continues
// the run as the state itself does, for both bottoms and readings, with
// weights spanning hundreds of nats.
func TestStateFromLogContinues(t *testing.T) {
	for _, c := range []Config{
		{States: 2, Symbols: 2, Window: 3},
		{States: 2, Symbols: 3, Window: 5, Fixed: true},
		{States: 1, Symbols: 2, Window: 4, StateReading: true},
		{States: 3, Symbols: 2, Window: 6, Fixed: true, StateReading: true},
	} {
		for _, scale := range []float64{1, 300} {
			const batch, first, next = 3, 9, 7
			rng := rand.New(rand.NewPCG(uint64(c.States*10+c.Symbols), uint64(scale)))
			deltas := func(n int) [][]float64 {
				out := make([][]float64, n)
				for i := range out {
					out[i] = make([]float64, batch*c.NumActions())
					for j := range out[i] {
						out[i][j] = scale * rng.NormFloat64()
					}
				}
				return out
			}
			d1, d2 := deltas(first), deltas(next)
			a := NewTape(c, batch, first+next)
			a.Run(d1)
			st := a.State()
			la, lg := st.LogValues()
			re, err := StateFromLog(c, batch, st.Positions(), la, lg, nil)
			if err != nil {
				t.Fatal(err)
			}
			la2, lg2 := re.LogValues()
			for n := range la {
				for i := range la[n] {
					if !sameLog(la[n][i], la2[n][i]) {
						t.Fatalf("%+v: log α[%d][%d] %v rebuilt as %v", c, n, i, la[n][i], la2[n][i])
					}
				}
				for i := range lg[n] {
					if !sameLog(lg[n][i], lg2[n][i]) {
						t.Fatalf("%+v: log γ[%d][%d] %v rebuilt as %v", c, n, i, lg[n][i], lg2[n][i])
					}
				}
			}
			run := func(from *State) [][]float64 {
				tp := NewTape(c, batch, next)
				if err := tp.Begin(from); err != nil {
					t.Fatal(err)
				}
				var out [][]float64
				for _, d := range d2 {
					r := make([]float64, batch*c.ReadingSize())
					tp.Step(d, r)
					out = append(out, r)
				}
				return out
			}
			want, got := run(st), run(re)
			for s := range want {
				for i := range want[s] {
					if math.Abs(got[s][i]-want[s][i]) > 1e-12 {
						t.Fatalf("%+v scale %v: step %d reading[%d] %v from the rebuilt state, %v from the state", c, scale, s+1, i, got[s][i], want[s][i])
					}
				}
			}
		}
	}
}

func sameLog(a, b float64) bool {
	if math.IsInf(a, -1) || math.IsInf(b, -1) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(a))
}

// StateFromLog refuses weights that do not fit its configuration.
func TestStateFromLogRefuses(t *testing.T) {
	c := Config{States: 1, Symbols: 2, Window: 3}
	ok := [][]float64{make([]float64, 2*2)}
	okG := [][]float64{make([]float64, 1*4)}
	if _, err := StateFromLog(c, 1, 2, ok, okG, nil); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() error{
		"np past the window": func() error { _, err := StateFromLog(c, 1, 4, ok, okG, nil); return err },
		"unlimited":          func() error { _, err := StateFromLog(Config{States: 1, Symbols: 2}, 1, 2, ok, okG, nil); return err },
		"short α":            func() error { _, err := StateFromLog(c, 1, 2, [][]float64{make([]float64, 3)}, okG, nil); return err },
		"NaN": func() error {
			_, err := StateFromLog(c, 1, 2, [][]float64{{0, math.NaN(), 0, 0}}, okG, nil)
			return err
		},
		"batch": func() error { _, err := StateFromLog(c, 2, 2, ok, okG, nil); return err },
	} {
		if f() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A vector stack's state rebuilt from its log values and vectors continues
// the run as the state itself does.
func TestStateFromLogContinuesVector(t *testing.T) {
	for _, c := range []Config{
		{States: 2, Symbols: 2, Window: 3, Vector: 2},
		{States: 1, Symbols: 3, Window: 5, Fixed: true, Vector: 3},
	} {
		const batch, first, next = 2, 8, 6
		rng := rand.New(rand.NewPCG(uint64(c.Vector), 7))
		step := func(tp *Tape) []float64 {
			d := make([]float64, batch*c.NumActions())
			for j := range d {
				d[j] = rng.NormFloat64()
			}
			v := make([]float64, batch*c.Vector)
			for j := range v {
				v[j] = rng.Float64()
			}
			r := make([]float64, batch*c.ReadingSize())
			tp.StepVector(d, v, r)
			return r
		}
		bottom := make([]float64, c.Vector)
		for j := range bottom {
			bottom[j] = 0.5 + 0.1*float64(j)
		}
		a := NewTape(c, batch, first)
		if err := a.BeginVector(nil, bottom); err != nil {
			t.Fatal(err)
		}
		for range first {
			step(a)
		}
		st := a.State()
		la, lg := st.LogValues()
		re, err := StateFromLog(c, batch, st.Positions(), la, lg, st.Vectors())
		if err != nil {
			t.Fatal(err)
		}
		seed := rng.Uint64()
		run := func(from *State) [][]float64 {
			rng = rand.New(rand.NewPCG(seed, 1))
			tp := NewTape(c, batch, next)
			if err := tp.BeginVector(from, bottom); err != nil {
				t.Fatal(err)
			}
			var out [][]float64
			for range next {
				out = append(out, step(tp))
			}
			return out
		}
		want, got := run(st), run(re)
		for s := range want {
			for i := range want[s] {
				if math.Abs(got[s][i]-want[s][i]) > 1e-12 {
					t.Fatalf("%+v: step %d reading[%d] %v from the rebuilt state, %v from the state", c, s+1, i, got[s][i], want[s][i])
				}
			}
		}
	}
}
