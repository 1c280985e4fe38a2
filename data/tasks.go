package data

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The names of the paper's five tasks.
const (
	MarkedReversal   = "marked-reversal"
	UnmarkedReversal = "unmarked-reversal"
	PaddedReversal   = "padded-reversal"
	Dyck             = "dyck"
	HardestCFL       = "hardest-cfl"
)

// The names of the seven tasks of the authors' 2023 release, which are
// not context-free.
const (
	Count3                         = "count-3"
	MarkedCopy                     = "marked-copy"
	UnmarkedCopy                   = "unmarked-copy"
	MarkedReverseAndCopy           = "marked-reverse-and-copy"
	UnmarkedReverseAndCopy         = "unmarked-reverse-and-copy"
	CountAndCopy                   = "count-and-copy"
	UnmarkedCopyDifferentAlphabets = "unmarked-copy-different-alphabets"
)

// The names of the task parameters.
const (
	// SymbolTypes is the number of symbol types of marked and unmarked
	// reversal and of marked reverse-and-copy (the paper's 2).
	SymbolTypes = "symbol-types"
	// BracketTypes is the number of bracket types of Dyck (the paper's
	// 2).
	BracketTypes = "bracket-types"
)

// MaxTypes is the largest number of symbol or bracket types of the
// tasks that take one. The capacity experiment of the 2023 release goes
// up to 200; a grammar's size grows with it, and the time to build it
// with its cube.
const MaxTypes = 1000

// EOS is the name of the end-of-sequence symbol in a task's vocabulary.
const EOS = "EOS"

// The paper's means (the m of Cont(m)) for the task grammars.
const (
	DefaultReversalMean   = 60 // 0 S 0 | 1 S 1 in the three reversal tasks
	DefaultPadMean        = 30 // T_a → a T_a in padded reversal
	DefaultDyckConcatMean = 1  // S → S T in Dyck
	DefaultDyckNestMean   = 39 // T → ( S ) | [ S ] in Dyck
)

// typesParam is a number of symbol or bracket types, 2 by default.
func typesParam(name, what string) TaskParam {
	return TaskParam{Name: name, Usage: "number of " + what, Default: 2, Min: 1, Max: MaxTypes}
}

