package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiment"
	"github.com/nsrnn/nsrnn/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("eval", "measure a trained model's cross-entropy difference by length", runEval)
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("eval", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("model", "", "directory of a training run (required)")
	taskName := fs.String("task", "", "task (required)")
	grammar := cli.AddGrammarFlag(fs)
	gf := fs.Lookup("grammar")
	gf.Usage = "task definition: " + joinNames(data.GrammarNames()) + " (default: the run's, from its " + experiment.RunFile + ", else paper)"
	gf.DefValue = ""
	force := fs.Bool("force", false, "evaluate under a --grammar other than the run's")
	testFile := fs.String("test", "", "file of test strings (default: sample them)")
	lengths := fs.String("lengths", "40:100", "MIN:MAX test lengths")
	perLength := fs.Int("per-length", 100, "sampled test strings per valid length")
	seed := fs.Uint64("seed", 7, "seed of the sampled test set")
	batchSize := fs.Int("batch-size", 10, "strings per batch")
	asCSV := fs.Bool("csv", false, "print CSV (length,strings,symbols,cross_entropy,lower_bound,cross_entropy_diff) instead of JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *dir == "" {
		return fmt.Errorf("--model is required")
	}
	if *taskName == "" {
		return fmt.Errorf("--task is required (one of %v)", data.TaskNames())
	}
	if *batchSize < 1 || *perLength < 1 {
		return fmt.Errorf("--batch-size and --per-length must be at least 1")
	}
	g, err := evalGrammar(*dir, *grammar, fs.Changed("grammar"), *force)
	if err != nil {
		return err
	}
	t, err := taskFlag(*taskName, g)
	if err != nil {
		return err
	}
	minLen, maxLen, err := parseLengths(*lengths)
	if err != nil {
		return fmt.Errorf("--lengths: %w", err)
	}
	m, err := nsrnn.Load(filepath.Join(*dir, experiment.ModelFile))
	if err != nil {
		return fmt.Errorf("--model: %w", err)
	}
	if m.Config().OutputVocab != len(t.Vocabulary()) || m.Config().InputVocab != len(t.Terminals()) {
		return fmt.Errorf("--model %s has a vocabulary of %d symbols, task %s has %d", *dir, m.Config().OutputVocab, t.Name(), len(t.Vocabulary()))
	}
	var strs [][]int
	if *testFile != "" {
		if strs, err = data.ReadStringsFile(*testFile, t.Terminals()); err != nil {
			return err
		}
	} else {
		spec := experiment.TestSpec{MinLength: minLen, MaxLength: maxLen, PerLength: *perLength, Seed: *seed}
		if strs, err = experiment.SampleTestSet(t, spec); err != nil {
			return err
		}
	}
	rep, err := experiment.EvaluateByLength(m, t, strs, minLen, maxLen, *batchSize)
	if err != nil {
		// A string of the file outside the language or the lengths: name
		// its line (one string per line).
		if se, ok := errors.AsType[*data.StringError](err); ok && *testFile != "" {
			return &data.LineError{Name: *testFile, Line: se.Index + 1, Err: se.Err}
		}
		return err
	}
	rep.Model = *dir
	if *asCSV {
		return rep.WriteCSV(stdout)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// evalGrammar is the task definition eval uses for the run in dir: the
// run's (from its run.json; "paper" for a run.json that predates the
// choice, or the flag's for a directory without one), or the --grammar
// given, which must be the run's unless forced.
func evalGrammar(dir string, flag data.Grammar, given, force bool) (data.Grammar, error) {
	s, err := experiment.ReadSettings(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return flag, nil
	case err != nil:
		return "", fmt.Errorf("--model: %w", err)
	case !given:
		return s.Grammar, nil
	case flag != s.Grammar && !force:
		return "", fmt.Errorf("--grammar %s differs from the run's grammar %s (%s); use --force to evaluate it under %s anyway",
			flag, s.Grammar, filepath.Join(dir, experiment.RunFile), flag)
	}
	return flag, nil
}
