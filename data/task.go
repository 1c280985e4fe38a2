package data

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// TaskInfo is one entry of the task table (AllTasks): everything the
// library and the command-line programs know of a task. Flags, task
// lists, help text, figure titles and the settings saved with a run all
// come from the table, so adding a task means adding one entry to it (in
// tasks.go).
type TaskInfo struct {
	// Name is the task's name on command lines and in saved files.
	Name string
	// Title is its name in figures and tables ("Marked reversal").
	Title string
	// Strings describes the language and its alphabet in one line, for
	// help text.
	Strings string
	// Group is GroupPaper for the five tasks of the 2022 paper and
	// Group2023 for the seven of the authors' 2023 release.
	Group string
	// Params are the task's parameters, with their defaults; a task
	// without any has none.
	Params []TaskParam
	// States and Symbols are the |Q| and |Γ| that the paper (or the
	// release) gives nondeterministic-stack models on the task.
	States, Symbols int
	// New builds the task's language for parameters that hold a valid
	// value for each of Params. A *PCFG is a task defined by a grammar,
	// which has the released definition too (see Task.WithGrammar); any
	// other Language has one definition.
	New func(p Params) (Language, error)
}

// TaskParam is an integer parameter of a task, such as the number of
// symbol types of the capacity experiment.
type TaskParam struct {
	// Name is the parameter's name: its command-line flag (without --)
	// and its key in saved settings.
	Name string
	// Usage is its description for help text.
	Usage string
	// Default is its value when not given, the paper's; Min and Max
	// bound it.
	Default, Min, Max int
}

// Params are values of task parameters by name. In saved settings and
// Task.Params, a parameter at its default is left out, so a task with
// every parameter at its default has no (nil) Params.
type Params map[string]int

// String returns the parameters as "name=value", sorted by name and
// separated by commas; "" for none.
func (p Params) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, p[k]))
	}
	return strings.Join(parts, ",")
}

// Task groups (TaskInfo.Group).
const (
	// GroupPaper is the five context-free tasks of the 2022 paper.
	GroupPaper = "paper"
	// Group2023 is the seven non-context-free tasks of the authors' 2023
	// release.
	Group2023 = "2023"
	// GroupUser is a task of the user's, not in the table: a grammar file
	// (NewGrammarTask) or text files (NewTextTask).
	GroupUser = "user"
)

// AllTasks returns the task table (a copy): the paper's five tasks in its
// order, then the seven of the 2023 release in its order.
func AllTasks() []TaskInfo { return slices.Clone(taskTable) }

// AllTaskNames returns the names of every task of the table, in its order.
func AllTaskNames() []string { return taskGroupNames("") }

// TaskNames returns the names of the paper's five tasks, in a fixed order:
// marked reversal, unmarked reversal, padded reversal, Dyck and the
// hardest CFL. AllTaskNames lists every task.
func TaskNames() []string { return taskGroupNames(GroupPaper) }

// TaskGroupNames returns the names of the tasks of a group (GroupPaper or
// Group2023), in the table's order; none for an unknown group.
func TaskGroupNames(group string) []string { return taskGroupNames(group) }

func taskGroupNames(group string) []string {
	var names []string
	for _, t := range taskTable {
		if group == "" || t.Group == group {
			names = append(names, t.Name)
		}
	}
	return names
}

// LookupTask returns the table's entry for the task named name, or an
// error listing the valid names.
func LookupTask(name string) (TaskInfo, error) {
	for _, t := range taskTable {
		if t.Name == name {
			return t, nil
		}
	}
	return TaskInfo{}, fmt.Errorf("data: unknown task %q (valid tasks: %s)", name, strings.Join(AllTaskNames(), ", "))
}

// TaskParamNames returns the names of the parameters of every task, each
// once, in the order of the table.
func TaskParamNames() []string {
	var names []string
	for _, t := range taskTable {
		for _, p := range t.Params {
			if !slices.Contains(names, p.Name) {
				names = append(names, p.Name)
			}
		}
	}
	return names
}

// Param returns the task's parameter named name.
func (info TaskInfo) Param(name string) (TaskParam, bool) {
	i := slices.IndexFunc(info.Params, func(p TaskParam) bool { return p.Name == name })
	if i < 0 {
		return TaskParam{}, false
	}
	return info.Params[i], true
}

// IsGrammar reports whether the task is defined by a PCFG, and so has the
// released definition too (GrammarReleased).
func (info TaskInfo) IsGrammar() bool {
	l, err := info.New(info.resolve(nil))
	_, ok := l.(*PCFG)
	return err == nil && ok
}

// resolve returns p with the defaults of the parameters it leaves out; p
// must hold only valid values of the task's parameters.
func (info TaskInfo) resolve(p Params) Params {
	full := Params{}
	for _, q := range info.Params {
		full[q.Name] = q.Default
		if v, ok := p[q.Name]; ok {
			full[q.Name] = v
		}
	}
	return full
}

