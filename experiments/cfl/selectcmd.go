package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/protocol"
)

func init() {
	prog.Register("select", "pick the best run per task and model of a sweep and evaluate it on the test set", runSelect)
}

func runSelect(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("select", stdout)
	sweep := fs.String("sweep", "", "sweep directory (required); the selection and the test results are written into it")
	also := fs.StringArray("also", nil, "a further directory whose runs are candidates too, such as a later sweep of more learning rates or restarts (repeatable; none by default)")
	var only data.Grammar
	fs.Var(grammarFilter{&only}, "grammar", "select only the runs of this task definition ("+
		joinNames(data.GrammarNames())+"; default: every run, each tested under its own, from its "+protocol.RunFile+"); selected.json holds the latest selection, and each grammar's test reports are kept apart (test/TASK/released/ for the released grammar's)")
	lengths := fs.String("test-lengths", "40:100", "MIN:MAX test lengths")
	perLength := fs.Int("per-length", 100, "test strings per valid length")
	seed := fs.Uint64("seed", 7, "seed of the test set (the same for all models of a task)")
	batchSize := fs.Int("batch-size", 10, "strings per batch in the test evaluation")
	noTest := fs.Bool("no-test", false, "skip the test evaluation")
	retest := fs.Bool("retest", false, "evaluate every selected model, even one whose test report from an earlier selection (in the sweep or an --also directory) is of the same run and test set")
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
	if *perLength < 1 {
		return fmt.Errorf("--per-length %d must be at least 1", *perLength)
	}
	if *batchSize < 1 {
		return fmt.Errorf("--batch-size %d must be at least 1", *batchSize)
	}
	if *noTest {
		for _, f := range []string{"test-lengths", "per-length", "seed", "batch-size", "retest"} {
			if fs.Changed(f) {
				return fmt.Errorf("--%s is for the test evaluation, which --no-test skips", f)
			}
		}
	}
	minLen, maxLen, err := parseLengths(*lengths)
	if err != nil {
		return fmt.Errorf("--test-lengths: %w", err)
	}
	// The test set is refused now if it cannot be held, before anything
	// is evaluated or written: --per-length strings for every length of
	// --test-lengths (an overestimate where the task has no strings of
	// some of them).
	if !*noTest {
		count := *perLength
		if n := maxLen - minLen + 1; count > math.MaxInt/n {
			count = math.MaxInt
		} else {
			count *= n
		}
		if err := data.CheckSampleSize(count, maxLen); err != nil {
			return fmt.Errorf("--per-length %d, --test-lengths %s: %w", *perLength, *lengths, err)
		}
	}
	if _, err := os.Stat(*sweep); err != nil {
		return fmt.Errorf("--sweep: %w", err)
	}
	// A run's own directory is not a sweep: the selection and test results
	// would be written among its files.
	if _, err := os.Stat(filepath.Join(*sweep, protocol.RunFile)); err == nil {
		return fmt.Errorf("--sweep %s is a run's directory (it holds %s): give the directory that holds the runs, such as the --out of cfl sweep", *sweep, protocol.RunFile)
	}
	runs, err := protocol.FindRuns(*sweep)
	if err != nil {
		return fmt.Errorf("--sweep: %w", err)
	}
	// A run found twice (the same directory named twice, or one inside
	// another, however written) would count twice among the candidates.
	abs := func(dir string) string {
		if a, err := filepath.Abs(dir); err == nil {
			return a
		}
		return filepath.Clean(dir)
	}
	seen := map[string]bool{}
	for _, r := range runs {
		seen[abs(r.Dir)] = true
	}
	for _, dir := range *also {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("--also: %w", err)
		}
		more, err := protocol.FindRuns(dir)
		if err != nil {
			return fmt.Errorf("--also %s: %w", dir, err)
		}
		for _, r := range more {
			a := abs(r.Dir)
			if seen[a] {
				return fmt.Errorf("--also %s: run %s is already among the runs of --sweep or an earlier --also", dir, r.Dir)
			}
			seen[a] = true
		}
		runs = append(runs, more...)
	}
	if only != "" {
		runs = slices.DeleteFunc(runs, func(r protocol.Run) bool { return r.Settings.Grammar != only })
	}
	sel := protocol.SelectRuns(*sweep, runs)
	sel.Also = *also
	if len(sel.Selected) == 0 {
		return fmt.Errorf("--sweep %s: no finished runs (%d unfinished)", *sweep, sel.Unfinished)
	}
	// The test results and the figures are per task: one definition and
	// one setting of the task parameters each.
	// Each run is compared with the first selected run of its task (the
	// selection is ordered by task, then parameters and definition, so a
	// conflict shows against the first).
	first := map[string]*protocol.Selected{}
	for i := range sel.Selected {
		b := &sel.Selected[i]
		a := first[b.Task]
		if a == nil {
			first[b.Task] = b
			continue
		}
		if a.TaskParams.String() != b.TaskParams.String() {
			return fmt.Errorf("--sweep %s holds runs of %s with two settings of its parameters (%q in %s, %q in %s); select each from a directory of its own",
				*sweep, a.Task, a.TaskParams, a.Dir, b.TaskParams, b.Dir)
		}
		if a.Grammar != b.Grammar {
			return fmt.Errorf("--sweep %s holds runs of %s under two grammars (%s in %s, %s in %s); choose one with --grammar",
				*sweep, a.Task, a.Grammar, a.Dir, b.Grammar, b.Dir)
		}
		if !a.SameData(b) {
			return fmt.Errorf("--sweep %s holds runs named %s on two different data sets (files of the same name whose contents differ: %s and %s); select each from a directory of its own",
				*sweep, a.Task, a.Dir, b.Dir)
		}
	}
	if sel.Unfinished > 0 {
		fmt.Fprintf(stderr, "select: ignoring %s (no %s)\n", cli.Count(sel.Unfinished, "unfinished run"), protocol.SummaryFile)
	}
	if n, total := unstarted(*sweep); n > 0 {
		fmt.Fprintf(stderr, "select: %d of the sweep's %d runs (%s) have not started; the selection is among those that have\n", n, total, filepath.Join(*sweep, sweepManifestFile))
	}
	// The selection is written into the sweep directory: find out now
	// rather than after the evaluation.
	if err := protocol.CheckWritable(*sweep); err != nil {
		return fmt.Errorf("--sweep: %w", err)
	}
	var evalErr error
	if !*noTest {
		spec := protocol.TestSpec{MinLength: minLen, MaxLength: maxLen, PerLength: *perLength, Seed: *seed}
		var reuse []string
		if !*retest {
			reuse = append([]string{*sweep}, *also...)
		}
		evalErr = evaluateSelection(sel, spec, *batchSize, reuse, stderr)
	}
	// selected.json holds what could be evaluated, whatever happened to
	// the rest.
	if err := protocol.WriteJSON(filepath.Join(*sweep, protocol.SelectedFile), sel); err != nil {
		return errors.Join(evalErr, err)
	}
	if evalErr != nil {
		return fmt.Errorf("%w (%s holds the selection, with the test results obtained)", evalErr, filepath.Join(*sweep, protocol.SelectedFile))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sel); err != nil {
			return err
		}
	} else if err := writeSelectionTable(stdout, sel); err != nil {
		return err
	}
	var skipped []string
	for _, s := range sel.Selected {
		if s.TestError != "" {
			skipped = append(skipped, s.Dir)
		}
	}
	if len(skipped) > 0 {
		return fmt.Errorf("%d of %d selected models could not be tested (see above; test_error in %s): %s",
			len(skipped), len(sel.Selected), filepath.Join(*sweep, protocol.SelectedFile), strings.Join(skipped, ", "))
	}
	return nil
}

