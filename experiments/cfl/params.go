package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("params", "print the number of parameters of a model for a task", runParams)
}

// taskModelFlags registers the flags that describe a model for a CFL task:
// the task, its parameters (taskParamFlags), its definition (--grammar)
// and the model, whose help gives the per-task defaults of taskModel.
func taskModelFlags(fs *pflag.FlagSet) (task *string, params func() data.Params, grammar *data.Grammar, mf *cli.ModelFlags) {
	task = fs.String("task", "", "task (required): "+taskNames())
	params = taskParamFlags(fs)
	grammar = cli.AddGrammarFlag(fs)
	mf = cli.AddModelFlags(fs, 20)
	fs.Lookup("states").Usage += " (default: the paper's for the task, " + perTask(func(t string) int { q, _ := stackDefaults(t); return q }) + ")"
	fs.Lookup("symbols").Usage += " (default: the paper's for the task, " + perTask(func(t string) int { _, g := stackDefaults(t); return g }) + ")"
	fs.Lookup("stack-embedding").Usage += fmt.Sprintf(" (default %d; with --push-hidden-state, the hidden size)", defaultStackEmbedding)
	return task, params, grammar, mf
}

// defaultStackEmbedding is the size of the stack vectors of the kinds
// that have them (--stack-embedding) when the flag is not given.
const defaultStackEmbedding = 20

// perTask describes a per-task default, e.g. "2 for marked-reversal, …;
// 3 for padded-reversal, hardest-cfl".
func perTask(f func(task string) int) string {
	var vals []int
	byVal := map[int][]string{}
	for _, t := range data.AllTaskNames() {
		v := f(t)
		if _, ok := byVal[v]; !ok {
			vals = append(vals, v)
		}
		byVal[v] = append(byVal[v], t)
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprintf("%d for %s", v, joinNames(byVal[v]))
	}
	return strings.Join(parts, "; ")
}

// stackDefaults are the paper's (or the 2023 release's) |Q| and |Γ| for
// each task (appendix B), from the task table; 2 and 3 for a name not in
// it.
func stackDefaults(task string) (states, symbols int) {
	if info, err := data.LookupTask(task); err == nil {
		return info.States, info.Symbols
	}
	return 2, 3
}

// taskStackDefaults is the |Q| and |Γ| that train gives a stack on task:
// the task table's, or a grammar file's own.
func taskStackDefaults(task *data.Task) (states, symbols int) {
	if info := task.Info(); info.Group == data.GroupUser {
		return info.States, info.Symbols
	}
	return stackDefaults(task.Name())
}

// taskModel resolves the task with parameters p under definition g and
// the model configuration from the flags, filling the paper's defaults
// where the model's kind declares the flag's field (nsrnn.Kind.Hyperparameters) and it was not
// given: |Q| and |Γ| per task (--states, --symbols), and stack vectors of
// size 20 (--stack-embedding, unless --push-hidden-state).
func taskModel(taskName string, p data.Params, g data.Grammar, mf *cli.ModelFlags) (*data.Task, nsrnn.Config, error) {
	if taskName == "" {
		return nil, nsrnn.Config{}, fmt.Errorf("--task is required (one of %s)", taskNames())
	}
	task, err := taskFlag(taskName, p, g)
	if err != nil {
		return nil, nsrnn.Config{}, err
	}
	cfg, err := taskConfig(task, mf)
	return task, cfg, err
}

// taskConfig is the model configuration from the flags for task, with the
// defaults of taskModel; a task of the user's (a grammar file, text files)
// has the |Q| and |Γ| of its data.TaskInfo.
func taskConfig(task *data.Task, mf *cli.ModelFlags) (nsrnn.Config, error) {
	if err := mf.CheckGiven(); err != nil {
		return nsrnn.Config{}, err
	}
	q, gamma := taskStackDefaults(task)
	m := &mf.Model
	if cli.KindUses(m.Kind, "states") && m.States == 0 {
		m.States = q
	}
	if cli.KindUses(m.Kind, "symbols") && m.Symbols == 0 {
		m.Symbols = gamma
	}
	if cli.KindUses(m.Kind, "stack-embedding") && !m.PushHiddenState && m.StackEmbedding == 0 {
		m.StackEmbedding = defaultStackEmbedding
	}
	return mf.Config(len(task.Terminals()), len(task.Vocabulary()), 0, 0)
}

func runParams(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("params", stdout)
	task, params, grammar, mf := taskModelFlags(fs)
	grammarFile := grammarFileFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	t, _, err := taskOrGrammarFile(*task, *grammarFile, params(), *grammar)
	if err != nil {
		return err
	}
	warnGrammar(stderr, t, *grammarFile)
	cfg, err := taskConfig(t, mf)
	if err != nil {
		return err
	}
	n, err := nsrnn.CountParams(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, paramsLine(cfg.Kind, t.Name(), n))
	return nil
}

// paramsLine is the line of cfl params: the model, the task and the count
// with thousands separated, e.g. "rns on marked-reversal: 4,328 parameters".
func paramsLine(kind, task string, n int) string {
	digits := strconv.Itoa(n)
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return fmt.Sprintf("%s on %s: %s parameters", kind, task, b.String())
}
