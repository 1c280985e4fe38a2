package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

func init() {
	prog.Register("eval", "measure a trained model's cross-entropy difference by length", runEval)
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("eval", stdout)
	modelPath, last := modelFlags(fs, taskFromRun+" unless --task is given")
	taskName := fs.String("task", "", "task: "+taskNames()+" (default: the run's, from its "+protocol.RunFile+" or "+actionsSettingsFile+")")
	params := taskParamFlags(fs)
	grammar := cli.AddGrammarFlag(fs)
	gf := fs.Lookup("grammar")
	gf.Usage = "task definition: " + joinNames(data.GrammarNames()) + " (default: the run's, from its " + protocol.RunFile + " or " + actionsSettingsFile + ", else paper)"
	gf.DefValue = ""
	grammarFile := grammarFileFlag(fs)
	force := fs.Bool("force", false, "evaluate on a --task, --grammar-file, task parameters or under a --grammar other than the run's")
	testFile := fs.String("test", "", "file of test strings, one per line (default: sample them with --per-length and --seed; for a run on your own strings, its --test file)")
	// The default is written in the usage, not given to pflag, which
	// would print a second one beside the test file's.
	lengths := fs.String("lengths", "", "MIN:MAX test lengths (default 40:100; with a test file, its strings' lengths)")
	perLength := fs.Int("per-length", 100, "sampled test strings per valid length")
	seed := fs.Uint64("seed", 7, "seed of the sampled test set")
	batchSize := fs.Int("batch-size", 10, "strings per batch")
	asCSV := fs.Bool("csv", false, "print CSV (length,strings,symbols,cross_entropy,lower_bound,cross_entropy_diff,cross_entropy_diff_given_length, the last the paper's Figure 2 measure; for the user's strings length,strings,symbols,cross_entropy,perplexity) instead of JSON")
	devFlag := cli.DeviceFlag(fs, "cfl", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	dev, err := cli.ParseDeviceFlag(*devFlag)
	if err != nil {
		return err
	}
	if *modelPath == "" {
		return fmt.Errorf("--model is required")
	}
	if *batchSize < 1 {
		return fmt.Errorf("--batch-size %d must be at least 1", *batchSize)
	}
	if *perLength < 1 {
		return fmt.Errorf("--per-length %d must be at least 1", *perLength)
	}
	if *testFile != "" {
		for _, f := range []string{"per-length", "seed"} {
			if fs.Changed(f) {
				return fmt.Errorf("--%s is for a sampled test set: --test gives the strings", f)
			}
		}
	}
	if *lengths == "" {
		*lengths = "40:100"
	}
	minLen, maxLen, err := parseLengths(*lengths)
	if err != nil {
		return fmt.Errorf("--lengths: %w", err)
	}
	t, m, s, err := loadEvalRun(*modelPath, *last, *taskName, *grammarFile, params(), *grammar, fs.Changed("grammar"), *force)
	if err != nil {
		return err
	}
	if err := cli.UseDevice(m, dev); err != nil {
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
		// The longest batch is checked against the memory rules before
		// the test set is drawn and its lower bound computed.
		if err := m.CheckBatch(min(*batchSize, *perLength), maxLen); err != nil {
			flag := fmt.Sprintf("--batch-size %d", *batchSize)
			if *perLength < *batchSize {
				flag = fmt.Sprintf("--per-length %d", *perLength)
			}
			return fmt.Errorf("--lengths %s, %s: %w", *lengths, flag, err)
		}
		spec := protocol.TestSpec{MinLength: minLen, MaxLength: maxLen, PerLength: *perLength, Seed: *seed}
		if strs, err = protocol.SampleTestSet(t, spec); err != nil {
			return err
		}
	}
	// A file's strings are evaluated at their own lengths unless
	// --lengths says which.
	if !fs.Changed("lengths") && (*testFile != "" || !t.HasDistribution()) {
		minLen, maxLen = len(strs[0]), len(strs[0])
		for _, w := range strs {
			minLen, maxLen = min(minLen, len(w)), max(maxLen, len(w))
		}
	}
	// Evaluation takes seconds to minutes: say what is under way on
	// stderr, stdout being the report's.
	fmt.Fprintf(stderr, "evaluating %s on %d strings…\n", *modelPath, len(strs))
	start := time.Now()
	rep, err := protocol.EvaluateByLength(m, t, strs, minLen, maxLen, *batchSize)
	if err != nil {
		// A string of the file outside the language or the lengths: name
		// its line (one string per line).
		if se, ok := errors.AsType[*data.StringError](err); ok && *testFile != "" {
			if n := len(strs[se.Index]); n < minLen || n > maxLen {
				return &data.LineError{Name: *testFile, Line: se.Index + 1, Err: fmt.Errorf("length %d outside --lengths %s", n, *lengths)}
			}
			return &data.LineError{Name: *testFile, Line: se.Index + 1, Err: notInLanguage(se.Err, t, strs[se.Index])}
		}
		return err
	}
	rep.Model = *modelPath
	fmt.Fprintf(stderr, "evaluated %s in %.1f s\n", *modelPath, time.Since(start).Seconds())
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
func loadEvalRun(path string, last bool, taskName, grammarFile string, p data.Params, flag data.Grammar, grammarGiven, force bool) (*data.Task, *nsrnn.Model, protocol.Settings, error) {
	r, err := openEvalRun(path)
	if err != nil {
		return nil, nil, r.s, err
	}
	s, hasRun, runFile := r.s, r.hasRun, r.settingsPath
	userRun := hasRun && (s.GrammarFile != nil || s.Files != nil)
	if grammarFile == "" && !(userRun && taskName == "") {
		t, m, err := loadTableEvalRun(r, last, taskName, p, flag, grammarGiven, force)
		return t, m, s, err
	}
	// A grammar file given, or a run on the user's data evaluated on it.
	g := flag
	if hasRun && !grammarGiven {
		g = s.Grammar
	} else if hasRun && flag != s.Grammar && !force {
		return nil, nil, s, fmt.Errorf("--grammar %s differs from the run's grammar %s (%s); use --force to evaluate it under %s anyway", flag, s.Grammar, runFile, flag)
	}
	var t *data.Task
	if grammarFile != "" {
		var d *protocol.FileDigest
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
		if t, err = rs.TaskDefIn(r.dir); err != nil {
			return nil, nil, s, fmt.Errorf("--model %s: %w", path, err)
		}
	}
	m, err := r.load(t, last)
	return t, m, s, err
}

// evalRun is eval's --model resolved: the run directory, the model file
// to load, and the run's settings (zero without a run.json, or a cfl
// actions run's settings.json) with the path they were read from.
type evalRun struct {
	path, dir, file string
	s               protocol.Settings
	hasRun          bool
	settingsPath    string
}

// openEvalRun resolves --model, a run directory or a model or checkpoint
// file in one, and reads the run's settings if it has any.
func openEvalRun(path string) (evalRun, error) {
	r := evalRun{path: path, dir: path, file: filepath.Join(path, protocol.ModelFile)}
	fi, err := os.Stat(path)
	if err != nil {
		return r, fmt.Errorf("--model: %w", err)
	}
	if !fi.IsDir() {
		r.dir, r.file = filepath.Dir(path), path
	}
	r.s, r.settingsPath, err = readRunSettings(r.dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return r, fmt.Errorf("--model %s: %w", path, err)
	default:
		r.hasRun = true
	}
	return r, nil
}

// load loads the run's model (or, from a checkpoint file, the best so far
// or with last the model at the checkpoint) and checks it against t.
func (r evalRun) load(t *data.Task, last bool) (*nsrnn.Model, error) {
	if _, err := os.Stat(r.file); errors.Is(err, os.ErrNotExist) && r.hasRun {
		return nil, fmt.Errorf("--model: %w", protocol.MissingModel(r.dir))
	}
	m, err := loadModelFile(r.file, last)
	if err != nil {
		return nil, fmt.Errorf("--model: %w", err)
	}
	if r.hasRun {
		if err := protocol.CheckRunModel(m, r.s.Model, r.file); err != nil {
			return nil, fmt.Errorf("--model: %w", err)
		}
	}
	if m.Config().OutputVocab != len(t.Vocabulary()) || m.Config().InputVocab != len(t.Terminals()) {
		return nil, fmt.Errorf("--model %s has a vocabulary of %d symbols, task %s has %d", r.path, m.Config().OutputVocab, t, len(t.Vocabulary()))
	}
	return m, nil
}

// loadTableEvalRun is loadEvalRun for a task of the table.
func loadTableEvalRun(r evalRun, last bool, taskName string, p data.Params, flag data.Grammar, grammarGiven, force bool) (*data.Task, *nsrnn.Model, error) {
	s, hasRun := r.s, r.hasRun
	g := flag
	switch {
	case !hasRun && taskName == "":
		return nil, nil, fmt.Errorf("--task is required: --model %s has no %s to take it from (one of %s)", r.path, protocol.RunFile, taskNames())
	case hasRun && taskName == "":
		taskName = s.Task
	case hasRun && taskName != s.Task && !force:
		return nil, nil, fmt.Errorf("--task %s differs from the task the model was trained on, %s (%s); use --force to evaluate it on %s anyway",
			taskName, s.Task, r.settingsPath, taskName)
	}
	if hasRun {
		switch {
		case !grammarGiven:
			g = s.Grammar
		case flag != s.Grammar && !force:
			return nil, nil, fmt.Errorf("--grammar %s differs from the run's grammar %s (%s); use --force to evaluate it under %s anyway",
				flag, s.Grammar, r.settingsPath, flag)
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
			t.Params(), s.TaskParams, r.settingsPath, t)
	}
	m, err := r.load(t, last)
	return t, m, err
}
