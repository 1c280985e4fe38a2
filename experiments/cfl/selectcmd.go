package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("select", "pick the best run per task and model of a sweep and evaluate it on the test set", runSelect)
}

// Files and directories a select writes into the sweep directory.
const (
	selectedFile = "selected.json"
	testDir      = "test"
)

// selectedRun is the best run of one model on one task.
type selectedRun struct {
	Task           string  `json:"task"`
	Model          string  `json:"model"`
	Dir            string  `json:"dir"`
	LR             float64 `json:"lr"`
	Seed           uint64  `json:"seed"`
	StackEmbedding int     `json:"stack_embedding,omitempty"`
	States         int     `json:"states,omitempty"`
	Symbols        int     `json:"symbols,omitempty"`
	Parameters     int     `json:"parameters"`
	Epochs         int     `json:"epochs"`
	BestEpoch      int     `json:"best_epoch"`
	ValidDiff      float64 `json:"valid_cross_entropy_diff"`
	// Candidates is the number of finished runs the selection chose from.
	Candidates int `json:"candidates"`
	// TestDiff and TestFile are set when the test set was evaluated.
	TestDiff *float64 `json:"test_cross_entropy_diff,omitempty"`
	TestFile string   `json:"test_file,omitempty"`
}

// selection is selected.json.
type selection struct {
	Sweep      string        `json:"sweep"`
	Finished   int           `json:"finished_runs"`
	Unfinished int           `json:"unfinished_runs"`
	Test       *testSpec     `json:"test,omitempty"`
	Selected   []selectedRun `json:"selected"`
}

// testSpec describes the sampled test set, the same for every model of a
// task: --per-length strings of every valid length in the range, drawn
// with the seed exactly as eval does.
type testSpec struct {
	MinLength int    `json:"min_length"`
	MaxLength int    `json:"max_length"`
	PerLength int    `json:"per_length"`
	Seed      uint64 `json:"seed"`
}

// foundRun is a training run directory found in a sweep.
type foundRun struct {
	dir      string
	settings runSettings
	sum      *summary // nil when unfinished
}

// findRuns returns the training runs under root: the directories holding
// run.json, in lexical order.
func findRuns(root string) ([]foundRun, error) {
	var runs []foundRun
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != runFile {
			return nil
		}
		dir := filepath.Dir(path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var s runSettings
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		r := foundRun{dir: dir, settings: s}
		if sum, err := readSummary(dir); err == nil {
			r.sum = sum
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		runs = append(runs, r)
		return nil
	})
	return runs, err
}

// selectBest picks, per task and model kind, the finished run with the
// lowest best validation cross-entropy difference (ties: the first in
// directory order). The result is ordered by task and then by the paper's
// model order.
func selectBest(root string) (*selection, error) {
	runs, err := findRuns(root)
	if err != nil {
		return nil, err
	}
	sel := &selection{Sweep: root}
	type key struct{ task, model string }
	best := map[key]*selectedRun{}
	for _, r := range runs {
		if r.sum == nil {
			sel.Unfinished++
			continue
		}
		sel.Finished++
		k := key{r.settings.Task, r.settings.Model.Kind}
		c := &selectedRun{
			Task: k.task, Model: k.model, Dir: r.dir, LR: r.settings.LR, Seed: r.settings.Seed,
			StackEmbedding: r.settings.Model.StackEmbedding, States: r.settings.Model.States, Symbols: r.settings.Model.Symbols,
			Parameters: r.sum.Parameters, Epochs: r.sum.Epochs, BestEpoch: r.sum.BestEpoch, ValidDiff: r.sum.BestValidCrossEntropyDiff,
		}
		if b := best[k]; b == nil || c.ValidDiff < b.ValidDiff {
			if b != nil {
				c.Candidates = b.Candidates
			}
			best[k] = c
		}
		best[k].Candidates++
	}
	for _, b := range best {
		sel.Selected = append(sel.Selected, *b)
	}
	taskIdx := func(t string) int { return slices.Index(data.TaskNames(), t) }
	slices.SortFunc(sel.Selected, func(a, b selectedRun) int {
		if d := taskIdx(a.Task) - taskIdx(b.Task); d != 0 {
			return d
		}
		return slices.Index(nsrnn.Kinds, a.Model) - slices.Index(nsrnn.Kinds, b.Model)
	})
	return sel, nil
}

// testResultPath is where select writes the test evaluation of a task's
// selected model.
func testResultPath(sweep, task, model string) string {
	return filepath.Join(sweep, testDir, task, model+".json")
}

