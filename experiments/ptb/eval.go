package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// runEval is the eval command: the perplexity of a run's model on a split
// of its corpus (or of files given), in chunks as training reads them.
func runEval(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("eval", stdout)
	run := fs.String("model", "", "run directory of ptb train, or its checkpoint file for the best model so far of an unfinished run (required)")
	dataDir := fs.String("data", "", "directory of the corpus (default: the run's corpus, from its run.json)")
	validFile := fs.String("valid", "", "validation split file, in place of --data (default: the run's)")
	testFile := fs.String("test", "", "test split file, in place of --data; implies --split test (default: the run's)")
	split := fs.String("split", "valid", "split: valid or test")
	asJSON := fs.Bool("json", false, "print JSON")
	strict := fs.Bool("strict", false, "refuse words not in the run's vocabulary, instead of reading them as <unk>")
	batch := fs.Int("batch", 0, "parallel streams (default: the run's)")
	bptt := fs.Int("bptt", 0, "chunk length (default: the run's)")
	precFlag := precisionFlag(fs, "", "default: the run's")
	devFlag := cli.DeviceFlag(fs, "ptb", "")
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
	if *run == "" {
		return errors.New("--model is required")
	}
	if *testFile != "" && !fs.Changed("split") {
		*split = "test"
	}
	if *dataDir != "" && (*validFile != "" || *testFile != "") {
		return errors.New("--data and --valid or --test: give the corpus directory or a split file, not both")
	}
	if *precFlag != "" {
		if _, _, err := parsePrecision(*precFlag); err != nil {
			return err
		}
	}
	if *split != "valid" && *split != "test" {
		return fmt.Errorf("--split %q: want valid or test", *split)
	}
	switch {
	case *split == "test" && *validFile != "":
		return errors.New("--valid with --split test: give --test for the test split, or --split valid")
	case *split == "valid" && *testFile != "":
		return errors.New("--test with --split valid: give --valid for the validation split, or --split test")
	case *batch < 0 || *bptt < 0:
		return fmt.Errorf("--batch %d and --bptt %d must not be negative (0: the run's)", *batch, *bptt)
	}
	file, err := splitFile(*run, *dataDir, *split, map[string]string{"valid": *validFile, "test": *testFile})
	if err != nil {
		return err
	}
	unknown := newUnknownWords()
	opt := &ptb.Options{Strict: *strict, Unknown: unknown.add}
	noteBLAS(stderr, dev)
	res, err := evaluateRun(*run, file, *batch, *bptt, *precFlag, dev, opt)
	if err != nil {
		return err
	}
	res.Split = *split
	res.UnknownWords = unknown.total()
	unknown.report(stderr, "eval", "the run's vocabulary")
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "%s perplexity %.2f (%s, %.4f nats per token)\n", *split, res.Perplexity, cli.Count(res.Targets, "target"), res.CrossEntropy)
	return nil
}

// runPath resolves a run given as --model: its directory, or the
// checkpoint file in it (ckpt, empty for a directory).
func runPath(path string) (dir, ckpt string) {
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() && filepath.Base(path) == protocol.CheckpointFile {
		return filepath.Dir(path), path
	}
	return path, ""
}

// splitFile is the file of split ("valid" or "test") that eval reads: in
// the --data directory, the file given for it (files, by split), or the
// run's own (its corpus directory or files, from its run.json).
func splitFile(run, dataDir, split string, files map[string]string) (string, error) {
	names := map[string]string{"valid": ptb.ValidFile, "test": ptb.TestFile}
	switch {
	case dataDir != "":
		return filepath.Join(dataDir, names[split]), nil
	case files[split] != "":
		return files[split], nil
	}
	run, _ = runPath(run)
	if fi, err := os.Stat(run); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("--model %s: not a run directory (%v)", run, cmp.Or(err, errors.New("a file")))
	}
	s, exists, err := readRunSettings(run)
	switch {
	case err != nil:
		return "", fmt.Errorf("--model %s: %w", run, err)
	case !exists:
		return "", fmt.Errorf("--model %s: not a ptb train run: no %s (give the corpus with --data or --%s to evaluate a model file of another origin)", run, protocol.RunFile, split)
	case s.Data == "" && s.Files == nil:
		return "", fmt.Errorf("--data or --%s is required: --model %s has a %s that names no corpus", split, run, protocol.RunFile)
	}
	for _, sp := range s.splits() {
		if sp.key != split && sp.key != names[split] {
			continue
		}
		// The run's own file, as the run recorded it: a file changed since
		// gives another perplexity under the same name.
		if want := s.DataSHA256[sp.key]; want != "" {
			got, err := fileSHA256(sp.path)
			if err != nil {
				return "", fmt.Errorf("--model %s: the run's %s split: %w", run, split, err)
			}
			if got != want {
				return "", fmt.Errorf("--model %s: %s has changed since the run was trained on it (SHA-256 %s; %s records %s): restore it, or give it with --%s to evaluate on it as it is now",
					run, sp.path, short(got), protocol.RunFile, short(want), split)
			}
		}
		return sp.path, nil
	}
	return "", fmt.Errorf("--model %s: no %s split", run, split) // not reached: every run has both
}

// evalResult is the perplexity of a model on a split.
type evalResult struct {
	Split        string  `json:"split"`
	Perplexity   float64 `json:"perplexity"`
	CrossEntropy float64 `json:"cross_entropy"`
	Targets      int     `json:"targets"`
	// UnknownWords is the number of words of the split not in the run's
	// vocabulary, read as <unk>.
	UnknownWords int     `json:"unknown_words"`
	Seconds      float64 `json:"seconds"`
}

