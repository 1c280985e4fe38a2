package protocol

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// Point is a point of a curve.
type Point struct{ X, Y float64 }

// Curve is one model's line in a panel of a figure: the paper's Figures 1
// (validation difference during training) and 2 (test difference by
// length).
type Curve struct {
	// Model is the model kind.
	Model string
	// Dir is the directory of the run the curve comes from.
	Dir string
	// Label, when set, is the curve's legend entry in place of the
	// kind's label (runs of one task and kind told apart).
	Label string
	// InProgress marks an unfinished run's curve (no summary.json yet).
	InProgress bool
	// Points are the curve's points in order.
	Points []Point
}

// Panel is one task's curves in a figure.
type Panel struct {
	Task   string
	Curves []Curve
	// NoBound marks a panel of runs without a lower bound (on the
	// user's strings): its curves are cross-entropies, not differences
	// from the bound.
	NoBound bool
}

// ValidScore is what Figure 1 plots of an epoch's record: its validation
// difference from the lower bound, or its cross-entropy for a run without
// a bound (the user's strings).
func ValidScore(r nsrnn.EpochRecord) float64 {
	if r.NoLowerBound {
		return r.ValidCrossEntropy
	}
	return r.ValidDifference
}

// ValidCurve is Figure 1's line of a training log: the validation
// difference (ValidScore) against the epoch, or against the elapsed
// seconds when wallClock is set.
func ValidCurve(recs []nsrnn.EpochRecord, wallClock bool) []Point {
	pts := make([]Point, len(recs))
	for i, r := range recs {
		pts[i] = Point{X: float64(r.Epoch), Y: ValidScore(r)}
		if wallClock {
			pts[i].X = r.ElapsedSeconds
		}
	}
	return pts
}

// UnfinishedRun is a run without summary.json, with its training log so
// far.
type UnfinishedRun struct {
	Run
	Log []nsrnn.EpochRecord
}

// FindUnfinished returns, for each task and model kind of the sweep (and
// the selection's further directories, Also) with no selected (finished)
// run, the unfinished run with the smallest validation difference so far,
// in the order FindRuns gives; runs without a finished epoch are skipped.
func FindUnfinished(sweep string, sel *Selection) ([]UnfinishedRun, error) {
	runs, err := FindRuns(sweep)
	if err != nil {
		return nil, err
	}
	for _, dir := range sel.Also {
		more, err := FindRuns(dir)
		if err != nil {
			return nil, fmt.Errorf("%s (in %s's also): %w", dir, SelectedFile, err)
		}
		runs = append(runs, more...)
	}
	done := map[[2]string]bool{}
	for _, s := range sel.Selected {
		done[[2]string{s.Task, s.Model}] = true
	}
	type found struct {
		i    int     // index in out
		diff float64 // the run's smallest validation difference
	}
	best := map[[2]string]found{}
	var out []UnfinishedRun
	for _, r := range runs {
		k := [2]string{r.Settings.Task, r.Settings.Model.Kind}
		if r.Summary != nil || done[k] {
			continue
		}
		recs, err := ReadLog(filepath.Join(r.Dir, LogFile))
		if err != nil || len(recs) == 0 {
			continue
		}
		d := math.Inf(1)
		for _, rec := range recs {
			d = min(d, ValidScore(rec))
		}
		u := UnfinishedRun{r, recs}
		if f, ok := best[k]; !ok {
			best[k] = found{len(out), d}
			out = append(out, u)
		} else if d < f.diff {
			out[f.i], best[k] = u, found{f.i, d}
		}
	}
	return out, nil
}

// SelectionFigures are the data of Figures 1 and 2 of a selection: one
// panel per task, in the order of the selection (tasks of unfinished runs
// only after them). Figure 2 has no panel for a task without test
// results; NoTest lists those tasks.
type SelectionFigures struct {
	Valid, Test []Panel
	NoTest      []string
}