func runSelect(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("select", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	sweep := fs.String("sweep", "", "sweep directory (required)")
	lengths := fs.String("test-lengths", "40:100", "MIN:MAX test lengths")
	perLength := fs.Int("per-length", 100, "test strings per valid length")
	seed := fs.Uint64("seed", 7, "seed of the test set (the same for all models of a task)")
	batchSize := fs.Int("batch-size", 10, "strings per batch in the test evaluation")
	noTest := fs.Bool("no-test", false, "skip the test evaluation")
	asJSON := fs.Bool("json", false, "print the selection as JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *sweep == "" {
		return fmt.Errorf("--sweep is required")
	}
	if *perLength < 1 || *batchSize < 1 {
		return fmt.Errorf("--per-length and --batch-size must be at least 1")
	}
	minLen, maxLen, err := parseLengths(*lengths)
	if err != nil {
		return fmt.Errorf("--test-lengths: %w", err)
	}
	if _, err := os.Stat(*sweep); err != nil {
		return fmt.Errorf("--sweep: %w", err)
	}
	sel, err := selectBest(*sweep)
	if err != nil {
		return fmt.Errorf("--sweep: %w", err)
	}
	if len(sel.Selected) == 0 {
		return fmt.Errorf("--sweep %s: no finished runs (%d unfinished)", *sweep, sel.Unfinished)
	}
	if sel.Unfinished > 0 {
		fmt.Fprintf(stderr, "select: ignoring %d unfinished runs (no %s)\n", sel.Unfinished, summaryFile)
	}
	if !*noTest {
		spec := &testSpec{MinLength: minLen, MaxLength: maxLen, PerLength: *perLength, Seed: *seed}
		sel.Test = spec
		if err := evaluateSelection(sel, spec, *batchSize, stderr); err != nil {
			return err
		}
	}
	if err := writeJSON(filepath.Join(*sweep, selectedFile), sel); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sel)
	}
	return writeSelectionTable(stdout, sel)
}

// evaluateSelection evaluates every selected model on its task's test
// set and writes the per-length results to DIR/test/<task>/<model>.json.
func evaluateSelection(sel *selection, spec *testSpec, batchSize int, stderr io.Writer) error {
	testSets := map[string][][]int{}
	for i := range sel.Selected {
		s := &sel.Selected[i]
		t, err := data.NewTask(s.Task)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(s.Dir, runFile), err)
		}
		strs, ok := testSets[s.Task]
		if !ok {
			rng := rand.New(rand.NewPCG(spec.Seed, 2)) // as eval samples it
			if strs, err = data.SampleTestSet(t.Grammar(), spec.PerLength, spec.MinLength, spec.MaxLength, rng); err != nil {
				return fmt.Errorf("test set of %s: %w", s.Task, err)
			}
			testSets[s.Task] = strs
		}
		m, err := nsrnn.Load(filepath.Join(s.Dir, modelFile))
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "select: testing %s on %s (%d strings) …\n", s.Dir, s.Task, len(strs))
		rep, err := evaluate(m, t, strs, spec.MinLength, spec.MaxLength, batchSize)
		if err != nil {
			return fmt.Errorf("testing %s: %w", s.Dir, err)
		}
		rep.Model = s.Dir
		path := testResultPath(sel.Sweep, s.Task, s.Model)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := writeJSON(path, rep); err != nil {
			return err
		}
		d := rep.Overall.Difference
		s.TestDiff, s.TestFile = &d, path
	}
	return nil
}

// writeSelectionTable prints the selection as an aligned table.
func writeSelectionTable(w io.Writer, sel *selection) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task\tmodel\tlr\tstack\tseed\tbest epoch\tvalid diff\ttest diff\truns")
	for _, s := range sel.Selected {
		stack := "-"
		switch {
		case s.StackEmbedding > 0:
			stack = fmt.Sprintf("e=%d", s.StackEmbedding)
		case s.States > 0:
			stack = fmt.Sprintf("Q=%d,G=%d", s.States, s.Symbols)
		}
		test := "-"
		if s.TestDiff != nil {
			test = fmt.Sprintf("%.4f", *s.TestDiff)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d/%d\t%.4f\t%s\t%d\n",
			s.Task, s.Model, formatLR(s.LR), stack, s.Seed, s.BestEpoch, s.Epochs, s.ValidDiff, test, s.Candidates)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d finished runs, %d unfinished ignored; differences in nats per symbol above the lower bound", sel.Finished, sel.Unfinished)
	if sel.Test != nil {
		fmt.Fprintf(w, "; test: %d strings per length %d–%d, seed %d", sel.Test.PerLength, sel.Test.MinLength, sel.Test.MaxLength, sel.Test.Seed)
	}
	fmt.Fprintln(w)
	return nil
}
