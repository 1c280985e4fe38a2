package data

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Grammar names a definition of the task grammars: the grammars as stated in
// the paper, or the grammars that the authors' released code samples from,
// which differ for some tasks (see "Task definitions" in the package
// documentation). It implements flag.Value. The zero value is treated as
// GrammarPaper.
type Grammar string

// The task definitions.
const (
	// GrammarPaper is the grammars as stated in the paper, the default.
	GrammarPaper Grammar = "paper"
	// GrammarReleased is the grammars after the ε-rule and unary-rule
	// removal of the authors' released sampler (see
	// PCFG.RemoveEpsilonAndUnaryRules).
	GrammarReleased Grammar = "released"
)

// GrammarNames returns the names of the task definitions, the default
// ("paper") first.
func GrammarNames() []string { return []string{string(GrammarPaper), string(GrammarReleased)} }

// ParseGrammar returns the task definition named s. The error for an
// unknown name lists the valid names.
func ParseGrammar(s string) (Grammar, error) {
	switch g := Grammar(s); g {
	case GrammarPaper, GrammarReleased:
		return g, nil
	}
	return "", fmt.Errorf("data: unknown grammar %q (valid grammars: %s)", s, strings.Join(GrammarNames(), ", "))
}

// String returns the name of the definition; the zero value is "paper".
func (g Grammar) String() string {
	if g == "" {
		return string(GrammarPaper)
	}
	return string(g)
}