// SelectionData reads the curves of Figures 1 and 2: for each selected
// run, its validation difference by epoch (or by elapsed seconds) from its
// log, and its test difference by length from the test results in sweep
// (TestResultPath); and the validation curves of the unfinished runs
// given (FindUnfinished), marked in progress.
func SelectionData(sel *Selection, unfinished []UnfinishedRun, sweep string, wallClock bool) (*SelectionFigures, error) {
	byTask := map[string][]Selected{}
	var tasks []string
	for _, s := range sel.Selected {
		if _, ok := byTask[s.Task]; !ok {
			tasks = append(tasks, s.Task)
		}
		byTask[s.Task] = append(byTask[s.Task], s)
	}
	for _, u := range unfinished {
		if _, ok := byTask[u.Settings.Task]; !ok {
			tasks = append(tasks, u.Settings.Task)
			byTask[u.Settings.Task] = nil
		}
	}
	figs := &SelectionFigures{}
	for _, task := range tasks {
		valid := Panel{Task: task}
		for _, s := range byTask[task] {
			recs, err := ReadLog(filepath.Join(s.Dir, LogFile))
			if err != nil {
				return nil, err
			}
			valid.NoBound = valid.NoBound || s.NoLowerBound
			valid.Curves = append(valid.Curves, Curve{Model: s.Model, Dir: s.Dir, Points: ValidCurve(recs, wallClock)})
		}
		for _, u := range unfinished {
			if u.Settings.Task == task {
				valid.Curves = append(valid.Curves, Curve{Model: u.Settings.Model.Kind, Dir: u.Dir, InProgress: true, Points: ValidCurve(u.Log, wallClock)})
			}
		}
		figs.Valid = append(figs.Valid, valid)

		test := Panel{Task: task, NoBound: valid.NoBound}
		for _, s := range byTask[task] {
			rep, err := readTestReport(sweep, &s)
			if err != nil {
				return nil, err
			}
			if rep == nil {
				continue
			}
			pts := make([]Point, len(rep.ByLength))
			for i, r := range rep.ByLength {
				pts[i] = Point{X: float64(r.Length), Y: r.Difference}
				if rep.NoLowerBound {
					pts[i].Y = r.CrossEntropy
				}
			}
			test.Curves = append(test.Curves, Curve{Model: s.Model, Dir: s.Dir, Points: pts})
		}
		if len(test.Curves) == 0 {
			figs.NoTest = append(figs.NoTest, task)
			continue
		}
		figs.Test = append(figs.Test, test)
	}
	return figs, nil
}

// LengthConditioned returns test panels (SelectionFigures.Test) with each
// difference measured as the paper's Figure 2 measures it: each length
// against the strings' distribution given their length, −log p(w | n),
// as the authors' released code computes a length's bound. The bound of
// EvaluateByLength gives each of the K valid test lengths probability
// 1/K, so the length-conditioned bound at length n is log K/(n+1) nats per
// symbol lower and the difference that much higher. K is the number of
// distinct lengths of a panel's curves together: the test sets of
// Selection.Evaluate hold strings of every valid length of their range,
// the same set for every model of a task. Panels without a bound
// (NoBound) are returned as they are; panels is not modified.
func LengthConditioned(panels []Panel) []Panel {
	out := make([]Panel, len(panels))
	for i, p := range panels {
		out[i] = p
		if p.NoBound {
			continue
		}
		lengths := map[float64]bool{}
		for _, c := range p.Curves {
			for _, pt := range c.Points {
				lengths[pt.X] = true
			}
		}
		logK := math.Log(float64(len(lengths)))
		out[i].Curves = make([]Curve, len(p.Curves))
		for j, c := range p.Curves {
			pts := make([]Point, len(c.Points))
			for k, pt := range c.Points {
				pts[k] = Point{X: pt.X, Y: pt.Y + logK/(pt.X+1)}
			}
			c.Points = pts
			out[i].Curves[j] = c
		}
	}
	return out
}

