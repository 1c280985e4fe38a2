package semiring

import "math"

// Semiring is a semiring over values of type V: the weights of runs and
// the operations that combine them. Zero is the value of no run (the
// identity of Plus, absorbing for Times), One that of the empty run (the
// identity of Times). Plus adds v
// into *acc; a selective semiring, whose sum is one of its terms (max-plus
// and its relatives), reports whether v replaced *acc, so that the
// program records where the sum came from (a back-pointer); any other
// reports false.
//
// AddProduct is Plus(acc, Times(a, b)), the program's inner operation, in
// one call (for speed: the program calls it for every term).
type Semiring[V any] interface {
	Zero() V
	One() V
	Times(a, b V) V
	Plus(acc *V, v V) bool
	AddProduct(acc *V, a, b V) bool
}

// LogSum is the sum-product semiring of probabilities in log space: Plus
// is log(eᵃ + eᵇ), Times is +, Zero is −∞ and One is 0. It is the
// semiring of the stacks' readings.
type LogSum struct{}

// Zero is −∞.
func (LogSum) Zero() float64 { return math.Inf(-1) }

// AddProduct is Plus(acc, a+b).
func (s LogSum) AddProduct(acc *float64, a, b float64) bool { return s.Plus(acc, a+b) }

// One is 0.
func (LogSum) One() float64 { return 0 }

// Times is a + b.
func (LogSum) Times(a, b float64) float64 { return a + b }

// Plus sets *acc to log(e^*acc + eᵛ); it never selects.
func (LogSum) Plus(acc *float64, v float64) bool {
	a := *acc
	switch {
	case v == math.Inf(-1):
	case a == math.Inf(-1):
		*acc = v
	case a >= v:
		*acc = a + math.Log1p(math.Exp(v-a))
	default:
		*acc = v + math.Log1p(math.Exp(a-v))
	}
	return false
}

// Best is a value of MaxPlus: the log-weight W of a best run, and whether
// there is a run at all (a run may have weight −∞).
type Best struct {
	W  float64
	OK bool
}

// MaxPlus is the max-plus (Viterbi) semiring over Best: Plus keeps the
// first of the best runs, Times adds weights. The dynamic program in it,
// with back-pointers, finds a run of highest weight (stacks.Viterbi).
type MaxPlus struct{}

// Zero is no run.
func (MaxPlus) Zero() Best { return Best{} }

// AddProduct is Plus(acc, Times(a, b)).
func (MaxPlus) AddProduct(acc *Best, a, b Best) bool {
	if !a.OK || !b.OK {
		return false
	}
	if w := a.W + b.W; !acc.OK || w > acc.W {
		*acc = Best{w, true}
		return true
	}
	return false
}

// One is the empty run, of weight 0.
func (MaxPlus) One() Best { return Best{0, true} }

// Times is the run followed by the other: the sum of the weights.
func (MaxPlus) Times(a, b Best) Best { return Best{a.W + b.W, a.OK && b.OK} }

// Plus keeps *acc unless v is a run and *acc none or a worse one.
func (MaxPlus) Plus(acc *Best, v Best) bool {
	if !v.OK || acc.OK && v.W <= acc.W {
		return false
	}
	*acc = v
	return true
}

// Counting is the counting semiring of the real numbers: with every
// action's value 1 (or 0 for a forbidden one), the program counts runs.
type Counting struct{}

// Zero is 0.
func (Counting) Zero() float64 { return 0 }

// AddProduct adds a·b into *acc.
func (Counting) AddProduct(acc *float64, a, b float64) bool {
	*acc += a * b
	return false
}

// One is 1.
func (Counting) One() float64 { return 1 }

// Times is a·b.
func (Counting) Times(a, b float64) float64 { return a * b }

// Plus adds v into *acc; it never selects.
func (Counting) Plus(acc *float64, v float64) bool {
	*acc += v
	return false
}
