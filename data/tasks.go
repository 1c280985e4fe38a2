package data

import (
	"fmt"
	"math"
	"strings"
)

// Task names.
const (
	MarkedReversal   = "marked-reversal"
	UnmarkedReversal = "unmarked-reversal"
	PaddedReversal   = "padded-reversal"
	Dyck             = "dyck"
	HardestCFL       = "hardest-cfl"
)

// EOS is the name of the end-of-sequence symbol in a task's vocabulary.
const EOS = "EOS"

// The paper's means (the m of Cont(m)) for the task grammars.
const (
	DefaultReversalMean   = 60 // 0 S 0 | 1 S 1 in the three reversal tasks
	DefaultPadMean        = 30 // T_a → a T_a in padded reversal
	DefaultDyckConcatMean = 1  // S → S T in Dyck
	DefaultDyckNestMean   = 39 // T → ( S ) | [ S ] in Dyck
)

// TaskNames returns the names of the five tasks in a fixed order.
func TaskNames() []string {
	return []string{MarkedReversal, UnmarkedReversal, PaddedReversal, Dyck, HardestCFL}
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

// Task is one of the paper's context-free language modeling tasks: a PCFG
// whose terminals, in order, are the task's input vocabulary. A model's
// vocabulary is the terminals followed by EOS.
//
// A task has a definition (see Grammar): the New* constructors and NewTask
// return tasks under GrammarPaper, and WithGrammar or TaskFor give the same
// task under another definition.
type Task struct {
	name  string
	def   Grammar
	g     *PCFG // the grammar of def
	paper *PCFG // the grammar as stated
}

// Name returns the task's name.
func (t *Task) Name() string { return t.name }

// Grammar returns the task's PCFG under its definition: the grammar that
// Sample, ValidLengths, LogProbGivenLength, SourceLogProb, ComputeLowerBound,
// SampleBatches and SampleTestSet should be given.
func (t *Task) Grammar() *PCFG { return t.g }

// TrueEntropy returns the lower bound of a model's cross-entropy on the
// strings of batches (as SampleBatches returns them) drawn from the task
// with lengths in [minLen, maxLen]: the data's true entropy, the
// cross-entropy of the source distribution in nats per symbol (EOS
// included), ComputeLowerBound's Entropy. It is the value that
// nsrnn.TrainConfig.LowerBound takes for the validation batches, so that
// training reports each epoch's difference from it.
func (t *Task) TrueEntropy(batches [][][]int, minLen, maxLen int) (float64, error) {
	lb, err := ComputeLowerBound(t.g, Flatten(batches), minLen, maxLen)
	if err != nil {
		return 0, err
	}
	return lb.Entropy, nil
}

// Definition returns the task's definition, GrammarPaper or
// GrammarReleased.
func (t *Task) Definition() Grammar { return t.def }

// WithGrammar returns the same task (same name and parameters) under the
// definition g: for GrammarReleased, its stated grammar after
// PCFG.RemoveEpsilonAndUnaryRules. It returns an error naming the valid
// values for an unknown g; the zero value is GrammarPaper.
func (t *Task) WithGrammar(g Grammar) (*Task, error) {
	d, err := g.orDefault()
	if err != nil {
		return nil, err
	}
	if d == t.def {
		return t, nil
	}
	u := &Task{name: t.name, def: d, g: t.paper, paper: t.paper}
	if d == GrammarReleased {
		if u.g, _, err = t.paper.RemoveEpsilonAndUnaryRules(); err != nil {
			return nil, fmt.Errorf("data: %s under the released grammar: %w", t.name, err)
		}
	}
	return u, nil
}

// Terminals returns a copy of the task's terminal vocabulary, in index order.
func (t *Task) Terminals() []string { return t.g.Terminals() }

// Vocabulary returns the model vocabulary: the terminals followed by EOS.
func (t *Task) Vocabulary() []string { return append(t.g.Terminals(), EOS) }

// EOS returns the index of EOS in the model vocabulary, the number of
// terminals.
func (t *Task) EOS() int { return len(t.g.terms) }

// NewTask returns the task with the given name and the paper's parameters,
// under the paper's grammars (GrammarPaper; see TaskFor for the other
// definition). The error for an unknown name lists the valid names.
func NewTask(name string) (*Task, error) {
	switch name {
	case MarkedReversal:
		return NewMarkedReversal(DefaultReversalMean)
	case UnmarkedReversal:
		return NewUnmarkedReversal(DefaultReversalMean)
	case PaddedReversal:
		return NewPaddedReversal(DefaultReversalMean, DefaultPadMean)
	case Dyck:
		return NewDyck(DefaultDyckConcatMean, DefaultDyckNestMean)
	case HardestCFL:
		return NewHardestCFL(DefaultHardestCFLParams())
	}
	return nil, fmt.Errorf("data: unknown task %q (valid tasks: %s)", name, strings.Join(TaskNames(), ", "))
}

func newTask(name, start string, terms []string, rules []Rule) (*Task, error) {
	g, err := NewPCFG(start, terms, rules)
	if err != nil {
		return nil, err
	}
	return &Task{name: name, def: GrammarPaper, g: g, paper: g}, nil
}

func rule(lhs string, p float64, rhs ...string) Rule { return Rule{LHS: lhs, RHS: rhs, Prob: p} }

// NewMarkedReversal returns the marked reversal task {v # vᴿ} over
// {0, 1, #}: S → 0 S 0 | 1 S 1 with probability Cont(mean)/2 each and
// S → # with 1 - Cont(mean).
func NewMarkedReversal(mean float64) (*Task, error) {
	if err := checkMean("marked reversal", mean); err != nil {
		return nil, err
	}
	c := Cont(mean)
	return newTask(MarkedReversal, "S", []string{"0", "1", "#"}, []Rule{
		rule("S", c/2, "0", "S", "0"),
		rule("S", c/2, "1", "S", "1"),
		rule("S", 1-c, "#"),
	})
}

// NewUnmarkedReversal returns the unmarked reversal task {v vᴿ} over
// {0, 1}: S → 0 S 0 | 1 S 1 with probability Cont(mean)/2 each and S → ε
// with 1 - Cont(mean).
func NewUnmarkedReversal(mean float64) (*Task, error) {
	if err := checkMean("unmarked reversal", mean); err != nil {
		return nil, err
	}
	c := Cont(mean)
	return newTask(UnmarkedReversal, "S", []string{"0", "1"}, []Rule{
		rule("S", c/2, "0", "S", "0"),
		rule("S", c/2, "1", "S", "1"),
		rule("S", 1-c),
	})
}

// NewPaddedReversal returns the padded reversal task {v aᵖ vᴿ} over {0, 1}:
// S → a S a with probability Cont(mean)/2 and S → T_a with
// (1 - Cont(mean))/2 for each a; T_a → a T_a with Cont(padMean) and T_a → ε
// with 1 - Cont(padMean).
func NewPaddedReversal(mean, padMean float64) (*Task, error) {
	if err := checkMean("padded reversal", mean); err != nil {
		return nil, err
	}
	if err := checkMean("padded reversal padding", padMean); err != nil {
		return nil, err
	}
	c, d := Cont(mean), Cont(padMean)
	return newTask(PaddedReversal, "S", []string{"0", "1"}, []Rule{
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
	if err := checkMean("Dyck concatenation", concatMean); err != nil {
		return nil, err
	}
	if err := checkMean("Dyck nesting", nestMean); err != nil {
		return nil, err
	}
	c, d := Cont(concatMean), Cont(nestMean)
	return newTask(Dyck, "S", []string{"(", ")", "[", "]"}, []Rule{
		rule("S", c, "S", "T"),
		rule("S", 1-c, "T"),
		rule("T", d/2, "(", "S", ")"),
		rule("T", d/2, "[", "S", "]"),
		rule("T", (1-d)/2, "(", ")"),
		rule("T", (1-d)/2, "[", "]"),
	})
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
	return newTask(HardestCFL, "S'", []string{"(", ")", "[", "]", ",", ";", "$"}, []Rule{
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