// WritePanelsCSV writes the points of a figure's panels as CSV with the
// header task, model, run, label, in_progress, xName, yName: one row per
// point, the data of the figure for other tools. The y values are
// differences from the bound, or cross-entropies in the rows of a panel
// with NoBound (then yName is followed by "_or_cross_entropy" when some
// panels have a bound and some not, and replaced by "cross_entropy" when
// none has).
func WritePanelsCSV(path string, panels []Panel, xName, yName string) error {
	with, without := 0, 0
	for _, p := range panels {
		if p.NoBound {
			without++
		} else {
			with++
		}
	}
	switch {
	case without > 0 && with == 0:
		yName = "cross_entropy"
	case without > 0:
		yName += "_or_cross_entropy"
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write([]string{"task", "model", "run", "label", "in_progress", xName, yName}); err != nil {
			return err
		}
		for _, p := range panels {
			for _, c := range p.Curves {
				for _, pt := range c.Points {
					err := cw.Write([]string{p.Task, c.Model, c.Dir, c.Label, strconv.FormatBool(c.InProgress),
						strconv.FormatFloat(pt.X, 'g', -1, 64), strconv.FormatFloat(pt.Y, 'g', -1, 64)})
					if err != nil {
						return err
					}
				}
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// RunsData reads Figure 1's curves of run directories, without a
// selection: one curve per run with a finished epoch, one panel per task
// in the order the runs come. Each element of dirs is a run directory
// (holding run.json) or a directory under which FindRuns finds runs;
// runs of one task and kind are told apart by their directories (Label).
// Skipped lists the runs without a finished epoch.
func RunsData(dirs []string, wallClock bool) (panels []Panel, skipped []string, err error) {
	type found struct {
		run  Run
		name string // the run's directory as the caller named it
	}
	var runs []found
	for _, arg := range dirs {
		if _, err := ReadSettings(arg); err == nil {
			rs, err := FindRuns(arg)
			if err != nil {
				return nil, nil, err
			}
			for _, r := range rs {
				if filepath.Clean(r.Dir) == filepath.Clean(arg) {
					runs = append(runs, found{r, filepath.Clean(arg)})
				}
			}
			continue
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, nil, err
		}
		if _, err := os.Stat(arg); err != nil {
			return nil, nil, err
		}
		rs, err := FindRuns(arg)
		if err != nil {
			return nil, nil, err
		}
		if len(rs) == 0 {
			return nil, nil, fmt.Errorf("%s: no %s in it or under it: not a run directory nor a directory of runs", arg, RunFile)
		}
		for _, r := range rs {
			runs = append(runs, found{r, r.Dir})
		}
	}
	count := map[[2]string]int{}
	for _, r := range runs {
		count[[2]string{r.run.Settings.Task, r.run.Settings.Model.Kind}]++
	}
	index := map[string]int{}
	for _, r := range runs {
		recs, err := ReadLog(filepath.Join(r.run.Dir, LogFile))
		if errors.Is(err, os.ErrNotExist) || (err == nil && len(recs) == 0) {
			skipped = append(skipped, r.name)
			continue
		} else if err != nil {
			return nil, nil, err
		}
		task, kind := r.run.Settings.Task, r.run.Settings.Model.Kind
		c := Curve{Model: kind, Dir: r.run.Dir, InProgress: r.run.Summary == nil, Points: ValidCurve(recs, wallClock)}
		if count[[2]string{task, kind}] > 1 {
			c.Label = modelLabel(kind) + " " + r.name
			if c.InProgress {
				c.Label += " (in progress)"
			}
		}
		i, ok := index[task]
		if !ok {
			i = len(panels)
			index[task] = i
			panels = append(panels, Panel{Task: task, NoBound: recs[0].NoLowerBound})
		}
		panels[i].Curves = append(panels[i].Curves, c)
	}
	return panels, skipped, nil
}

// modelLabel is the paper's name of a model kind (its Style's label).
func modelLabel(kind string) string { return KindStyle(kind).Label }

// readTestReport reads the test report of s in sweep (nil if there is
// none): at TestResultPath, or, for a grammar other than the paper's, where
// reports were written before the grammar was in the path, if the report
// there is of s's grammar (or does not say).
func readTestReport(sweep string, s *Selected) (*Report, error) {
	for i, path := range testResultPaths(sweep, s) {
		b, err := readlimit.File(path, readlimit.JSON, true)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		var rep Report
		if err := json.Unmarshal(b, &rep); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if i > 0 && rep.Run != nil && cmp.Or(rep.Run.Grammar, data.GrammarPaper) != cmp.Or(s.Grammar, data.GrammarPaper) {
			continue // another grammar's report
		}
		return &rep, nil
	}
	return nil, nil
}