// loadRun loads the model and vocabulary of a finished PTB run, checking
// that they belong together: the vocabulary's size must be the model's,
// and vocab.txt must be the file the run wrote (its SHA-256 in run.json;
// runs made before it was recorded are checked by size alone). Its errors
// name --model or the file at fault: callers return them as they are.
//
// path is the run's directory, or its checkpoint file: then the model is
// the best so far of the run, finished or not (an error before its first
// epoch has been validated).
func loadRun(path string) (*nsrnn.Model, *ptb.Vocab, settings, error) {
	dir, ckpt := runPath(path)
	s, exists, err := readRunSettings(dir)
	switch {
	case err != nil:
		return nil, nil, s, fmt.Errorf("--model %s: %w", dir, err)
	case !exists:
		return nil, nil, s, fmt.Errorf("--model %s: not a ptb run: no %s", dir, protocol.RunFile)
	case s.Data == "" && s.Files == nil:
		return nil, nil, s, fmt.Errorf("--model %s: not a ptb train run: its %s names no corpus (\"data\" or \"files\"); a cfl run?", dir, protocol.RunFile)
	}
	mp := filepath.Join(dir, protocol.ModelFile)
	var m *nsrnn.Model
	switch _, statErr := os.Stat(mp); {
	case ckpt != "":
		mp = ckpt
		cm, err := nsrnn.LoadCheckpointModels(ckpt)
		switch {
		case err != nil:
			return nil, nil, s, fmt.Errorf("--model %s: %w", path, err)
		case cm.Best == nil:
			return nil, nil, s, fmt.Errorf("--model %s: no epoch has been validated yet, so the checkpoint holds no best model", path)
		}
		m = cm.Best
	case errors.Is(statErr, os.ErrNotExist):
		return nil, nil, s, fmt.Errorf("--model: %w", protocol.MissingModel(dir))
	default:
		if m, err = nsrnn.Load(mp); err != nil {
			return nil, nil, s, err
		}
	}
	if err := protocol.CheckRunModel(m, s.Model, mp); err != nil {
		return nil, nil, s, fmt.Errorf("--model %s: %w", dir, err)
	}
	vp := filepath.Join(dir, VocabFile)
	if s.VocabSHA256 != "" {
		h, err := fileSHA256(vp)
		if err != nil {
			return nil, nil, s, fmt.Errorf("--model %s: %w", dir, err)
		}
		if h != s.VocabSHA256 {
			return nil, nil, s, fmt.Errorf("--model %s: %s is not the vocabulary the run was trained with (SHA-256 %s; %s records %s): restore the run's file", dir, vp, short(h), protocol.RunFile, short(s.VocabSHA256))
		}
	}
	v, err := ptb.LoadVocab(vp, nil)
	if err != nil {
		return nil, nil, s, err
	}
	if c := m.Config(); v.Size() != c.InputVocab || v.Size() != c.OutputVocab {
		return nil, nil, s, fmt.Errorf("--model %s: %s holds %d words, the model's vocabulary %d: not the run's vocabulary", dir, vp, v.Size(), c.OutputVocab)
	}
	if s.VocabSHA256 == "" {
		// A run from before the digest: its words in another order (a
		// vocab.txt edited or replaced) would score every token under
		// another's output. Where the run's training file is still there,
		// the vocabulary it makes must be vocab.txt's.
		train := s.splits()[0].path
		if _, err := os.Stat(train); err == nil {
			built, _, err := ptb.ReadTrain(train, &ptb.Options{VocabSize: s.VocabSize})
			if err == nil && !slices.Equal(built.Words(), v.Words()) {
				return nil, nil, s, fmt.Errorf("--model %s: %s is not the vocabulary that the run's training file %s makes (its words differ, or their order): restore the run's file", dir, vp, train)
			}
		}
	}
	return m, v, s, nil
}

// evaluateRun computes the perplexity of a finished run's model on a split
// file, batched and with the output precision of the run unless batch,
// bptt or precision ("float32", "float64") is given, on the device dev;
// opt reads the split.
func evaluateRun(dir, file string, batch, bptt int, precision string, dev nsrnn.Device, opt *ptb.Options) (*evalResult, error) {
	m, v, s, err := loadRun(dir)
	if err != nil {
		return nil, err
	}
	if precision == "" {
		precision = cmp.Or(s.Precision, "float64")
	}
	if m.Precision, err = nsrnn.ParsePrecision(precision); err != nil {
		return nil, fmt.Errorf("--model %s: %w", dir, err)
	}
	if err := cli.UseDevice(m, dev); err != nil {
		return nil, err
	}
	if batch <= 0 {
		batch = s.Batch
	}
	if bptt <= 0 {
		bptt = s.BPTT
	}
	toks, err := ptb.ReadSplit(file, v, opt)
	if err != nil {
		return nil, err
	}
	b, err := ptb.NewBatcher(toks, batch, bptt, v.EOS())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	st, err := m.NewStream(batch)
	if err != nil {
		return nil, fmt.Errorf("--batch %d: %w", batch, err)
	}
	if err := st.CheckChunk(min(bptt, b.RowLen())); err != nil {
		return nil, fmt.Errorf("--batch %d, --bptt %d: %w", batch, bptt, err)
	}
	start := time.Now()
	ce, n, err := st.CrossEntropy(b.NumChunks(), chunkFunc(b))
	if err != nil {
		return nil, err
	}
	return &evalResult{Perplexity: math.Exp(ce), CrossEntropy: ce, Targets: n, Seconds: time.Since(start).Seconds()}, nil
}
