package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/internal/boundjson"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// Files and directories that cfl select writes into a sweep directory.
const (
	// SelectedFile is the Selection, in the sweep directory.
	SelectedFile = "selected.json"
	// TestDir holds the test Reports, one file per task and model (see
	// TestResultPath).
	TestDir = "test"
)

// TestResultPath is where cfl select writes the test report of the
// selected model of kind model on task under grammar g:
// sweep/test/<task>/<model>.json for the paper's grammar (and a task
// without one), sweep/test/<task>/<g>/<model>.json for another, so that
// the selections of a sweep under two grammars keep their reports apart.
func TestResultPath(sweep, task string, g data.Grammar, model string) string {
	if g == "" || g == data.GrammarPaper {
		return filepath.Join(sweep, TestDir, task, model+".json")
	}
	return filepath.Join(sweep, TestDir, task, string(g), model+".json")
}

// testResultPaths are the paths a test report of s may be read from in
// sweep: TestResultPath's, and for a grammar other than the paper's, the
// paper's path too, where reports were written before the grammar was in
// the path (the reader checks that such a report is of s's run).
func testResultPaths(sweep string, s *Selected) []string {
	p := TestResultPath(sweep, s.Task, s.Grammar, s.Model)
	if old := TestResultPath(sweep, s.Task, "", s.Model); old != p {
		return []string{p, old}
	}
	return []string{p}
}

// Run is a training run found on disk.
type Run struct {
	// Dir is the run's directory.
	Dir string
	// Settings are the run's settings, from its run.json.
	Settings Settings
	// Summary is the run's summary.json, nil while the run is unfinished.
	Summary *Summary
}

// FindRuns returns the training runs under root, the directories that
// hold a run.json, in lexical order.
func FindRuns(root string) ([]Run, error) {
	var runs []Run
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != RunFile {
			return nil
		}
		dir := filepath.Dir(path)
		s, err := ReadSettings(dir)
		if err != nil {
			return err
		}
		r := Run{Dir: dir, Settings: s}
		if sum, err := ReadSummary(dir); err == nil {
			r.Summary = sum
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		runs = append(runs, r)
		return nil
	})
	return runs, err
}

// Selected is the best run of one model kind on one task, under one task
// definition.
type Selected struct {
	Task    string       `json:"task"`
	Grammar data.Grammar `json:"grammar"`
	// TaskParams are the task's parameters not at their defaults (none
	// for the paper's tasks as it states them).
	TaskParams data.Params `json:"task_params,omitempty"`
	// Model is the model kind.
	Model string `json:"model"`
	// Dir is the run's directory.
	Dir            string  `json:"dir"`
	LR             float64 `json:"lr"`
	Seed           uint64  `json:"seed"`
	StackEmbedding int     `json:"stack_embedding,omitempty"`
	// PushHiddenState is set for a JM that pushes its hidden state (no
	// StackEmbedding of its own).
	PushHiddenState bool `json:"push_hidden_state,omitempty"`
	States          int  `json:"states,omitempty"`
	Symbols         int  `json:"symbols,omitempty"`
	Parameters      int  `json:"parameters"`
	Epochs          int  `json:"epochs"`
	BestEpoch       int  `json:"best_epoch"`
	// ValidDiff is the run's best validation cross-entropy difference,
	// the selection criterion.
	ValidDiff float64 `json:"valid_cross_entropy_diff"`
	// Candidates is the number of finished runs the selection chose from.
	Candidates int `json:"candidates"`
	// TestDiff is set when the test set was evaluated (Selection.Evaluate),
	// and TestFile when its report was written to a file. TestError says
	// why the model could not be evaluated (a missing or corrupt model
	// file, say); the other selected models are evaluated all the same.
	TestDiff  *float64 `json:"test_cross_entropy_diff,omitempty"`
	TestFile  string   `json:"test_file,omitempty"`
	TestError string   `json:"test_error,omitempty"`
	// GrammarFile and Files are the run's user data (Settings), for a
	// run on a grammar file or on the user's strings.
	GrammarFile *FileDigest `json:"grammar_file,omitempty"`
	Files       *TextFiles  `json:"files,omitempty"`
	// NoLowerBound is set for a run on the user's strings, which have no
	// lower bound: the selection criterion is then ValidCrossEntropy,
	// the run's best validation cross-entropy (ValidDiff is 0 and left
	// out of the JSON form), and the test result TestCrossEntropy, on
	// the run's test file.
	NoLowerBound      bool     `json:"no_lower_bound,omitempty"`
	ValidCrossEntropy float64  `json:"valid_cross_entropy,omitempty"`
	TestCrossEntropy  *float64 `json:"test_cross_entropy,omitempty"`
}

