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
	modelPath, last := modelFlags(fs, "the task comes from the run's "+experiment.RunFile+" unless --task is given")
	taskName := fs.String("task", "", "task: "+taskNames()+" (default: the run's, from its "+experiment.RunFile+")")
	params := taskParamFlags(fs)
	grammar := cli.AddGrammarFlag(fs)
	gf := fs.Lookup("grammar")
	gf.Usage = "task definition: " + joinNames(data.GrammarNames()) + " (default: the run's, from its " + experiment.RunFile + ", else paper)"
	gf.DefValue = ""
	grammarFile := grammarFileFlag(fs)
	force := fs.Bool("force", false, "evaluate on a --task, --grammar-file, task parameters or under a --grammar other than the run's")
	testFile := fs.String("test", "", "file of test strings, one per line (default: sample them with --per-length and --seed; for a run on your own strings, its --test file)")
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
	t, m, s, err := loadEvalRun(*modelPath, *last, *taskName, *grammarFile, params(), *grammar, fs.Changed("grammar"), *force)
	if err != nil {
		return err
	}
	var strs [][]int
	switch {
	case *testFile == "" && !t.HasDistribution():
		// The user's strings: the run's test file.
		if s.Files == nil || s.Files.Test == nil {
			return fmt.Errorf("--test is required: the run in %s was trained on your own strings without a --test file, and they have no distribution to sample a test set from", *modelPath)
		}
		if strs, err = s.ReadTest(); err != nil {
			return fmt.Errorf("the run's test file: %w", err)
		}
	case *testFile != "":
		if strs, err = data.ReadStringsFile(*testFile, t.Terminals()); err != nil {
			return fmt.Errorf("--test: %w", err)
		}
		if len(strs) == 0 {
			return fmt.Errorf("--test %s: the file holds no strings", *testFile)
		}
	default:
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
// one) into the task to evaluate on, the loaded model and the run's
// settings (zero without a run.json). The task, its parameters and its
// definition are the run's, from its run.json, unless --task,
// --grammar-file, the task-parameter flags (p, those given) or --grammar
// (given) say otherwise, which must then agree with the run's unless
// forced; without a run.json, --task or --grammar-file is required. A run
// on a grammar file reads it again (it must not have changed), and one on
// the user's strings has their vocabulary. Errors name the flags.
func loadEvalRun(path string, last bool, taskName, grammarFile string, p data.Params, flag data.Grammar, grammarGiven, force bool) (*data.Task, *nsrnn.Model, experiment.Settings, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, experiment.Settings{}, fmt.Errorf("--model: %w", err)
	}
	dir, file := path, filepath.Join(path, experiment.ModelFile)
	if !fi.IsDir() {
		dir, file = filepath.Dir(path), path
	}
	s, err := experiment.ReadSettings(dir)
	hasRun := err == nil
	userRun := hasRun && (s.GrammarFile != nil || s.Files != nil)
	if grammarFile == "" && !(userRun && taskName == "") {
		t, m, err := loadTableEvalRun(path, last, taskName, p, flag, grammarGiven, force)
		return t, m, s, err
	}
	// A grammar file given, or a run on the user's data evaluated on it.
	runFile := filepath.Join(dir, experiment.RunFile)
	g := flag
	if hasRun && !grammarGiven {
		g = s.Grammar
	} else if hasRun && flag != s.Grammar && !force {
		return nil, nil, s, fmt.Errorf("--grammar %s differs from the run's grammar %s (%s); use --force to evaluate it under %s anyway", flag, s.Grammar, runFile, flag)
	}
	var t *data.Task
	if grammarFile != "" {
		var d *experiment.FileDigest
		if t, d, err = taskOrGrammarFile(taskName, grammarFile, p, g); err != nil {
			return nil, nil, s, err
		}
		if hasRun && (s.GrammarFile == nil || s.GrammarFile.SHA256 != d.SHA256) && !force {
			return nil, nil, s, fmt.Errorf("--grammar-file %s is not the data the model was trained on (%s, %s); use --force to evaluate it on %s anyway", grammarFile, s.Task, runFile, grammarFile)
		}
	} else {
		if p != nil && !force {
			return nil, nil, s, fmt.Errorf("the task parameters %q do not apply to the run's data, %s (%s)", p, s.Task, runFile)
		}
		rs := s
		rs.Grammar = g
		if t, err = rs.TaskDef(); err != nil {
			return nil, nil, s, fmt.Errorf("--model %s: %w", path, err)
		}
	}
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) && hasRun {
		return nil, nil, s, fmt.Errorf("--model %s: the run has not finished: no model yet (no %s; its progress is in %s, its best model so far in %s)",
			path, experiment.ModelFile, filepath.Join(dir, experiment.LogFile), filepath.Join(dir, experiment.CheckpointFile))
	}
	m, err := loadModelFile(file, last)
	if err != nil {
		return nil, nil, s, fmt.Errorf("--model: %w", err)
	}
	if m.Config().OutputVocab != len(t.Vocabulary()) || m.Config().InputVocab != len(t.Terminals()) {
		return nil, nil, s, fmt.Errorf("--model %s has a vocabulary of %d symbols, task %s has %d", path, m.Config().OutputVocab, t, len(t.Vocabulary()))
	}
	return t, m, s, nil
}

// loadTableEvalRun is loadEvalRun for a task of the table.
func loadTableEvalRun(path string, last bool, taskName string, p data.Params, flag data.Grammar, grammarGiven, force bool) (*data.Task, *nsrnn.Model, error) {
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
		return nil, nil, fmt.Errorf("--model %s: the run has not finished: no model yet (no %s; its progress is in %s, its best model so far in %s)",
			path, experiment.ModelFile, filepath.Join(dir, experiment.LogFile), filepath.Join(dir, experiment.CheckpointFile))
	}
	m, err := loadModelFile(file, last)
	if err != nil {
		return nil, nil, fmt.Errorf("--model: %w", err)
	}
	if m.Config().OutputVocab != len(t.Vocabulary()) || m.Config().InputVocab != len(t.Terminals()) {
		return nil, nil, fmt.Errorf("--model %s has a vocabulary of %d symbols, task %s has %d", path, m.Config().OutputVocab, t, len(t.Vocabulary()))
	}
	return t, m, nil
}