// Set sets g to the definition named s, for use as a flag.Value. It leaves g
// unchanged and returns an error if s is not a valid name.
func (g *Grammar) Set(s string) error {
	v, err := ParseGrammar(s)
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// orDefault returns g, or GrammarPaper for the zero value, or an error for
// an invalid value.
func (g Grammar) orDefault() (Grammar, error) {
	if g == "" {
		return GrammarPaper, nil
	}
	return ParseGrammar(string(g))
}

// TaskFor returns the task with the given name and the paper's parameters
// under the task definition g: TaskWith(name, nil, g). NewTask(name) is
// TaskFor(name, GrammarPaper). The error for an unknown name lists the
// valid names, and so does the error for an unknown grammar.
func TaskFor(name string, g Grammar) (*Task, error) { return TaskWith(name, nil, g) }

// Limits on the ε- and unary-rule removal, which can grow a grammar
// exponentially in the number of occurrences of a nonterminal in one rule
// and, for unary or nullable cycles, run until probabilities underflow.
const (
	maxRemovals = 100000
	maxRules    = 1 << 16
)

// RemoveEpsilonAndUnaryRules returns the grammar produced from g by the
// authors' released sampler (pcfg_tools.py in DuSell & Chiang's code), and
// kept, the probability under g of the derivations that the result keeps
// relative to all of g's finite derivations, for a consistent g (one whose
// derivations end with probability 1); for another it is the product of
// the removed root rules' complements, not that ratio.
//
// The transformation first removes every ε rule, then every unary rule
// A → B (B a nonterminal), one at a time, always the first such rule in the
// current rule list. Removing a rule A → α with probability p replaces every
// other rule that has A on its right-hand side by its 2^k variants, k the
// number of occurrences of A, in which each occurrence is either kept
// (factor 1 - p) or replaced by α (factor p); the remaining rules of A are
// then divided by 1 - p. Rules with the same sides are merged and rules with
// probability 0 dropped.
//
// Each removal keeps the distribution of every nonterminal where it occurs
// on a right-hand side, but at the root it conditions the start symbol on
// not taking the removed rule: the derivations that do are lost, and the
// rest are renormalized. So the result's distribution over strings is g's
// conditioned on the kept derivations, which have total probability kept.
// For the task grammars, the lost derivations are those of the empty string
// and those whose root rule is unary once its children that derive ε are
// dropped. If no removed rule had the start symbol on its left, kept is 1
// and the result defines exactly g's distribution.
//
// The result has no ε rules and no unary rules. It is an error if no rules
// are left for the start symbol (g generates only ε, or only through unary
// chains at the root) or if the grammar grows beyond 65,536 rules or 100,000
// removals.
func (g *PCFG) RemoveEpsilonAndUnaryRules() (h *PCFG, kept float64, err error) {
	isNT := func(s string) bool { _, ok := g.ntIndex[s]; return ok }
	rules := mergeRules(g.Rules())
	kept = 1
	removals := 0
	for _, pass := range []struct {
		what string
		is   func(Rule) bool
	}{
		{"ε", func(r Rule) bool { return len(r.RHS) == 0 }},
		{"unary", func(r Rule) bool { return len(r.RHS) == 1 && isNT(r.RHS[0]) }},
	} {
		for {
			i := slices.IndexFunc(rules, pass.is)
			if i < 0 {
				break
			}
			if removals++; removals > maxRemovals {
				return nil, 0, fmt.Errorf("data: removing %s rules did not finish after %d removals", pass.what, maxRemovals)
			}
			if rules[i].LHS == g.start {
				var total float64
				for _, r := range rules {
					if r.LHS == g.start {
						total += r.Prob
					}
				}
				kept *= 1 - rules[i].Prob/total
			}
			if rules, err = removeRule(rules, i); err != nil {
				return nil, 0, err
			}
		}
	}
	if !slices.ContainsFunc(rules, func(r Rule) bool { return r.LHS == g.start }) {
		return nil, 0, fmt.Errorf("data: removing ε and unary rules leaves no rules for the start symbol %q", g.start)
	}
	// Renormalize away the rounding of the repeated divisions.
	sums := map[string]float64{}
	for _, r := range rules {
		sums[r.LHS] += r.Prob
	}
	for i := range rules {
		rules[i].Prob /= sums[rules[i].LHS]
	}
	h, err = NewPCFG(g.start, g.terms, rules)
	if err != nil {
		return nil, 0, err
	}
	return h, kept, nil
}

// removeRule returns rules without rules[i] = A → α: every other rule with
// A on its right-hand side is replaced by its variants with each occurrence
// of A kept or replaced by α, and the remaining rules of A are renormalized.
func removeRule(rules []Rule, i int) ([]Rule, error) {
	rm := rules[i]
	a := rm.LHS
	// q is the probability of A's other rules, 1 - p up to rounding.
	var q float64
	for j, r := range rules {
		if j != i && r.LHS == a {
			q += r.Prob
		}
	}
	p := rm.Prob
	out := make([]Rule, 0, len(rules))
	var occ []int
	for j, r := range rules {
		if j == i {
			continue
		}
		occ = occ[:0]
		for k, s := range r.RHS {
			if s == a {
				occ = append(occ, k)
			}
		}
		if len(occ) > 16 {
			return nil, fmt.Errorf("data: rule %v has too many occurrences of %q to remove %v", r, a, rm)
		}
		for mask := 0; mask < 1<<len(occ); mask++ {
			prob := r.Prob
			rhs := make([]string, 0, len(r.RHS)+len(occ)*len(rm.RHS))
			next := 0
			for bit, k := range occ {
				rhs = append(rhs, r.RHS[next:k]...)
				if mask&(1<<bit) != 0 {
					rhs = append(rhs, rm.RHS...)
					prob *= p
				} else {
					rhs = append(rhs, a)
					prob *= q
				}
				next = k + 1
			}
			rhs = append(rhs, r.RHS[next:]...)
			if r.LHS == a {
				// q > 0, since r is one of A's other rules and has
				// positive probability.
				prob /= q
			}
			if prob > 0 {
				out = append(out, Rule{LHS: r.LHS, RHS: rhs, Prob: prob})
			}
		}
	}
	out = mergeRules(out)
	if len(out) > maxRules {
		return nil, errors.New("data: removing ε and unary rules makes the grammar too large")
	}
	return out, nil
}

// mergeRules merges rules with the same left- and right-hand sides into the
// first of them, adding their probabilities, and drops rules with
// probability 0.
func mergeRules(rules []Rule) []Rule {
	index := make(map[string]int, len(rules))
	out := rules[:0:0]
	for _, r := range rules {
		if !(r.Prob > 0) {
			continue
		}
		key := fmt.Sprintf("%q %q", r.LHS, r.RHS)
		if j, ok := index[key]; ok {
			out[j].Prob += r.Prob
			continue
		}
		index[key] = len(out)
		out = append(out, r)
	}
	return out
}