// taskTable is the table of tasks (AllTasks): the paper's five (its §4
// and appendix B), then the seven of the 2023 release, each uniform over
// the strings of each length. Adding a task is adding an entry here.
var taskTable = []TaskInfo{
	{
		Name: MarkedReversal, Title: "Marked reversal", Group: GroupPaper, States: 2, Symbols: 3,
		Strings: "w # wᴿ, w over {0, 1} (0 … m−1 with --symbol-types m); PCFG",
		Params:  []TaskParam{typesParam(SymbolTypes, "symbol types of w")},
		New: func(p Params) (Language, error) {
			return markedReversalGrammar(DefaultReversalMean, p[SymbolTypes])
		},
	},
	{
		Name: UnmarkedReversal, Title: "Unmarked reversal", Group: GroupPaper, States: 2, Symbols: 3,
		Strings: "w wᴿ, w over {0, 1} (0 … m−1 with --symbol-types m); PCFG",
		Params:  []TaskParam{typesParam(SymbolTypes, "symbol types of w")},
		New: func(p Params) (Language, error) {
			return unmarkedReversalGrammar(DefaultReversalMean, p[SymbolTypes])
		},
	},
	{
		Name: PaddedReversal, Title: "Padded reversal", Group: GroupPaper, States: 3, Symbols: 3,
		Strings: "w aᵖ wᴿ, w over {0, 1}, a ∈ {0, 1}; PCFG",
		New: func(Params) (Language, error) {
			return paddedReversalGrammar(DefaultReversalMean, DefaultPadMean)
		},
	},
	{
		Name: Dyck, Title: "Dyck", Group: GroupPaper, States: 2, Symbols: 3,
		Strings: "balanced strings of ( ) and [ ] (m bracket types with --bracket-types m); PCFG",
		Params:  []TaskParam{typesParam(BracketTypes, "bracket types")},
		New: func(p Params) (Language, error) {
			return dyckGrammar(DefaultDyckConcatMean, DefaultDyckNestMean, p[BracketTypes])
		},
	},
	{
		Name: HardestCFL, Title: "Hardest CFL", Group: GroupPaper, States: 3, Symbols: 3,
		Strings: "Greibach's hardest context-free language over ( ) [ ] , ; $; PCFG",
		New: func(Params) (Language, error) {
			return hardestCFLGrammar(DefaultHardestCFLParams())
		},
	},
	{
		Name: Count3, Title: "Count-3", Group: Group2023, States: 3, Symbols: 3,
		Strings: "aᵏ bᵏ cᵏ; uniform",
		New: func(Params) (Language, error) {
			return sectioned([]string{"a", "b", "c"}, 1, 3, 0, func(w []int) []int {
				return concat(w, repeat(1, len(w)), repeat(2, len(w)))
			}), nil
		},
	},
	{
		Name: MarkedCopy, Title: "Marked copy", Group: Group2023, States: 3, Symbols: 3,
		Strings: "w # w, w over {0, 1}; uniform",
		New: func(Params) (Language, error) {
			return sectioned(typeSymbols(2, "#"), 2, 2, 1, func(w []int) []int { return concat(w, []int{2}, w) }), nil
		},
	},
	{
		Name: UnmarkedCopy, Title: "Unmarked copy", Group: Group2023, States: 3, Symbols: 3,
		Strings: "w w, w over {0, 1}; uniform",
		New: func(Params) (Language, error) {
			return sectioned(typeSymbols(2), 2, 2, 0, func(w []int) []int { return concat(w, w) }), nil
		},
	},
	{
		Name: MarkedReverseAndCopy, Title: "Marked reverse and copy", Group: Group2023, States: 3, Symbols: 3,
		Strings: "w # wᴿ # w, w over {0, 1} (0 … m−1 with --symbol-types m); uniform",
		Params:  []TaskParam{typesParam(SymbolTypes, "symbol types of w")},
		New: func(p Params) (Language, error) {
			m := p[SymbolTypes]
			return sectioned(typeSymbols(m, "#"), m, 3, 2, func(w []int) []int {
				return concat(w, []int{m}, reversed(w), []int{m}, w)
			}), nil
		},
	},
	{
		Name: UnmarkedReverseAndCopy, Title: "Unmarked reverse and copy", Group: Group2023, States: 3, Symbols: 3,
		Strings: "w wᴿ w, w over {0, 1}; uniform",
		New: func(Params) (Language, error) {
			return sectioned(typeSymbols(2), 2, 3, 0, func(w []int) []int { return concat(w, reversed(w), w) }), nil
		},
	},
	{
		Name: CountAndCopy, Title: "Count and copy", Group: Group2023, States: 3, Symbols: 3,
		Strings: "w #ᵏ w, w over {0, 1} of length k; uniform",
		New: func(Params) (Language, error) {
			return sectioned(typeSymbols(2, "#"), 2, 3, 0, func(w []int) []int {
				return concat(w, repeat(2, len(w)), w)
			}), nil
		},
	},
	{
		Name: UnmarkedCopyDifferentAlphabets, Title: "Unmarked copy, different alphabets", Group: Group2023, States: 3, Symbols: 3,
		Strings: "w w′, w over {0, 1}, w′ is w with 0 → 2 and 1 → 3; uniform",
		New: func(Params) (Language, error) {
			return sectioned(typeSymbols(4), 2, 2, 0, func(w []int) []int {
				c := make([]int, len(w))
				for i, x := range w {
					c[i] = x + 2
				}
				return concat(w, c)
			}), nil
		},
	},
}

// typeSymbols returns the symbols 0, 1, …, m−1 followed by extra.
func typeSymbols(m int, extra ...string) []string {
	syms := make([]string, 0, m+len(extra))
	for i := range m {
		syms = append(syms, strconv.Itoa(i))
	}
	return append(syms, extra...)
}

// bracketPairs are the brackets of the first bracket types of Dyck, as
// the authors' release names them; bracket type i ≥ 4 repeats the pair of
// type i mod 4, i/4 + 1 times.
const bracketPairs = "()[]{}<>"

// bracketSymbols returns the symbols of m bracket types: the opening and
// closing bracket of type 0, then of type 1, and so on.
func bracketSymbols(m int) []string {
	syms := make([]string, 0, 2*m)
	for j := range 2 * m {
		syms = append(syms, strings.Repeat(bracketPairs[j%len(bracketPairs):][:1], j/len(bracketPairs)+1))
	}
	return syms
}

// Cont returns 1 - 1/(m+1), the probability of continuing a geometric
// process with mean m.
func Cont(m float64) float64 { return 1 - 1/(m+1) }

func checkMean(name string, m float64) error {
	if math.IsNaN(m) || math.IsInf(m, 0) || m < 0 {
		return fmt.Errorf("data: %s mean %v must be finite and non-negative", name, m)
	}
	return nil
}

func checkTypes(name string, m int) error {
	if m < 1 || m > MaxTypes {
		return fmt.Errorf("data: %s: %d types outside [1, %d]", name, m, MaxTypes)
	}
	return nil
}

