package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("params", "print the number of parameters of a model for a task", runParams)
}

// taskModelFlags registers the flags that describe a model for a CFL task:
// the task, its definition (--grammar) and the model.
func taskModelFlags(fs *pflag.FlagSet) (task *string, grammar *data.Grammar, mf *cli.ModelFlags) {
	task = fs.String("task", "", "task: marked-reversal, unmarked-reversal, padded-reversal, dyck, hardest-cfl (required)")
	grammar = cli.AddGrammarFlag(fs)
	mf = cli.AddModelFlags(fs, 20)
	return task, grammar, mf
}

// stackDefaults are the paper's |Q| and |Γ| for each task (appendix B).
func stackDefaults(task string) (states, symbols int) {
	switch task {
	case data.PaddedReversal, data.HardestCFL:
		return 3, 3
	}
	return 2, 3
}

// taskModel resolves the task under definition g and the model
// configuration from the flags, filling the paper's defaults: |Q| and |Γ|
// per task for the ns models, and stack vectors of size 20 for gref and jm.
func taskModel(taskName string, g data.Grammar, mf *cli.ModelFlags) (*data.Task, nsrnn.Config, error) {
	if taskName == "" {
		return nil, nsrnn.Config{}, fmt.Errorf("--task is required (one of %v)", data.TaskNames())
	}
	task, err := taskFlag(taskName, g)
	if err != nil {
		return nil, nsrnn.Config{}, err
	}
	if nsrnn.IsNondeterministic(mf.Kind) {
		q, g := stackDefaults(taskName)
		if mf.States == 0 {
			mf.States = q
		}
		if mf.Symbols == 0 {
			mf.Symbols = g
		}
	}
	if (mf.Kind == nsrnn.Gref || mf.Kind == nsrnn.JM) && !mf.PushHiddenState && mf.StackEmbedding == 0 {
		mf.StackEmbedding = 20
	}
	cfg, err := mf.Config(len(task.Terminals()), len(task.Vocabulary()), 0, 0)
	return task, cfg, err
}

func runParams(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("params", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	task, grammar, mf := taskModelFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	_, cfg, err := taskModel(*task, *grammar, mf)
	if err != nil {
		return err
	}
	n, err := nsrnn.CountParams(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, n)
	return nil
}
