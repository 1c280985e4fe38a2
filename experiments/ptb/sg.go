package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"

	"github.com/nsrnn/nsrnn/data/syntaxgym"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("sg", "score SyntaxGym suites (the SG score and circuit scores)", runSG)
}

// surprisalSource gives the surprisals of a suite's tokens: out[j][k] is
// the surprisal in bits of token k of sentence j of s.Sentences(). Its
// errors name the flag that selected the source.
type surprisalSource func(s *syntaxgym.Suite) ([][]float64, error)

// tsvFileSource reads the surprisals of any suite from the lm-zoo TSV file
// at path (the --suite mode).
func tsvFileSource(path string) surprisalSource {
	return func(s *syntaxgym.Suite) ([][]float64, error) {
		out, err := syntaxgym.ReadSurprisalsFile(path, s.Sentences())
		if err != nil {
			return nil, fmt.Errorf("--surprisals: %w", err)
		}
		return out, nil
	}
}

// tsvDirSource reads the surprisals of a suite from the lm-zoo TSV file
// <base>.tsv in dir, where <base> is the base name of the suite's file
// without ".json" (the --suites mode).
func tsvDirSource(dir string) surprisalSource {
	return func(s *syntaxgym.Suite) ([][]float64, error) {
		path := filepath.Join(dir, s.BaseName()+".tsv")
		out, err := syntaxgym.ReadSurprisalsFile(path, s.Sentences())
		if err != nil {
			return nil, fmt.Errorf("--surprisals: suite %s: %w", s.Name, err)
		}
		return out, nil
	}
}

