package nskernel

import "github.com/nsrnn/nsrnn/semiring"

// The decoding: the program (Program) in the max-plus semiring, with
// back-pointers. It finds a run of highest weight; stacks.Viterbi is its
// interface.

// Transition kinds of a decoded run, in the order of the action layout.
const (
	TransPush = iota
	TransReplace
	TransPop
)

// Transition is one step of a decoded run: its kind (TransPush,
// TransReplace or TransPop), the state it goes to and the symbol it pushes
// or writes over the top (−1 for a pop).
type Transition struct{ Kind, State, Symbol int }

// Viterbi returns a run of highest weight of one sequence whose step t
// log-weights (NumActions, external layout, used as they are) are
// rows[t−1], under c's bottom behaviour and window (States, Symbols, Fixed
// and Window; the reading is irrelevant), ending in any configuration: the
// max-plus instance of the program whose sum-product instance Tape runs.
// Every maximization keeps the first of its best candidates: the final
// configurations (r,y), α's previous configurations, a replace's previous
// configuration and a pop's popped configuration by increasing index
// r·|Γ|+y; α's push time of the top from earliest to latest; for γ,
// replace before pop, and a pop's split time from earliest to latest, then
// its intermediate state. A run of log-weight −∞ is returned only when no
// run has a finite one. The caller checks c and the rows (none NaN or +∞).
func Viterbi(c Config, rows [][]float64) []Transition {
	if len(rows) == 0 {
		return []Transition{}
	}
	p := NewProgram[semiring.Best](c, semiring.MaxPlus{}, len(rows))
	lifted := make([]semiring.Best, len(rows[0]))
	for _, ld := range rows {
		for i, w := range ld {
			lifted[i] = semiring.Best{W: w, OK: true}
		}
		p.Step(lifted)
	}
	ops, _ := p.Trace()
	return ops
}
