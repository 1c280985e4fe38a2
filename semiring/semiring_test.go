package semiring_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/semiring"
)

// laws checks the semiring axioms on random values: Zero and One are the
// identities of Plus and Times, Zero absorbs, Plus and Times associate,
// Plus commutes, Times distributes over Plus, and AddProduct is Plus of
// Times; eq compares values (to rounding for floating point).
func laws[V any](t *testing.T, name string, s semiring.Semiring[V], draw func(*rand.Rand) V, eq func(a, b V) bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	plus := func(a, b V) V { s.Plus(&a, b); return a }
	for range 200 {
		a, b, c := draw(rng), draw(rng), draw(rng)
		for _, law := range []struct {
			what      string
			got, want V
		}{
			{"a + 0 = a", plus(a, s.Zero()), a},
			{"0 + a = a", plus(s.Zero(), a), a},
			{"a·1 = a", s.Times(a, s.One()), a},
			{"1·a = a", s.Times(s.One(), a), a},
			{"a·0 = 0", s.Times(a, s.Zero()), s.Zero()},
			{"0·a = 0", s.Times(s.Zero(), a), s.Zero()},
			{"a + b = b + a", plus(a, b), plus(b, a)},
			{"(a + b) + c = a + (b + c)", plus(plus(a, b), c), plus(a, plus(b, c))},
			{"(a·b)·c = a·(b·c)", s.Times(s.Times(a, b), c), s.Times(a, s.Times(b, c))},
			{"a·(b + c) = a·b + a·c", s.Times(a, plus(b, c)), plus(s.Times(a, b), s.Times(a, c))},
			{"(a + b)·c = a·c + b·c", s.Times(plus(a, b), c), plus(s.Times(a, c), s.Times(b, c))},
		} {
			if !eq(law.got, law.want) {
				t.Fatalf("%s: %s fails for a = %v, b = %v, c = %v: %v against %v", name, law.what, a, b, c, law.got, law.want)
			}
		}
		acc1, acc2 := c, c
		r1 := s.AddProduct(&acc1, a, b)
		r2 := s.Plus(&acc2, s.Times(a, b))
		if !eq(acc1, acc2) || r1 != r2 {
			t.Fatalf("%s: AddProduct(%v, %v, %v) = %v (%v), Plus of Times %v (%v)", name, c, a, b, acc1, r1, acc2, r2)
		}
	}
}

func near(a, b float64) bool {
	if math.IsInf(a, -1) || math.IsInf(b, -1) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestLaws(t *testing.T) {
	laws[float64](t, "LogSum", semiring.LogSum{}, func(r *rand.Rand) float64 {
		if r.IntN(6) == 0 {
			return math.Inf(-1)
		}
		return 3 * r.NormFloat64()
	}, near)
	laws[semiring.Best](t, "MaxPlus", semiring.MaxPlus{}, func(r *rand.Rand) semiring.Best {
		switch r.IntN(6) {
		case 0:
			return semiring.Best{}
		case 1:
			return semiring.Best{W: math.Inf(-1), OK: true}
		}
		return semiring.Best{W: float64(r.IntN(7) - 3), OK: true} // integers: ties, and exact sums
	}, func(a, b semiring.Best) bool { return a.OK == b.OK && (!a.OK || a.W == b.W) })
	laws[float64](t, "Counting", semiring.Counting{}, func(r *rand.Rand) float64 { return float64(r.IntN(5)) },
		func(a, b float64) bool { return a == b })
}

// MaxPlus selects: Plus reports a strictly better run, keeps the first of
// equal ones, and a run of weight −∞ is still a run.
func TestMaxPlusSelects(t *testing.T) {
	s := semiring.MaxPlus{}
	acc := s.Zero()
	for _, c := range []struct {
		v        semiring.Best
		replaced bool
		want     float64
	}{
		{semiring.Best{}, false, 0},
		{semiring.Best{W: math.Inf(-1), OK: true}, true, math.Inf(-1)},
		{semiring.Best{W: -2, OK: true}, true, -2},
		{semiring.Best{W: -2, OK: true}, false, -2},
		{semiring.Best{W: -3, OK: true}, false, -2},
		{semiring.Best{W: 1, OK: true}, true, 1},
	} {
		if got := s.Plus(&acc, c.v); got != c.replaced || (acc.OK && acc.W != c.want) {
			t.Errorf("Plus(%+v) = %v, sum %+v; want %v, %v", c.v, got, acc, c.replaced, c.want)
		}
	}
	if s.Plus(new(semiring.Best), semiring.Best{}) {
		t.Error("no run replaced no run")
	}
}
