package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Language is a task's distribution over strings given their length: what
// sampling, the valid lengths, the source distribution and the lower bound
// are computed from. *PCFG is one (p(w | n) = p_G(w)/p_G(|w| = n)); the
// tasks of the authors' 2023 release are uniform languages, in which the
// N(n) strings of each length n are equally likely.
//
// Strings are []int, each element an index into Terminals. Implementations
// are immutable and safe for concurrent use.
type Language interface {
	// Terminals returns a copy of the alphabet, in index order.
	Terminals() []string
	// ValidLengths returns, in increasing order, the lengths in
	// [minLen, maxLen] that strings of the language have. It returns an
	// error for a range outside [0, MaxLength] or with minLen > maxLen.
	ValidLengths(minLen, maxLen int) ([]int, error)
	// Sample returns a string drawn from the distribution conditioned on
	// length n. It returns an error if no string has length n or rng is
	// nil.
	Sample(n int, rng *rand.Rand) ([]int, error)
	// LogProbGivenLength returns log p(w | |w|), which is -Inf if w is not
	// in the language. It returns an error if w contains an index that is
	// not a terminal or is longer than MaxLength.
	LogProbGivenLength(w []int) (float64, error)
}

// uniform is a language in which the N(n) strings of each length n are
// equally likely: p(w | n) = 1/N(n).
type uniform struct {
	terms []string
	// logCount returns log N(n) for n ≥ 0, -Inf if N(n) = 0.
	logCount func(n int) float64
	// draw returns one of the N(n) strings of length n, each with
	// probability 1/N(n); it is called only when N(n) > 0.
	draw func(n int, rng *rand.Rand) []int
	// member reports whether w, whose indices are terminals, is in the
	// language.
	member func(w []int) bool
}

func (u *uniform) Terminals() []string { return slices.Clone(u.terms) }

func (u *uniform) ValidLengths(minLen, maxLen int) ([]int, error) {
	if err := checkRange(minLen, maxLen); err != nil {
		return nil, err
	}
	var ns []int
	for n := minLen; n <= maxLen; n++ {
		if !math.IsInf(u.logCount(n), -1) {
			ns = append(ns, n)
		}
	}
	return ns, nil
}

func (u *uniform) Sample(n int, rng *rand.Rand) ([]int, error) {
	if err := checkLength(n); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("data: nil random source")
	}
	if math.IsInf(u.logCount(n), -1) {
		return nil, fmt.Errorf("data: the language has no strings of length %d", n)
	}
	return u.draw(n, rng), nil
}

func (u *uniform) LogProbGivenLength(w []int) (float64, error) {
	if err := checkLength(len(w)); err != nil {
		return 0, err
	}
	for i, x := range w {
		if x < 0 || x >= len(u.terms) {
			return 0, fmt.Errorf("data: symbol %d at position %d is not a terminal index in [0, %d)", x, i, len(u.terms))
		}
	}
	if !u.member(w) {
		return math.Inf(-1), nil
	}
	return -u.logCount(len(w)), nil
}

// sectioned returns the uniform language of the strings layout(w) for
// w ∈ {0, …, m−1}^k, k ≥ 0, whose length is sections·k + markers: the
// valid lengths are those, N(n) = m^k, and a string is drawn by drawing w
// uniformly. layout must be one-to-one, return a string of that length
// over terms, and begin with w itself, which is how membership is decided:
// w is in the language when its first k symbols are below m and layout of
// them gives w back. m must be at least 1.
func sectioned(terms []string, m, sections, markers int, layout func(w []int) []int) *uniform {
	k := func(n int) (int, bool) {
		if n < markers || (n-markers)%sections != 0 {
			return 0, false
		}
		return (n - markers) / sections, true
	}
	return &uniform{
		terms: terms,
		logCount: func(n int) float64 {
			k, ok := k(n)
			if !ok {
				return math.Inf(-1)
			}
			return float64(k) * math.Log(float64(m))
		},
		draw: func(n int, rng *rand.Rand) []int {
			k, _ := k(n)
			w := make([]int, k)
			if m > 1 {
				for i := range w {
					w[i] = rng.IntN(m)
				}
			}
			return layout(w)
		},
		member: func(s []int) bool {
			k, ok := k(len(s))
			if !ok || slices.ContainsFunc(s[:k], func(x int) bool { return x >= m }) {
				return false
			}
			return slices.Equal(layout(s[:k]), s)
		},
	}
}

// reversed returns a reversed copy of w.
func reversed(w []int) []int {
	r := slices.Clone(w)
	slices.Reverse(r)
	return r
}

// repeat returns n copies of x.
func repeat(x, n int) []int { return slices.Repeat([]int{x}, n) }

// concat returns the concatenation of the strings.
func concat(ws ...[]int) []int { return slices.Concat(ws...) }
