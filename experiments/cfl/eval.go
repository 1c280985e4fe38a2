package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiment"
	"github.com/nsrnn/nsrnn/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("eval", "measure a trained model's cross-entropy difference by length", runEval)
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("eval", stdout)
	modelPath := fs.String("model", "", "a training run's directory, or its model file (required)")
	taskName := fs.String("task", "", "task: "+taskNames()+" (default: the run's, from its "+experiment.RunFile+")")
	params := taskParamFlags(fs)
	grammar := cli.AddGrammarFlag(fs)
	gf := fs.Lookup("grammar")
	gf.Usage = "task definition: " + joinNames(data.GrammarNames()) + " (default: the run's, from its " + experiment.RunFile + ", else paper)"
	gf.DefValue = ""
	force := fs.Bool("force", false, "evaluate on a --task, task parameters or under a --grammar other than the run's")
	testFile := fs.String("test", "", "file of test strings, one per line (default: sample them with --per-length and --seed)")
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
	if *modelPath == "" {
		return fmt.Errorf("--model is required")
	}
	if *batchSize < 1 || *perLength < 1 {
		return fmt.Errorf("--batch-size and --per-length must be at least 1")
	}
	minLen, maxLen, err := parseLengths(*lengths)
	if err != nil {
		return fmt.Errorf("--lengths: %w", err)
	}
	t, m, err := loadEvalRun(*modelPath, *taskName, params(), *grammar, fs.Changed("grammar"), *force)
	if err != nil {
		return err
	}
	var strs [][]int
	if *testFile != "" {
		if strs, err = data.ReadStringsFile(*testFile, t.Terminals()); err != nil {
			return fmt.Errorf("--test: %w", err)
		}
		if len(strs) == 0 {
			return fmt.Errorf("--test %s: the file holds no strings", *testFile)
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
			return &data.LineError{Name: *testFile, Line: se.Index + 1, Err: notInLanguage(se.Err, t)}
		}
		return err
	}
	rep.Model = *modelPath
	if *asCSV {
		return rep.WriteCSV(stdout)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// loadEvalRun resolves eval's --model (a run directory, or a model file in
// one) into the task to evaluate on and the loaded model. The task, its
// parameters and its definition are the run's, from its run.json, unless
// --task, the task-parameter flags (p, those given) or --grammar (given)
// say otherwise, which must then agree with the run's unless forced;
// without a run.json, --task is required. Errors name the flags.
func loadEvalRun(path, taskName string, p data.Params, flag data.Grammar, grammarGiven, force bool) (*data.Task, *nsrnn.Model, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--model: %w", err)
	}
	dir, file := path, filepath.Join(path, experiment.ModelFile)
	if !fi.IsDir() {
		dir, file = filepath.Dir(path), path
	}
	s, err := experiment.ReadSettings(dir)
	hasRun := err == nil
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, nil, fmt.Errorf("--model: %w", err)
	}
	g := flag
	switch {
	case !hasRun && taskName == "":
		return nil, nil, fmt.Errorf("--task is required: --model %s has no %s to take it from (one of %s)", path, experiment.RunFile, taskNames())
	case hasRun && taskName == "":
		taskName = s.Task
	case hasRun && taskName != s.Task && !force:
		return nil, nil, fmt.Errorf("--task %s differs from the task the model was trained on, %s (%s); use --force to evaluate it on %s anyway",
			taskName, s.Task, filepath.Join(dir, experiment.RunFile), taskName)
	}
	if hasRun {
		switch {
		case !grammarGiven:
			g = s.Grammar
		case flag != s.Grammar && !force:
			return nil, nil, fmt.Errorf("--grammar %s differs from the run's grammar %s (%s); use --force to evaluate it under %s anyway",
				flag, s.Grammar, filepath.Join(dir, experiment.RunFile), flag)
		}
	}
	if hasRun && taskName == s.Task && p == nil {
		p = s.TaskParams
	}
	t, err := taskFlag(taskName, p, g)
	if err != nil {
		return nil, nil, err
	}
	if hasRun && t.Name() == s.Task && t.Params().String() != s.TaskParams.String() && !force {
		return nil, nil, fmt.Errorf("the task parameters %q differ from those of the run, %q (%s); use --force to evaluate it on %s anyway",
			t.Params(), s.TaskParams, filepath.Join(dir, experiment.RunFile), t)
	}
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) && hasRun {
		return nil, nil, fmt.Errorf("--model %s: the run has not finished: no model yet (no %s; its progress is in %s)",
			path, experiment.ModelFile, filepath.Join(dir, experiment.LogFile))
	}
	m, err := nsrnn.Load(file)
	if err != nil {
		return nil, nil, fmt.Errorf("--model: %w", err)
	}
	if m.Config().OutputVocab != len(t.Vocabulary()) || m.Config().InputVocab != len(t.Terminals()) {
		return nil, nil, fmt.Errorf("--model %s has a vocabulary of %d symbols, task %s has %d", path, m.Config().OutputVocab, t, len(t.Vocabulary()))
	}
	return t, m, nil
}