// evaluateSelection evaluates the selected models on their tasks' test
// set, one model at a time (each released before the next is loaded), and
// writes the per-length results to DIR/test/<task>/<model>.json as each
// is done. A selected run whose report under one of the reuse directories
// is of the same run and test set is not evaluated again: that report is
// written there instead.
func evaluateSelection(sel *protocol.Selection, spec protocol.TestSpec, batchSize int, reuse []string, stderr io.Writer) error {
	// reusedFrom is the report reused for each selected run, by its
	// directory: one of this sweep's written before reports were kept
	// per grammar is moved to its place, not copied beside it.
	reusedFrom := map[string]string{}
	testDir := filepath.Join(sel.Sweep, protocol.TestDir) + string(filepath.Separator)
	_, err := sel.Evaluate(spec, protocol.TestOptions{
		BatchSize: batchSize,
		Reuse:     reuse,
		Reused: func(s *protocol.Selected, path string) {
			reusedFrom[s.Dir] = path
			fmt.Fprintf(stderr, "select: %s was tested on this test set before: using %s (--retest to test it again)\n", s.Dir, path)
		},
		Start: func(s *protocol.Selected, n int) {
			on := taskLabel(s.Task, s.Grammar)
			if s.Files != nil && s.Files.Test != nil {
				// A run on the user's strings: its task is named after
				// its training file, its test set is its test file.
				on = s.Files.Test.Path
			}
			fmt.Fprintf(stderr, "select: testing %s on %s (%d strings) …\n", s.Dir, on, n)
		},
		Done: func(s *protocol.Selected, rep *protocol.Report) error {
			path := protocol.TestResultPath(sel.Sweep, s.Task, s.Grammar, s.Model)
			if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
				return err
			}
			if err := protocol.WriteJSON(path, rep); err != nil {
				return err
			}
			if old, ok := reusedFrom[s.Dir]; ok && filepath.Clean(old) != filepath.Clean(path) && strings.HasPrefix(filepath.Clean(old), testDir) {
				if err := os.Remove(old); err != nil {
					fmt.Fprintf(stderr, "select: %s is now %s; the old file could not be removed: %v\n", old, path, err)
				}
			}
			s.TestFile = path
			return nil
		},
		Skipped: func(s *protocol.Selected, err error) {
			fmt.Fprintf(stderr, "select: skipping the test of %s (%s on %s): %v\n", s.Dir, s.Model, taskLabel(s.Task, s.Grammar), err)
		},
	})
	return err
}