// modelSource returns the source that computes the surprisals of a
// suite's sentences with the trained model of the PTB run in dir: each
// sentence alone from a fresh state, <eos> as the first input, its
// whitespace tokens mapped to the run's vocabulary as written where the
// vocabulary has them (a cased corpus, such as WikiText-2), lowercased
// otherwise (the Penn Treebank's), in bits;
// with released, the raw output score divided by ln 2, as the paper's
// released script did. A token not in the vocabulary is read as <unk>
// and recorded in unknown, or, with strict, is an error naming the suite
// file, item, condition and region. progress, when set, shows progress.
// The model computes on dev (a *cli.DeviceError where it cannot).
func modelSource(dir string, dev nsrnn.Device, released bool, batch int, strict bool, unknown *unknownWords, progress io.Writer) (surprisalSource, error) {
	m, v, _, err := loadRun(dir)
	if err != nil {
		return nil, err
	}
	if err := cli.UseDevice(m, dev); err != nil {
		return nil, err
	}
	return func(s *syntaxgym.Suite) ([][]float64, error) {
		sents := s.Sentences()
		ids := make([][]int, len(sents))
		for i, sent := range sents {
			ids[i] = make([]int, len(sent.Tokens))
			// The tokens as written, beside sent.Tokens, which are
			// lowercased.
			written := strings.Fields(sent.Text)
			if len(written) != len(sent.Tokens) {
				written = sent.Tokens
			}
			for j, w := range sent.Tokens {
				id, ok := v.Lookup(written[j])
				if !ok {
					id, ok = v.Lookup(w)
				}
				if !ok {
					where := fmt.Sprintf("in item %d, condition %s, region %d", sent.ItemNumber, sent.Condition, sent.Region[j])
					if strict {
						return nil, fmt.Errorf("--strict: %s: %q %s is not in the run's vocabulary", s.File, w, where)
					}
					unknown.addAt(s.File, w, where)
					id = v.Unk()
				}
				ids[i][j] = id
			}
		}
		opt := nsrnn.SurprisalOptions{Start: v.EOS(), Batch: batch, RawLogit: released}
		if progress != nil {
			bar := progressbar.NewOptions(len(sents), progressbar.OptionSetWriter(progress),
				progressbar.OptionSetDescription(s.Name), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
			opt.Progress = func(done, total int) { _ = bar.Set(done) }
			defer bar.Clear()
		}
		return m.Surprisals(ids, opt)
	}, nil
}

// sgSuiteResult is the JSON form of one suite's score.
type sgSuiteResult struct {
	*syntaxgym.Result
	File  string  `json:"file"`
	Level string  `json:"level"`
	Score float64 `json:"score"` // accuracy or item accuracy, by level
	// UnknownWords is, with --model, the number of the suite's tokens not
	// in the run's vocabulary, read as <unk>.
	UnknownWords *int `json:"unknown_words,omitempty"`
}

// sgSummary is the JSON form of the --suites mode.
type sgSummary struct {
	Level    string                   `json:"level"`
	Suites   []sgSuiteResult          `json:"suites"`
	SGScore  float64                  `json:"sg_score"`
	Circuits []syntaxgym.CircuitScore `json:"circuits,omitempty"`
	// UnknownWords is, with --model, the number of tokens of every suite
	// not in the run's vocabulary, read as <unk>.
	UnknownWords *int `json:"unknown_words,omitempty"`
}

// runSG scores SyntaxGym suites on the surprisals of a language model.
func runSG(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("sg", stdout)
	suiteFile := fs.String("suite", "", "score the one suite in this JSON file")
	suiteDir := fs.String("suites", "", "score every suite (*.json except circuits.json) in this directory")
	surprisals := fs.String("surprisals", "", "lm-zoo TSV surprisals (bits): a file with --suite; with --suites, a directory holding <suite>.tsv for each suite file <suite>.json")
	model := fs.String("model", "", "compute the surprisals with the model of this ptb train run directory (or of its checkpoint file: the best model so far of an unfinished run)")
	convention := fs.String("convention", "surprisal", "with --model: surprisal (−log₂ p, correct), or released (the raw output score / ln 2 of the paper's released script, which inverts single-token comparisons; to reproduce its numbers only)")
	batch := fs.Int("batch", 32, "with --model: sentences scored together")
	circuitsFile := fs.String("circuits", "", "with --suites, a JSON file of circuits whose scores to print")
	itemLevel := fs.Bool("item-level", false, "score items, as Hu et al. (2020): an item counts only when all of its predictions hold (default: (item, prediction) pairs)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	strict := fs.Bool("strict", false, "with --model: refuse tokens not in the run's vocabulary, instead of reading them as <unk>")
	devFlag := cli.DeviceFlag(fs, "ptb", "with --model")
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
	switch {
	case *suiteFile == "" && *suiteDir == "":
		return errors.New("--suite or --suites is required")
	case *suiteFile != "" && *suiteDir != "":
		return errors.New("--suite and --suites are mutually exclusive")
	case *surprisals == "" && *model == "":
		return errors.New("--surprisals or --model is required")
	case *surprisals != "" && *model != "":
		return errors.New("--surprisals and --model are mutually exclusive")
	case *circuitsFile != "" && *suiteDir == "":
		return errors.New("--circuits needs --suites")
	case *model == "" && (fs.Changed("convention") || fs.Changed("batch") || *strict || !dev.IsCPU()):
		return errors.New("--convention, --batch, --strict and --device go with --model")
	}
	level := syntaxgym.PairLevel
	if *itemLevel {
		level = syntaxgym.ItemLevel
	}

	var src surprisalSource
	var unknown *unknownWords
	if *model != "" {
		if *convention != "surprisal" && *convention != "released" {
			return fmt.Errorf("--convention %q: want surprisal or released", *convention)
		}
		if *batch < 1 {
			return fmt.Errorf("--batch %d must be at least 1", *batch)
		}
		var bar io.Writer
		if cli.IsTerminal(stderr) {
			bar = stderr
		}
		var err error
		unknown = newUnknownWords()
		// Its errors name --model (loadRun's) or --device.
		if src, err = modelSource(*model, dev, *convention == "released", *batch, *strict, unknown, bar); err != nil {
			return err
		}
	} else {
		info, err := os.Stat(*surprisals)
		if err != nil {
			return fmt.Errorf("--surprisals: %w", err)
		}
		switch {
		case *suiteFile != "" && info.IsDir():
			return fmt.Errorf("--surprisals: %s is a directory: with --suite, give a TSV file", *surprisals)
		case *suiteDir != "" && !info.IsDir():
			return fmt.Errorf("--surprisals: %s is not a directory: with --suites, give the directory of the <suite>.tsv files", *surprisals)
		case *suiteFile != "":
			src = tsvFileSource(*surprisals)
		default:
			src = tsvDirSource(*surprisals)
		}
	}

	if *suiteFile != "" {
		s, err := syntaxgym.ReadSuiteFile(*suiteFile)
		if err != nil {
			return fmt.Errorf("--suite: %w", err)
		}
		res, err := scoreSuite(s, src, level)
		if err != nil {
			return err
		}
		if unknown != nil {
			res.UnknownWords = ptrTo(unknown.count[s.File])
			unknown.report(stderr, "sg", "the run's vocabulary")
		}
		if *asJSON {
			return writeJSONLine(stdout, res)
		}
		return writeSuiteText(stdout, res)
	}

	suites, err := syntaxgym.ReadSuiteDir(*suiteDir)
	if err != nil {
		return fmt.Errorf("--suites: %w", err)
	}
	var circuits []syntaxgym.Circuit
	if *circuitsFile != "" {
		if circuits, err = syntaxgym.ReadCircuitsFile(*circuitsFile); err != nil {
			return fmt.Errorf("--circuits: %w", err)
		}
		// A circuit's suites must be among those to score: found out now,
		// not after every suite has been scored.
		names := map[string]bool{}
		for _, s := range suites {
			names[s.Name] = true
		}
		for _, c := range circuits {
			for _, n := range c.Suites {
				if !names[n] {
					return fmt.Errorf("--circuits %s: circuit %q names suite %q, which is not among the suites of --suites %s", *circuitsFile, c.Name, n, *suiteDir)
				}
			}
		}
	}
	sum, err := scoreSuites(suites, circuits, src, level)
	if err != nil {
		return err
	}
	if unknown != nil {
		sum.UnknownWords = ptrTo(unknown.total())
		for i := range sum.Suites {
			sum.Suites[i].UnknownWords = ptrTo(unknown.count[sum.Suites[i].File])
		}
		unknown.report(stderr, "sg", "the run's vocabulary")
	}
	if *asJSON {
		return writeJSONLine(stdout, sum)
	}
	return writeSummaryText(stdout, sum)
}

// scoreSuite scores one suite on the surprisals of src.
func scoreSuite(s *syntaxgym.Suite, src surprisalSource, level syntaxgym.Level) (sgSuiteResult, error) {
	tokens, err := src(s)
	if err != nil {
		return sgSuiteResult{}, err
	}
	res, err := s.EvaluateTokens(tokens)
	if err != nil {
		return sgSuiteResult{}, err
	}
	return sgSuiteResult{Result: res, File: s.File, Level: level.String(), Score: res.Score(level)}, nil
}

// scoreSuites scores suites on the surprisals of src, and computes the SG
// score and the scores of circuits, which may be nil.
func scoreSuites(suites []*syntaxgym.Suite, circuits []syntaxgym.Circuit, src surprisalSource, level syntaxgym.Level) (*sgSummary, error) {
	sum := &sgSummary{Level: level.String()}
	results := make([]*syntaxgym.Result, len(suites))
	for i, s := range suites {
		r, err := scoreSuite(s, src, level)
		if err != nil {
			return nil, err
		}
		sum.Suites = append(sum.Suites, r)
		results[i] = r.Result
	}
	sum.SGScore = syntaxgym.SGScore(results, level)
	if circuits != nil {
		cs, err := syntaxgym.CircuitScores(circuits, results, level)
		if err != nil {
			return nil, fmt.Errorf("--circuits: %w", err)
		}
		sum.Circuits = cs
	}
	return sum, nil
}

func ptrTo[T any](v T) *T { return &v }

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func writeSuiteText(w io.Writer, r sgSuiteResult) error {
	_, err := fmt.Fprintf(w, "suite          %s (%s)\nitems          %d\npairs          %d\ncorrect pairs  %d\naccuracy       %.4f\ncorrect items  %d\nitem accuracy  %.4f\nscore          %.4f (%s level)\n",
		r.Suite, r.File, r.Items, r.Pairs, r.Correct, r.Accuracy, r.ItemsCorrect, r.ItemAccuracy, r.Score, r.Level)
	return err
}

func writeSummaryText(w io.Writer, sum *sgSummary) error {
	width := len("SG score")
	for _, r := range sum.Suites {
		width = max(width, len(r.Suite))
	}
	for _, c := range sum.Circuits {
		width = max(width, len(c.Name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %5s  %5s  %7s  %8s  %13s  %13s\n", width, "suite", "items", "pairs", "correct", "accuracy", "items correct", "item accuracy")
	for _, r := range sum.Suites {
		fmt.Fprintf(&b, "%-*s  %5d  %5d  %7d  %8.4f  %13d  %13.4f\n", width, r.Suite, r.Items, r.Pairs, r.Correct, r.Accuracy, r.ItemsCorrect, r.ItemAccuracy)
	}
	fmt.Fprintf(&b, "\n%-*s  %.4f (%s level, mean over %d suites)\n", width, "SG score", sum.SGScore, sum.Level, len(sum.Suites))
	if len(sum.Circuits) > 0 {
		fmt.Fprintf(&b, "\n%-*s  %6s  %s\n", width, "circuit", "suites", "score")
		for _, c := range sum.Circuits {
			fmt.Fprintf(&b, "%-*s  %6d  %.4f\n", width, c.Name, len(c.Suites), c.Score)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