// selectedJSON has Selected's fields without its methods.
type selectedJSON Selected

// MarshalJSON writes the selected run, without "valid_cross_entropy_diff"
// when it has NoLowerBound.
func (s Selected) MarshalJSON() ([]byte, error) {
	if !s.NoLowerBound {
		return json.Marshal(selectedJSON(s))
	}
	return boundjson.Marshal(selectedJSON(s), []string{"valid_cross_entropy_diff"}, nil)
}

// score is the selection criterion: the best validation cross-entropy
// difference, or the cross-entropy itself without a lower bound.
func (s *Selected) score() float64 {
	if s.NoLowerBound {
		return s.ValidCrossEntropy
	}
	return s.ValidDiff
}

// settings returns the settings that name the selected run's task.
func (s *Selected) settings() Settings {
	return Settings{Task: s.Task, TaskParams: s.TaskParams, Grammar: s.Grammar, GrammarFile: s.GrammarFile, Files: s.Files}
}

// SameData reports whether s and o were trained on the same data: the
// same grammar file or the same strings files, by their SHA-256 digests
// (always for two runs on tasks of the table). Runs of one task name on
// different data (two files of the same name) cannot share one test
// result or one figure.
func (s *Selected) SameData(o *Selected) bool {
	return dataKey(s.settings()) == dataKey(o.settings())
}

// dataKey identifies the user data of a run's settings by its digests
// ("" for a task of the table), so that runs on different files of the
// same name are selected apart.
func dataKey(s Settings) string {
	switch {
	case s.GrammarFile != nil:
		return s.GrammarFile.SHA256
	case s.Files != nil:
		return s.Files.Train.SHA256 + " " + s.Files.Valid.SHA256
	}
	return ""
}

// Selection is the outcome of model selection over a sweep (selected.json).
type Selection struct {
	// Sweep is the directory the runs were found in, which holds the
	// selection and its test results.
	Sweep string `json:"sweep"`
	// Also are further directories whose runs were candidates too (runs
	// of the same protocol made later, with more learning rates or
	// restarts, in directories of their own).
	Also []string `json:"also,omitempty"`
	// Finished and Unfinished count the runs found with and without a
	// summary; only finished runs are selected.
	Finished   int `json:"finished_runs"`
	Unfinished int `json:"unfinished_runs"`
	// Test is the test set the selected models were evaluated on, if any.
	Test     *TestSpec  `json:"test,omitempty"`
	Selected []Selected `json:"selected"`
}

// SelectBest finds the runs under root (FindRuns) and selects the best of
// each model kind on each task (SelectRuns).
func SelectBest(root string) (*Selection, error) {
	runs, err := FindRuns(root)
	if err != nil {
		return nil, err
	}
	return SelectRuns(root, runs), nil
}

// SelectRuns picks, per task, task parameters, task definition and model
// kind, the finished run with the lowest best validation cross-entropy
// difference (ties: the first in the order of runs). The selection is
// ordered by task (in the order of data.AllTaskNames), parameters,
// definition (data.GrammarNames) and model kind (nsrnn.KindNames); sweep is
// recorded as its Sweep.
func SelectRuns(sweep string, runs []Run) *Selection {
	sel := &Selection{Sweep: sweep, Selected: []Selected{}}
	type key struct {
		task    string
		params  string // data.Params.String
		grammar data.Grammar
		model   string
		data    string // dataKey
	}
	best := map[key]*Selected{}
	var order []key
	for _, r := range runs {
		if r.Summary == nil {
			sel.Unfinished++
			continue
		}
		sel.Finished++
		s := r.Settings
		k := key{s.Task, s.TaskParams.String(), data.Grammar(s.Grammar.String()), s.Model.Kind, dataKey(s)}
		c := &Selected{
			Task: k.task, Grammar: k.grammar, TaskParams: s.TaskParams, Model: k.model, Dir: r.Dir, LR: s.LR, Seed: s.Seed,
			StackEmbedding: s.Model.StackEmbedding, PushHiddenState: s.Model.PushHiddenState,
			States: s.Model.States, Symbols: s.Model.Symbols, Parameters: r.Summary.Parameters, Epochs: r.Summary.Epochs, BestEpoch: r.Summary.BestEpoch,
			ValidDiff: r.Summary.BestValidCrossEntropyDiff, GrammarFile: s.GrammarFile, Files: s.Files,
		}
		if r.Summary.NoLowerBound {
			c.NoLowerBound, c.ValidCrossEntropy = true, r.Summary.BestValidCrossEntropy
		}
		b := best[k]
		if b == nil {
			order = append(order, k)
		}
		if b == nil || c.score() < b.score() {
			if b != nil {
				c.Candidates = b.Candidates
			}
			best[k] = c
		}
		best[k].Candidates++
	}
	for _, k := range order {
		sel.Selected = append(sel.Selected, *best[k])
	}
	rank := func(names []string, n string) int {
		if i := slices.Index(names, n); i >= 0 {
			return i
		}
		return len(names) // unknown names last, in the order found
	}
	slices.SortStableFunc(sel.Selected, func(a, b Selected) int {
		if d := rank(data.AllTaskNames(), a.Task) - rank(data.AllTaskNames(), b.Task); d != 0 {
			return d
		}
		if d := strings.Compare(a.TaskParams.String(), b.TaskParams.String()); d != 0 {
			return d
		}
		if d := rank(data.GrammarNames(), string(a.Grammar)) - rank(data.GrammarNames(), string(b.Grammar)); d != 0 {
			return d
		}
		return rank(nsrnn.KindNames(), a.Model) - rank(nsrnn.KindNames(), b.Model)
	})
	return sel
}