func rule(lhs string, p float64, rhs ...string) Rule { return Rule{LHS: lhs, RHS: rhs, Prob: p} }

// NewMarkedReversal returns the marked reversal task {v # vᴿ} over
// {0, 1, #}: S → 0 S 0 | 1 S 1 with probability Cont(mean)/2 each and
// S → # with 1 - Cont(mean).
func NewMarkedReversal(mean float64) (*Task, error) {
	g, err := markedReversalGrammar(mean, 2)
	return grammarTask(MarkedReversal, g, err)
}

// markedReversalGrammar returns the grammar of marked reversal with m
// symbol types 0 … m−1: S → a S a with probability Cont(mean)/m for each
// a, S → # with 1 - Cont(mean).
func markedReversalGrammar(mean float64, m int) (*PCFG, error) {
	if err := checkMean("marked reversal", mean); err != nil {
		return nil, err
	}
	if err := checkTypes("marked reversal", m); err != nil {
		return nil, err
	}
	c := Cont(mean)
	var rules []Rule
	for _, a := range typeSymbols(m) {
		rules = append(rules, rule("S", c/float64(m), a, "S", a))
	}
	return NewPCFG("S", typeSymbols(m, "#"), append(rules, rule("S", 1-c, "#")))
}

// NewUnmarkedReversal returns the unmarked reversal task {v vᴿ} over
// {0, 1}: S → 0 S 0 | 1 S 1 with probability Cont(mean)/2 each and S → ε
// with 1 - Cont(mean).
func NewUnmarkedReversal(mean float64) (*Task, error) {
	g, err := unmarkedReversalGrammar(mean, 2)
	return grammarTask(UnmarkedReversal, g, err)
}

// unmarkedReversalGrammar returns the grammar of unmarked reversal with m
// symbol types 0 … m−1: S → a S a with probability Cont(mean)/m for each
// a, S → ε with 1 - Cont(mean).
func unmarkedReversalGrammar(mean float64, m int) (*PCFG, error) {
	if err := checkMean("unmarked reversal", mean); err != nil {
		return nil, err
	}
	if err := checkTypes("unmarked reversal", m); err != nil {
		return nil, err
	}
	c := Cont(mean)
	var rules []Rule
	for _, a := range typeSymbols(m) {
		rules = append(rules, rule("S", c/float64(m), a, "S", a))
	}
	return NewPCFG("S", typeSymbols(m), append(rules, rule("S", 1-c)))
}

// NewPaddedReversal returns the padded reversal task {v aᵖ vᴿ} over {0, 1}:
// S → a S a with probability Cont(mean)/2 and S → T_a with
// (1 - Cont(mean))/2 for each a; T_a → a T_a with Cont(padMean) and T_a → ε
// with 1 - Cont(padMean).
func NewPaddedReversal(mean, padMean float64) (*Task, error) {
	g, err := paddedReversalGrammar(mean, padMean)
	return grammarTask(PaddedReversal, g, err)
}

func paddedReversalGrammar(mean, padMean float64) (*PCFG, error) {
	if err := checkMean("padded reversal", mean); err != nil {
		return nil, err
	}
	if err := checkMean("padded reversal padding", padMean); err != nil {
		return nil, err
	}
	c, d := Cont(mean), Cont(padMean)
	return NewPCFG("S", []string{"0", "1"}, []Rule{
		rule("S", c/2, "0", "S", "0"),
		rule("S", c/2, "1", "S", "1"),
		rule("S", (1-c)/2, "T0"),
		rule("S", (1-c)/2, "T1"),
		rule("T0", d, "0", "T0"),
		rule("T0", 1-d),
		rule("T1", d, "1", "T1"),
		rule("T1", 1-d),
	})
}

// NewDyck returns the Dyck language D₂ over {(, ), [, ]}: S → S T with
// probability Cont(concatMean) and S → T with 1 - Cont(concatMean);
// T → ( S ) | [ S ] with Cont(nestMean)/2 each and T → ( ) | [ ] with
// (1 - Cont(nestMean))/2 each.
func NewDyck(concatMean, nestMean float64) (*Task, error) {
	g, err := dyckGrammar(concatMean, nestMean, 2)
	return grammarTask(Dyck, g, err)
}