// CheckParams checks that p names only parameters of the task, each with
// a value in its range, and returns p without the parameters at their
// defaults (nil if that leaves none). The errors name the parameter.
func (info TaskInfo) CheckParams(p Params) (Params, error) {
	var canon Params
	for _, k := range slices.Sorted(maps.Keys(p)) {
		q, ok := info.Param(k)
		if !ok {
			has := "it has none"
			if len(info.Params) > 0 {
				var names []string
				for _, q := range info.Params {
					names = append(names, q.Name)
				}
				has = "its parameters: " + strings.Join(names, ", ")
			}
			return nil, fmt.Errorf("data: task %s has no parameter %s (%s)", info.Name, k, has)
		}
		if v := p[k]; v < q.Min || v > q.Max {
			return nil, fmt.Errorf("data: task %s: %s %d outside [%d, %d]", info.Name, k, v, q.Min, q.Max)
		}
		if p[k] != q.Default {
			if canon == nil {
				canon = Params{}
			}
			canon[k] = p[k]
		}
	}
	return canon, nil
}

// Task is a language modeling task: a Language (a PCFG for the paper's
// five tasks, a uniform language for those of the 2023 release) whose
// terminals, in order, are the task's input vocabulary. A model's
// vocabulary is the terminals followed by EOS. Task implements Language.
//
// A task has a name (an entry of AllTasks), parameters (Params) and a
// definition (see Grammar): the New* constructors, NewTask and TaskFor
// give tasks with the paper's parameters, TaskWith tasks with others, and
// WithGrammar the same task under another definition.
type Task struct {
	name   string
	params Params // the parameters not at their defaults
	def    Grammar
	lang   Language // the language of def
	g      *PCFG    // lang as a PCFG; nil for a task without a grammar
	paper  *PCFG    // the grammar as stated
	// info is the entry of a task that is not in the table (a user's
	// grammar or strings); nil for a task of the table.
	info *TaskInfo
}

// Name returns the task's name.
func (t *Task) Name() string { return t.name }

// Params returns a copy of the task's parameters that are not at their
// defaults; nil when all are.
func (t *Task) Params() Params {
	if len(t.params) == 0 {
		return nil
	}
	return maps.Clone(t.params)
}

// Info returns the task's entry in the task table, or for a task of the
// user's (NewGrammarTask, NewTextTask) an entry of the same form with
// Group GroupUser. Info panics for the zero Task, a programmer's error.
func (t *Task) Info() TaskInfo {
	if t.info != nil {
		return *t.info
	}
	info, err := LookupTask(t.name)
	if err != nil {
		panic("data: task " + t.name + " is not in the table") // every Task is made from it
	}
	return info
}

// String names the task in messages: its name, followed by its
// parameters that are not at their defaults and by its definition when
// that is not the default, as in "marked-reversal (symbol-types=40)".
func (t *Task) String() string {
	var extra []string
	if len(t.params) > 0 {
		extra = append(extra, t.params.String())
	}
	if t.def != GrammarPaper {
		extra = append(extra, string(t.def)+" grammar")
	}
	if len(extra) == 0 {
		return t.name
	}
	return t.name + " (" + strings.Join(extra, "; ") + ")"
}

// Grammar returns the task's PCFG under its definition, or nil for a task
// that is not defined by a grammar (the tasks of the 2023 release). The
// Task itself is the Language that sampling and the lower bound should be
// given; Grammar is for what only a PCFG has.
func (t *Task) Grammar() *PCFG { return t.g }

// Language returns the task's language under its definition.
func (t *Task) Language() Language { return t.lang }

// Definition returns the task's definition, GrammarPaper or
// GrammarReleased. A task without a grammar has only GrammarPaper.
func (t *Task) Definition() Grammar { return t.def }

// WithGrammar returns the same task (same name and parameters) under the
// definition g: for GrammarReleased, its stated grammar after
// PCFG.RemoveEpsilonAndUnaryRules. It returns an error naming the valid
// values for an unknown g, and for GrammarReleased of a task that has no
// grammar; the zero value is GrammarPaper.
func (t *Task) WithGrammar(g Grammar) (*Task, error) {
	d, err := g.orDefault()
	if err != nil {
		return nil, err
	}
	if d == t.def {
		return t, nil
	}
	if t.paper == nil {
		return nil, fmt.Errorf("data: task %s is not defined by a grammar: it has only the %s definition, not %s (%s has one for %s)",
			t.name, GrammarPaper, d, d, strings.Join(grammarTaskNames(), ", "))
	}
	u := &Task{name: t.name, params: t.params, def: d, lang: t.paper, g: t.paper, paper: t.paper, info: t.info}
	if d == GrammarReleased {
		if u.g, _, err = t.paper.RemoveEpsilonAndUnaryRules(); err != nil {
			return nil, fmt.Errorf("data: %s under the released grammar: %w", t.name, err)
		}
		u.lang = u.g
	}
	return u, nil
}

