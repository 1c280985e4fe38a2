package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("eval", "measure a trained model's cross-entropy difference by length", runEval)
}

// lengthResult is the evaluation of the strings of one length (or all).
type lengthResult struct {
	Length       int     `json:"length,omitempty"`
	Strings      int     `json:"strings"`
	Symbols      int     `json:"symbols"`
	CrossEntropy float64 `json:"cross_entropy"`
	LowerBound   float64 `json:"lower_bound"`
	Difference   float64 `json:"cross_entropy_diff"`
}

// evalReport is the output of eval.
type evalReport struct {
	Task     string         `json:"task"`
	Model    string         `json:"model"`
	Overall  lengthResult   `json:"overall"`
	ByLength []lengthResult `json:"by_length"`
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("eval", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("model", "", "directory of a training run (required)")
	taskName := fs.String("task", "", "task (required)")
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
	t, err := data.NewTask(*taskName)
	if err != nil {
		return fmt.Errorf("--task: %w", err)
	}
	minLen, maxLen, err := parseLengths(*lengths)
	if err != nil {
		return fmt.Errorf("--lengths: %w", err)
	}
	m, err := nsrnn.Load(filepath.Join(*dir, modelFile))
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
		rng := rand.New(rand.NewPCG(*seed, 2))
		if strs, err = data.SampleTestSet(t.Grammar(), *perLength, minLen, maxLen, rng); err != nil {
			return err
		}
	}
	rep, err := evaluate(m, t, strs, minLen, maxLen, *batchSize)
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
		return writeEvalCSV(stdout, rep)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// evaluate computes the cross-entropy difference of m on strs, by length
// and overall. The lower bound uses the valid lengths in [minLen, maxLen].
func evaluate(m *nsrnn.Model, t *data.Task, strs [][]int, minLen, maxLen, batchSize int) (*evalReport, error) {
	lb, err := data.ComputeLowerBound(t.Grammar(), strs, minLen, maxLen)
	if err != nil {
		return nil, err
	}
	k := float64(lb.ValidLengths)
	byLen := map[int][]int{} // length → indices into strs
	for i, w := range strs {
		byLen[len(w)] = append(byLen[len(w)], i)
	}
	ls := make([]int, 0, len(byLen))
	for l := range byLen {
		ls = append(ls, l)
	}
	sort.Ints(ls)
	rep := &evalReport{Task: t.Name()}
	var all lengthResult
	for _, l := range ls {
		idx := byLen[l]
		r := lengthResult{Length: l, Strings: len(idx), Symbols: len(idx) * (l + 1)}
		model, truth := 0.0, 0.0
		for start := 0; start < len(idx); start += batchSize {
			var b nsrnn.Batch
			for _, i := range idx[start:min(start+batchSize, len(idx))] {
				b = append(b, strs[i])
				// −log p(w·EOS) of the true distribution, p(w) = p_G(w | |w|)/K.
				truth += -(lb.LogProbsGivenLength[i] - math.Log(k))
			}
			loss, err := m.Loss(b)
			if err != nil {
				return nil, err
			}
			model += loss * float64(len(b))
		}
		r.CrossEntropy = model / float64(r.Symbols)
		r.LowerBound = truth / float64(r.Symbols)
		r.Difference = r.CrossEntropy - r.LowerBound
		rep.ByLength = append(rep.ByLength, r)
		all.Strings += r.Strings
		all.Symbols += r.Symbols
		all.CrossEntropy += model
		all.LowerBound += truth
	}
	all.CrossEntropy /= float64(all.Symbols)
	all.LowerBound /= float64(all.Symbols)
	all.Difference = all.CrossEntropy - all.LowerBound
	rep.Overall = all
	return rep, nil
}

func writeEvalCSV(w io.Writer, rep *evalReport) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"length", "strings", "symbols", "cross_entropy", "lower_bound", "cross_entropy_diff"})
	row := func(l string, r lengthResult) {
		f := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
		cw.Write([]string{l, strconv.Itoa(r.Strings), strconv.Itoa(r.Symbols), f(r.CrossEntropy), f(r.LowerBound), f(r.Difference)})
	}
	for _, r := range rep.ByLength {
		row(strconv.Itoa(r.Length), r)
	}
	row("all", rep.Overall)
	cw.Flush()
	return cw.Error()
}