// dyckGrammar returns the grammar of the Dyck language of m bracket types
// (bracketSymbols): S → S T with probability Cont(concatMean) and S → T
// with 1 - Cont(concatMean); T → l S r with Cont(nestMean)/m and T → l r
// with (1 - Cont(nestMean))/m for each pair l r.
func dyckGrammar(concatMean, nestMean float64, m int) (*PCFG, error) {
	if err := checkMean("Dyck concatenation", concatMean); err != nil {
		return nil, err
	}
	if err := checkMean("Dyck nesting", nestMean); err != nil {
		return nil, err
	}
	if err := checkTypes("Dyck", m); err != nil {
		return nil, err
	}
	c, d := Cont(concatMean), Cont(nestMean)
	syms := bracketSymbols(m)
	rules := []Rule{rule("S", c, "S", "T"), rule("S", 1-c, "T")}
	for i := range m {
		rules = append(rules, rule("T", d/float64(m), syms[2*i], "S", syms[2*i+1]))
	}
	for i := range m {
		rules = append(rules, rule("T", (1-d)/float64(m), syms[2*i], syms[2*i+1]))
	}
	return NewPCFG("S", syms, rules)
}

// HardestCFLParams are the parameters of the hardest CFL grammar. C, U, V,
// S and T are means (the m of Cont(m)); Q is a probability.
type HardestCFLParams struct {
	C float64 // L′ → , V L′ and R′ → R′ V ,
	U float64 // U → W U
	V float64 // V → W V
	S float64 // S → S Q T
	T float64 // T → ( Q S Q ) | [ Q S Q ]
	Q float64 // Q → L ; R
}

// DefaultHardestCFLParams returns the paper's parameters: C = 0.5, U = 0.5,
// V = 1, S = 1.5, T = 3 and Q = 0.25.
func DefaultHardestCFLParams() HardestCFLParams {
	return HardestCFLParams{C: 0.5, U: 0.5, V: 1, S: 1.5, T: 3, Q: 0.25}
}

// NewHardestCFL returns Greibach's hardest context-free language over
// {(, ), [, ], ",", ;, $}, with c = Cont(p.C), u = Cont(p.U), v = Cont(p.V),
// q = p.Q, s = Cont(p.S), t = Cont(p.T):
//
//	S′ → R $ Q S L ;
//	L  → L′ , U
//	L′ → , V L′ (c) | ε (1-c)
//	R  → U , R′
//	R′ → R′ V , (c) | ε (1-c)
//	U  → W U (u) | ε (1-u)
//	V  → W V (v) | W (1-v)
//	W  → ( | ) | [ | ] | $ (1/5 each)
//	Q  → L ; R (q) | ε (1-q)
//	S  → S Q T (s) | T (1-s)
//	T  → ( Q S Q ) | [ Q S Q ] (t/2 each) | ( Q ) | [ Q ] ((1-t)/2 each)
func NewHardestCFL(p HardestCFLParams) (*Task, error) {
	g, err := hardestCFLGrammar(p)
	return grammarTask(HardestCFL, g, err)
}

func hardestCFLGrammar(p HardestCFLParams) (*PCFG, error) {
	for _, m := range []struct {
		name string
		v    float64
	}{{"hardest CFL C", p.C}, {"hardest CFL U", p.U}, {"hardest CFL V", p.V}, {"hardest CFL S", p.S}, {"hardest CFL T", p.T}} {
		if err := checkMean(m.name, m.v); err != nil {
			return nil, err
		}
	}
	if !(p.Q >= 0 && p.Q <= 1) {
		return nil, fmt.Errorf("data: hardest CFL Q %v must be a probability", p.Q)
	}
	c, u, v, q, s, t := Cont(p.C), Cont(p.U), Cont(p.V), p.Q, Cont(p.S), Cont(p.T)
	return NewPCFG("S'", []string{"(", ")", "[", "]", ",", ";", "$"}, []Rule{
		rule("S'", 1, "R", "$", "Q", "S", "L", ";"),
		rule("L", 1, "L'", ",", "U"),
		rule("L'", c, ",", "V", "L'"),
		rule("L'", 1-c),
		rule("R", 1, "U", ",", "R'"),
		rule("R'", c, "R'", "V", ","),
		rule("R'", 1-c),
		rule("U", u, "W", "U"),
		rule("U", 1-u),
		rule("V", v, "W", "V"),
		rule("V", 1-v, "W"),
		rule("W", 0.2, "("),
		rule("W", 0.2, ")"),
		rule("W", 0.2, "["),
		rule("W", 0.2, "]"),
		rule("W", 0.2, "$"),
		rule("Q", q, "L", ";", "R"),
		rule("Q", 1-q),
		rule("S", s, "S", "Q", "T"),
		rule("S", 1-s, "T"),
		rule("T", t/2, "(", "Q", "S", "Q", ")"),
		rule("T", t/2, "[", "Q", "S", "Q", "]"),
		rule("T", (1-t)/2, "(", "Q", ")"),
		rule("T", (1-t)/2, "[", "Q", "]"),
	})
}