// grammarTaskNames lists the tasks defined by a grammar.
func grammarTaskNames() []string {
	var names []string
	for _, t := range taskTable {
		if t.IsGrammar() {
			names = append(names, t.Name)
		}
	}
	return names
}

// Terminals returns a copy of the task's terminal vocabulary, in index order.
func (t *Task) Terminals() []string { return t.lang.Terminals() }

// Vocabulary returns the model vocabulary: the terminals followed by EOS.
func (t *Task) Vocabulary() []string { return append(t.lang.Terminals(), EOS) }

// EOS returns the index of EOS in the model vocabulary, the number of
// terminals.
func (t *Task) EOS() int { return len(t.lang.Terminals()) }

// ValidLengths returns, in increasing order, the lengths in [minLen,
// maxLen] that the task's strings have (see Language).
func (t *Task) ValidLengths(minLen, maxLen int) ([]int, error) {
	return t.lang.ValidLengths(minLen, maxLen)
}

// Sample returns a string drawn exactly from the task's distribution
// conditioned on length n (see Language).
func (t *Task) Sample(n int, rng *rand.Rand) ([]int, error) { return t.lang.Sample(n, rng) }

// LogProbGivenLength returns log p(w | |w|), -Inf if w is not in the
// task's language (see Language).
func (t *Task) LogProbGivenLength(w []int) (float64, error) { return t.lang.LogProbGivenLength(w) }

// Contains reports whether w is in the task's language: whether it has a
// positive probability. It returns an error if w contains an index that
// is not a terminal or is longer than MaxLength.
func (t *Task) Contains(w []int) (bool, error) {
	lp, err := t.lang.LogProbGivenLength(w)
	if err != nil {
		return false, err
	}
	return !math.IsInf(lp, -1), nil
}

// SampleBatches returns numStrings strings of the task in batches of
// batchSize, the last smaller if batchSize does not divide numStrings:
// for each batch one length is drawn uniformly from the valid lengths in
// [minLen, maxLen], and every string of the batch from the task's
// distribution conditioned on that length. This is the paper's protocol
// for training and validation sets; for a task with a grammar it draws
// the same strings from the same rng as SampleBatches of t.Grammar().
func (t *Task) SampleBatches(numStrings, batchSize, minLen, maxLen int, rng *rand.Rand) ([][][]int, error) {
	return SampleBatches(t.lang, numStrings, batchSize, minLen, maxLen, rng)
}

// TrueEntropy returns the lower bound of a model's cross-entropy on the
// strings of batches (as SampleBatches returns them) drawn from the task
// with lengths in [minLen, maxLen]: the data's true entropy, the
// cross-entropy of the source distribution in nats per symbol (EOS
// included), ComputeLowerBound's Entropy. It is the value that
// nsrnn.TrainConfig.LowerBound takes for the validation batches, so that
// training reports each epoch's difference from it.
func (t *Task) TrueEntropy(batches [][][]int, minLen, maxLen int) (float64, error) {
	lb, err := ComputeLowerBound(t.lang, Flatten(batches), minLen, maxLen)
	if err != nil {
		return 0, err
	}
	return lb.Entropy, nil
}

// NewTask returns the task with the given name and the paper's parameters,
// under the paper's grammars (GrammarPaper; see TaskFor for the other
// definition). The error for an unknown name lists the valid names.
func NewTask(name string) (*Task, error) { return TaskWith(name, nil, GrammarPaper) }

// TaskWith returns the task with the given name and parameters (nil: the
// defaults; see TaskInfo.CheckParams) under the definition g. The errors
// for an unknown name or definition list the valid ones, and those for a
// parameter name it.
func TaskWith(name string, p Params, g Grammar) (*Task, error) {
	if _, err := g.orDefault(); err != nil {
		return nil, err
	}
	info, err := LookupTask(name)
	if err != nil {
		return nil, err
	}
	canon, err := info.CheckParams(p)
	if err != nil {
		return nil, err
	}
	l, err := info.New(info.resolve(canon))
	if err != nil {
		return nil, fmt.Errorf("data: task %s: %w", name, err)
	}
	t := &Task{name: name, params: canon, def: GrammarPaper, lang: l}
	if pg, ok := l.(*PCFG); ok {
		t.g, t.paper = pg, pg
	}
	return t.WithGrammar(g)
}

// grammarTask returns a task of the paper's five with the grammar g under
// the paper's definition and parameters; the New* constructors use it.
func grammarTask(name string, g *PCFG, err error) (*Task, error) {
	if err != nil {
		return nil, err
	}
	return &Task{name: name, def: GrammarPaper, lang: g, g: g, paper: g}, nil
}