// writeSelectionTable prints the selection as an aligned table.
func writeSelectionTable(w io.Writer, sel *protocol.Selection) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task\tmodel\tlr\tstack\tseed\tbest epoch\tvalid diff\ttest diff\truns")
	for _, s := range sel.Selected {
		stack := "-"
		switch {
		case s.PushHiddenState:
			stack = "hidden"
		case s.StackEmbedding > 0:
			stack = fmt.Sprintf("e=%d", s.StackEmbedding)
		case s.States > 0:
			stack = fmt.Sprintf("Q=%d,G=%d", s.States, s.Symbols)
		}
		test := "-"
		switch {
		case s.TestDiff != nil:
			test = fmt.Sprintf("%.4f", *s.TestDiff)
		case s.TestCrossEntropy != nil:
			test = fmt.Sprintf("ce %.4f", *s.TestCrossEntropy)
		case s.TestError != "":
			test = "failed"
		}
		valid := fmt.Sprintf("%.4f", s.ValidDiff)
		if s.NoLowerBound {
			// No lower bound: the cross-entropy itself.
			valid = fmt.Sprintf("ce %.4f", s.ValidCrossEntropy)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d/%d\t%s\t%s\t%d\n",
			taskLabel(s.Task, s.Grammar), s.Model, formatLR(s.LR), stack, s.Seed, s.BestEpoch, s.Epochs, valid, test, s.Candidates)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d finished runs, %d unfinished ignored; differences in nats per symbol above the lower bound", sel.Finished, sel.Unfinished)
	if slices.ContainsFunc(sel.Selected, func(s protocol.Selected) bool { return s.NoLowerBound }) {
		fmt.Fprint(w, " (\"ce\": the cross-entropy itself, for runs on your own strings, which have no lower bound)")
	}
	tested := sel.Test != nil || slices.ContainsFunc(sel.Selected, func(s protocol.Selected) bool {
		return s.TestDiff != nil || s.TestCrossEntropy != nil || s.TestError != ""
	})
	if tested {
		// Runs on the user's strings are tested on their own test files,
		// the others on strings sampled from their tasks.
		own := 0
		for _, s := range sel.Selected {
			if s.Files != nil {
				own++
			}
		}
		switch {
		case own == len(sel.Selected):
			fmt.Fprint(w, "; test: each run's test file")
		case sel.Test == nil:
		case own > 0:
			fmt.Fprintf(w, "; test: each run's test file for runs on your own strings, otherwise %d strings per length %d–%d, seed %d", sel.Test.PerLength, sel.Test.MinLength, sel.Test.MaxLength, sel.Test.Seed)
		default:
			fmt.Fprintf(w, "; test: %d strings per length %d–%d, seed %d", sel.Test.PerLength, sel.Test.MinLength, sel.Test.MaxLength, sel.Test.Seed)
		}
	}
	fmt.Fprintln(w)
	return nil
}

// grammarFilter is select's --grammar: a task definition, or empty for
// every one.
type grammarFilter struct{ g *data.Grammar }

func (f grammarFilter) String() string     { return string(*f.g) }
func (f grammarFilter) Set(s string) error { return f.g.Set(s) }
func (f grammarFilter) Type() string       { return "grammar" }

// unstarted counts the runs that the sweep.json of a sweep directory
// lists and whose directory holds no run yet, and all it lists; 0, 0 when
// it has no readable sweep.json (a directory of runs made otherwise).
func unstarted(sweep string) (n, total int) {
	b, err := readlimit.File(filepath.Join(sweep, sweepManifestFile), readlimit.JSON, true)
	if err != nil {
		return 0, 0
	}
	var m sweepManifest
	if json.Unmarshal(b, &m) != nil {
		return 0, 0
	}
	for _, r := range m.Runs {
		// The run's directory as the sweep named it, which may be
		// relative to where it ran: its last four parts
		// (<task>/<model>/lr<LR>/seed<K>) under the sweep directory.
		parts := strings.Split(filepath.ToSlash(r.Dir), "/")
		if len(parts) < 4 {
			return 0, 0
		}
		dir := filepath.Join(append([]string{sweep}, parts[len(parts)-4:]...)...)
		if _, err := os.Stat(filepath.Join(dir, protocol.RunFile)); err != nil {
			n++
		}
	}
	return n, len(m.Runs)
}