// ReadSelection reads the selection that cfl select wrote into the sweep
// directory (selected.json). The error when there is none wraps
// os.ErrNotExist.
//
// A sweep directory moved or copied since its selection was made (a
// results directory keeps a copy of one), or read from another working
// directory than the one its selection was made in, still names its runs
// and test reports where they were: each such path under the directory
// the selection was made in (Selection.Sweep) is read as the same path
// under sweep where that exists, even where the original path exists too
// (it may be another sweep's, or the original of a copy), and Sweep
// becomes sweep. Other paths, and those of the further directories
// (Also), are kept.
func ReadSelection(sweep string) (*Selection, error) {
	var sel Selection
	if err := readJSON(filepath.Join(sweep, SelectedFile), &sel); err != nil {
		return nil, err
	}
	sel.relocate(sweep)
	return &sel, nil
}

// relocate rewrites the paths of sel made under sel.Sweep to the same
// paths under sweep, where they exist (ReadSelection).
func (sel *Selection) relocate(sweep string) {
	from := filepath.Clean(sel.Sweep)
	if sel.Sweep == "" || from == filepath.Clean(sweep) {
		return
	}
	moved := false
	move := func(p *string) {
		if *p == "" {
			return
		}
		rel, err := filepath.Rel(from, filepath.Clean(*p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return
		}
		there := filepath.Join(sweep, rel)
		if _, err := os.Stat(there); err == nil {
			*p, moved = there, true
		}
	}
	for i := range sel.Selected {
		move(&sel.Selected[i].Dir)
		move(&sel.Selected[i].TestFile)
	}
	if moved {
		sel.Sweep = sweep
	}
}

// TestOptions are the options of Selection.Evaluate.
type TestOptions struct {
	// BatchSize is the number of test strings per batch (default 10).
	BatchSize int
	// Start, when set, is called when each model has been loaded, before
	// it is evaluated, with the number of test strings.
	Start func(s *Selected, strings int)
	// Done, when set, is called after each model has been evaluated and
	// released, with its report (whose Model is the run's directory); an
	// error from it stops the evaluation and is returned.
	Done func(s *Selected, rep *Report) error
	// Skipped, when set, is called for each model that could not be
	// loaded or evaluated, with the error (also recorded in its
	// TestError).
	Skipped func(s *Selected, err error)
	// Reuse are directories (a sweep and its further directories) whose
	// test reports, written by an earlier selection, are used again: a
	// selected run that a report there was made of, on the same test set,
	// is not loaded and evaluated again (see Selection.Evaluate). None by
	// default: every selected run is evaluated.
	Reuse []string
	// Reused, when set, is called for each selected run whose earlier
	// report is used, with the report's path, before Done is called
	// with the report.
	Reused func(s *Selected, path string)
}

// loadModel loads a run's model; tests replace it to watch the models.
var loadModel = nsrnn.Load

// Evaluate evaluates every selected model on its task's test set of spec
// (SampleTestSet; one per task, parameters and definition, shared by its
// models) with EvaluateByLength, sets each one's TestDiff to the overall
// difference and sel.Test to spec (nil where every selected run is on the
// user's strings, each tested on its own test file), and returns the reports in the order of
// sel.Selected.
//
// With opt.Reuse, a selected run evaluated on the test set of spec by an
// earlier selection is not evaluated again: its report in one of those
// directories (TestResultPath; the first that fits) stands for it, and
// its model file is not needed. A report fits when it names the same run
// (the same task, definition, parameters and data, model kind and stack
// sizes, learning rate, seed, parameter count, epochs, best epoch and best
// validation difference: the run's own files, however its directory has
// been moved or renamed since) and the same test set. A report written
// before reports recorded these is matched through the selection the
// directory holds (selected.json), which does; anything else is evaluated
// anew.
//
// A model that cannot be loaded (a missing or corrupt model file) or
// evaluated is skipped: its TestError says why, its report is nil, and the
// others are evaluated all the same. The error returned is for what stops
// the whole evaluation: a task or test set that cannot be made, or an
// error from opt.Done.
//
// Models are evaluated one at a time: each is loaded from its run's
// directory, evaluated, and released with its compiled graphs before the
// next is loaded, so memory is bounded by one model (and the test sets)
// however many are selected.
func (sel *Selection) Evaluate(spec TestSpec, opt TestOptions) ([]*Report, error) {
	if opt.BatchSize == 0 {
		opt.BatchSize = 10
	}
	type taskKey struct {
		task    string
		params  string // data.Params.String
		grammar data.Grammar
		data    string // dataKey
	}
	tasks := map[taskKey]*data.Task{}
	testSets := map[taskKey][][]int{}
	reports := make([]*Report, 0, len(sel.Selected))
	earlier := earlierReports{spec: spec, dirs: opt.Reuse, selections: map[string]*Selection{}}
	// The spec describes the sampled test sets; a run on the user's
	// strings is tested on its own test file (Files), whatever spec says.
	sel.Test = nil
	if slices.ContainsFunc(sel.Selected, func(s Selected) bool { return s.Files == nil }) {
		sel.Test = &spec
	}
	for i := range sel.Selected {
		s := &sel.Selected[i]
		if rep, path := earlier.find(s); rep != nil {
			s.TestDiff, s.TestCrossEntropy, s.TestError = nil, nil, ""
			if rep.NoLowerBound {
				ce := rep.Overall.CrossEntropy
				s.TestCrossEntropy = &ce
			} else {
				d := rep.Overall.Difference
				s.TestDiff = &d
			}
			reports = append(reports, rep)
			if opt.Reused != nil {
				opt.Reused(s, path)
			}
			if opt.Done != nil {
				if err := opt.Done(s, rep); err != nil {
					return reports, err
				}
			}
			continue
		}
		k := taskKey{s.Task, s.TaskParams.String(), data.Grammar(s.Grammar.String()), dataKey(s.settings())}
		t, ok := tasks[k]
		if !ok {
			var err error
			if t, err = s.settings().TaskDefIn(s.Dir); err != nil {
				return reports, fmt.Errorf("%s: %w", filepath.Join(s.Dir, RunFile), err)
			}
			var strs [][]int
			if t.HasDistribution() {
				if strs, err = SampleTestSet(t, spec); err != nil {
					return reports, fmt.Errorf("test set of %s: %w", t, err)
				}
			}
			tasks[k], testSets[k] = t, strs
		}
		strs := testSets[k]
		var err error
		if !t.HasDistribution() {
			// The user's strings: the run's test file, if it has one.
			strs, err = s.Files.readTest()
		}
		var rep *Report
		if err == nil {
			rep, err = testOne(s, t, strs, spec, opt)
		}
		if err != nil {
			s.TestDiff, s.TestCrossEntropy, s.TestError = nil, nil, err.Error()
			reports = append(reports, nil)
			if opt.Skipped != nil {
				opt.Skipped(s, err)
			}
			continue
		}
		s.TestError = ""
		if d, ce := rep.Overall.Difference, rep.Overall.CrossEntropy; rep.NoLowerBound {
			s.TestCrossEntropy = &ce
		} else {
			s.TestDiff = &d
		}
		reports = append(reports, rep)
		if opt.Done != nil {
			if err := opt.Done(s, rep); err != nil {
				return reports, err
			}
		}
	}
	return reports, nil
}

// testOne loads the model of s's run, evaluates it on strs, and releases
// its graphs whatever happens; nothing it returns refers to the model.
func testOne(s *Selected, t *data.Task, strs [][]int, spec TestSpec, opt TestOptions) (*Report, error) {
	m, err := loadModel(filepath.Join(s.Dir, ModelFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, MissingModel(s.Dir)
	}
	if err != nil {
		if !strings.Contains(err.Error(), s.Dir) {
			err = fmt.Errorf("%s: %w", filepath.Join(s.Dir, ModelFile), err)
		}
		return nil, err
	}
	defer m.ReleaseGraphs()
	if rs, err := ReadSettings(s.Dir); err == nil {
		if err := CheckRunModel(m, rs.Model, filepath.Join(s.Dir, ModelFile)); err != nil {
			return nil, err
		}
	}
	if opt.Start != nil {
		opt.Start(s, len(strs))
	}
	rep, err := EvaluateByLength(m, t, strs, spec.MinLength, spec.MaxLength, opt.BatchSize)
	if err != nil {
		return nil, fmt.Errorf("testing %s: %w", s.Dir, err)
	}
	rep.Model, rep.Run, rep.Test = s.Dir, s.identity(), testSpecOf(s, spec)
	return rep, nil
}

// testSpecOf is the test set that a report of run s records: spec, or
// none for a run on the user's strings, tested on its own test file.
func testSpecOf(s *Selected, spec TestSpec) *TestSpec {
	if s.Files != nil {
		return nil
	}
	return &spec
}

// identity returns the run of s as a report records it: s without what
// the selection adds (the test results and the number of candidates).
func (s *Selected) identity() *Selected {
	id := *s
	id.Candidates = 0
	id.TestDiff, id.TestCrossEntropy, id.TestFile, id.TestError = nil, nil, "", ""
	return &id
}

// sameRun reports whether a and b are the same run, from what its own
// files (run.json and summary.json) say of it: not its directory, which
// may have been moved, nor the paths of its data files, only their
// digests.
func sameRun(a, b *Selected) bool {
	digest := func(f *FileDigest) string {
		if f == nil {
			return ""
		}
		return f.SHA256
	}
	testDigest := func(s *Selected) string {
		if s.Files == nil {
			return ""
		}
		return digest(s.Files.Test)
	}
	return a.Task == b.Task && a.Grammar == b.Grammar && a.TaskParams.String() == b.TaskParams.String() &&
		dataKey(a.settings()) == dataKey(b.settings()) && testDigest(a) == testDigest(b) &&
		a.Model == b.Model && a.LR == b.LR && a.Seed == b.Seed &&
		a.StackEmbedding == b.StackEmbedding && a.States == b.States && a.Symbols == b.Symbols &&
		a.Parameters == b.Parameters && a.Epochs == b.Epochs && a.BestEpoch == b.BestEpoch &&
		a.ValidDiff == b.ValidDiff && a.NoLowerBound == b.NoLowerBound && a.ValidCrossEntropy == b.ValidCrossEntropy
}

// earlierReports finds the test reports of earlier selections that stand
// for a selected run (TestOptions.Reuse).
type earlierReports struct {
	spec TestSpec
	dirs []string
	// selections caches each directory's selected.json (nil: none).
	selections map[string]*Selection
}

// find returns the first report under the directories that was made of
// run s on the test set, and its path; nil if there is none. The report
// returned names s (Model, Run) and the test set (Test).
func (e *earlierReports) find(s *Selected) (*Report, string) {
	for _, dir := range e.dirs {
		for _, path := range testResultPaths(dir, s) {
			var rep Report
			if err := readJSON(path, &rep); err != nil || rep.Task != s.Task {
				continue
			}
			if !e.fits(dir, s, &rep) {
				continue
			}
			rep.Model, rep.Run, rep.Test = s.Dir, s.identity(), testSpecOf(s, e.spec)
			if s.Files != nil {
				rep.Grammar = "" // recorded by reports written before strings had none
			}
			return &rep, path
		}
	}
	return nil, ""
}

// fits reports whether rep, read from dir, was made of run s on the test
// set.
func (e *earlierReports) fits(dir string, s *Selected, rep *Report) bool {
	// A run on the user's strings is tested on its test file, which the
	// run's identity names with its digest; the spec does not apply (and
	// reports written before that was said record one).
	own := s.Files != nil
	if rep.Run != nil {
		return (own || rep.Test != nil && *rep.Test == e.spec) && sameRun(rep.Run, s)
	}
	// A report without them: the directory's selection says which run it
	// was made of, and on which test set.
	sel, ok := e.selections[dir]
	if !ok {
		sel, _ = ReadSelection(dir)
		e.selections[dir] = sel
	}
	if sel == nil || !own && (sel.Test == nil || *sel.Test != e.spec) {
		return false
	}
	for i := range sel.Selected {
		p := &sel.Selected[i]
		// The run's entry, whose test result is the report's.
		if !sameRun(p, s) {
			continue
		}
		if rep.NoLowerBound && p.TestCrossEntropy != nil && *p.TestCrossEntropy == rep.Overall.CrossEntropy ||
			!rep.NoLowerBound && p.TestDiff != nil && *p.TestDiff == rep.Overall.Difference {
			return true
		}
	}
	return false
}
