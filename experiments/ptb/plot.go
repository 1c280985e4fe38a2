package main

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nsrnn/nsrnn/experiments/internal/figure"
	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

func init() {
	prog.Register("plot", "draw validation perplexity by epoch, and SG score against test perplexity (also in the released convention, for runs with sg-released.json), for the runs of sweeps or run directories (PNG, SVG and CSV)", runPlot)
}

// Names of the figure files, without the .png/.svg/.csv extension.
const (
	validFigName           = "valid-perplexity"
	scatterFigName         = "sg-vs-test-perplexity"
	releasedScatterFigName = "sg-released-vs-test-perplexity"
)

// paperPoints are the paper's test perplexity and SG score (Table 2 and
// its appendix's full table; SG scores computed by the authors' released
// script, the released convention) of its best run of each model that we
// train, drawn beside our runs in the released convention's figure.
var paperPoints = map[string][2]float64{
	"lstm-256":      {120.95, 0.433},
	"jm-hidden-247": {115.35, 0.387},
	"rns-1-2":       {117.56, 0.435},
	"rns-3-4":       {118.09, 0.408},
}

// plotRun is what the figures show of one training run: its model, its
// validation perplexity after each epoch (log.jsonl) and, once the run
// was evaluated, its test perplexity (eval-test.json) and SG score
// (sg.json).
type plotRun struct {
	Dir      string
	Model    string // the model's name in the paper's table: lstm-256, rns-1-2, …
	Kind     string
	Finished bool // summary.json exists
	Valid    []float64
	// Test and SG are the test perplexity and SG score, when HasTest and
	// HasSG (the run has eval-test.json, sg.json); SGReleased is the SG
	// score in the authors' released convention, when HasSGReleased
	// (sg-released.json, from ptb sg --convention released).
	Test, SG, SGReleased          float64
	HasTest, HasSG, HasSGReleased bool
}

// best is the run's lowest validation perplexity (+Inf for none).
func (r plotRun) best() float64 {
	b := math.Inf(1)
	for _, v := range r.Valid {
		b = min(b, v)
	}
	return b
}

// ptbModelName names a configuration as the paper's PTB table (and ptb
// sweep) does (protocol.ModelName): lstm-256, jm-hidden-247,
// jm-learned-22, rns-1-2, …; where that name does not say the hidden size
// (the stack RNNs but JM's hidden-247) and it is not the paper's
// (paperHidden), as after ptb sweep --hidden, the name says it as ptb
// select does: "rns-1-2 (hidden 8)".
func ptbModelName(c nsrnn.Config) string {
	name := protocol.ModelName(c)
	other := c
	other.Hidden++
	if c.Hidden != paperHidden && protocol.ModelName(other) == name {
		name += fmt.Sprintf(" (hidden %d)", c.Hidden)
	}
	return name
}

// paperHidden is the hidden size of the paper's PTB models whose names do
// not say it (ptb train's default --hidden).
const paperHidden = 256

// ptbModelLabel is a model's name for legends: the paper's label of its
// kind with its sizes ("LSTM 256", "RNS 1-2", "JM hidden 247").
func ptbModelLabel(name, kind string) string {
	label := protocol.KindStyle(kind).Label
	rest := name[min(len(kind)+1, len(name)):]
	if rest == "" {
		return label
	}
	// A dash after a word is a space ("hidden 247"); between numbers it
	// stays ("1-2").
	b := []byte(rest)
	for i := 1; i < len(b); i++ {
		if b[i] == '-' && (b[i-1] < '0' || b[i-1] > '9') {
			b[i] = ' '
		}
	}
	return label + " " + string(b)
}

// modelOrder sorts model names in the order of the paper's table, unknown
// names after, by name.
func modelOrder(a, b string) int {
	ia, ib := math.MaxInt, math.MaxInt
	for i, m := range paperModels() {
		switch m.Name {
		case a:
			ia = i
		case b:
			ib = i
		}
	}
	return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a, b))
}

// readPlotRun reads what the figures need from a run directory: its
// run.json must exist; log.jsonl, eval-test.json, sg.json and
// summary.json may be missing (a run not yet trained, evaluated or
// finished).
func readPlotRun(dir string) (plotRun, error) {
	r := plotRun{Dir: dir}
	var s settings
	raw, err := readlimit.File(filepath.Join(dir, protocol.RunFile), readlimit.JSON, true)
	if err != nil {
		return r, fmt.Errorf("%s: not a ptb run: %w", dir, err)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, protocol.RunFile), err)
	}
	r.Kind, r.Model = s.Model.Kind, ptbModelName(s.Model)
	if r.Valid, err = readValidPerplexities(filepath.Join(dir, protocol.LogFile)); err != nil {
		return r, err
	}
	if _, err := os.Stat(filepath.Join(dir, protocol.SummaryFile)); err == nil {
		r.Finished = true
	}
	var ev evalResult
	if ok, err := readOptionalJSON(filepath.Join(dir, "eval-test.json"), &ev); err != nil {
		return r, err
	} else if ok {
		r.Test, r.HasTest = ev.Perplexity, true
	}
	// The figures compare pair-level SG scores (ptb sg's default) across
	// runs: a file of item-level ones (--item-level) is refused by name.
	readSG := func(name string) (float64, bool, error) {
		var sg struct {
			Level   string   `json:"level"`
			SGScore *float64 `json:"sg_score"`
		}
		path := filepath.Join(dir, name)
		ok, err := readOptionalJSON(path, &sg)
		if err != nil || !ok || sg.SGScore == nil {
			return 0, false, err
		}
		if sg.Level != "" && sg.Level != "pair" {
			return 0, false, fmt.Errorf("%s: an SG score at the %s level; the figures plot pair-level scores (ptb sg without --item-level)", path, sg.Level)
		}
		return *sg.SGScore, true, nil
	}
	if r.SG, r.HasSG, err = readSG("sg.json"); err != nil {
		return r, err
	}
	if r.SGReleased, r.HasSGReleased, err = readSG("sg-released.json"); err != nil {
		return r, err
	}
	return r, nil
}

// readValidPerplexities reads the validation perplexity of every epoch
// of a training log, in order; a missing log is no epoch yet.
func readValidPerplexities(path string) ([]float64, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%v)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	var ppl []float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var rec struct {
			Epoch int      `json:"epoch"`
			Valid *float64 `json:"valid_cross_entropy"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Valid == nil {
			return nil, fmt.Errorf("%s:%d: not an epoch record", path, line)
		}
		if rec.Epoch != len(ppl)+1 {
			return nil, fmt.Errorf("%s:%d: epoch %d where %d was expected", path, line, rec.Epoch, len(ppl)+1)
		}
		if ce := *rec.Valid; !(ce >= 0) || math.IsInf(math.Exp(ce), 1) {
			return nil, fmt.Errorf("%s:%d: validation cross-entropy %g: want a number ≥ 0 whose perplexity is finite", path, line, ce)
		}
		ppl = append(ppl, math.Exp(*rec.Valid))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ppl, nil
}

// readOptionalJSON decodes path into v and reports whether it existed.
func readOptionalJSON(path string, v any) (bool, error) {
	raw, err := readlimit.File(path, readlimit.JSON, true)
	if errors.Is(err, iofs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

// collectPlotRuns reads the runs of the sweeps (every <sweep>/<model>/run-*
// holding a run.json) and the run directories given, each directory once.
func collectPlotRuns(sweeps, dirs []string) ([]plotRun, error) {
	var all []string
	for _, s := range sweeps {
		if _, err := os.Stat(filepath.Join(s, "sweep.json")); err != nil {
			return nil, fmt.Errorf("--sweep %s: not a ptb sweep: %w", s, err)
		}
		found, err := filepath.Glob(filepath.Join(s, "*", "run-*", protocol.RunFile))
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			all = append(all, filepath.Dir(f))
		}
	}
	all = append(all, dirs...)
	seen := map[string]bool{}
	var runs []plotRun
	for _, d := range all {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		r, err := readPlotRun(d)
		if err != nil {
			if _, serr := os.Stat(filepath.Join(d, "sweep.json")); serr == nil {
				return nil, fmt.Errorf("%s is a sweep directory, not a run's: give it with --sweep %s", d, d)
			}
			return nil, err
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, errors.New("no runs: give run directories or --sweep")
	}
	return runs, nil
}

// bestCurves is the curve of each model: its run with the lowest
// validation perplexity so far (ties to the first given), in the order of
// the paper's table. Runs without an epoch are left out.
func bestCurves(runs []plotRun) []plotRun {
	byModel := map[string]plotRun{}
	var models []string
	for _, r := range runs {
		if len(r.Valid) == 0 {
			continue
		}
		b, ok := byModel[r.Model]
		if !ok {
			models = append(models, r.Model)
		}
		if !ok || r.best() < b.best() {
			byModel[r.Model] = r
		}
	}
	slices.SortFunc(models, modelOrder)
	curves := make([]plotRun, len(models))
	for i, m := range models {
		curves[i] = byModel[m]
	}
	return curves
}

// scatterSeries are, per model in the paper's order, the (test perplexity,
// SG score) points of its runs that have both.
type scatterSeries struct {
	Model, Kind string
	Points      plotter.XYs
	Dirs        []string
}

// scatterPoints returns the series of the SG score (in the released
// convention when released is set) against test perplexity.
func scatterPoints(runs []plotRun, released bool) []scatterSeries {
	byModel := map[string]*scatterSeries{}
	var models []string
	for _, r := range runs {
		sg, has := r.SG, r.HasSG
		if released {
			sg, has = r.SGReleased, r.HasSGReleased
		}
		if !r.HasTest || !has {
			continue
		}
		s, ok := byModel[r.Model]
		if !ok {
			s = &scatterSeries{Model: r.Model, Kind: r.Kind}
			byModel[r.Model] = s
			models = append(models, r.Model)
		}
		s.Points = append(s.Points, plotter.XY{X: r.Test, Y: sg})
		s.Dirs = append(s.Dirs, r.Dir)
	}
	slices.SortFunc(models, modelOrder)
	out := make([]scatterSeries, len(models))
	for i, m := range models {
		out[i] = *byModel[m]
	}
	return out
}

// modelIndex gives each model of the figures a fixed colour and marker
// across both figures: its position in the paper's order among every
// model plotted.
func modelIndex(runs []plotRun) map[string]int {
	var models []string
	for _, r := range runs {
		if !slices.Contains(models, r.Model) {
			models = append(models, r.Model)
		}
	}
	slices.SortFunc(models, modelOrder)
	idx := map[string]int{}
	for i, m := range models {
		idx[m] = i
	}
	return idx
}

func runPlot(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("plot", stdout)
	sweeps := fs.StringArray("sweep", nil, "sweep directory whose runs are plotted (repeatable); run directories may also be given as arguments")
	out := fs.String("out", "", "output directory of the figures (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("--out is required")
	}
	runs, err := collectPlotRuns(*sweeps, fs.Args())
	if err != nil {
		return err
	}
	files, err := plotRuns(runs, *out)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	if note := undrawnNote(runs); note != "" {
		fmt.Fprintln(stderr, note)
	}
	if note := unevaluatedNote(runs); note != "" {
		fmt.Fprintln(stderr, note)
	}
	return nil
}

// undrawnNote names the runs with an epoch that the validation figure
// leaves out, since it draws one curve per model (bestCurves), per model
// after the run it draws; "" when it draws every such run.
func undrawnNote(runs []plotRun) string {
	var parts []string
	for _, c := range bestCurves(runs) {
		var left []string
		for _, r := range runs {
			if r.Model == c.Model && r.Dir != c.Dir && len(r.Valid) > 0 {
				left = append(left, r.Dir)
			}
		}
		if len(left) == 0 {
			continue
		}
		if n := len(left) - maxNamedRuns; n > 0 {
			left = append(left[:maxNamedRuns], fmt.Sprintf("%d more", n))
		}
		parts = append(parts, fmt.Sprintf("%s: %s (validation perplexity %.2f), not %s", c.Model, c.Dir, c.best(), strings.Join(left, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "plot: the validation figure draws each model's run of lowest validation perplexity: " + strings.Join(parts, "; ")
}

// maxNamedRuns is the most runs unevaluatedNote names.
const maxNamedRuns = 5

// unevaluatedNote is one line that names the runs left out of the SG
// against test perplexity figure for want of eval-test.json or sg.json
// (which file each lacks), and the commands that make those files; ""
// when every run has both.
func unevaluatedNote(runs []plotRun) string {
	var lacking []string
	noTest, noSG := false, false
	for _, r := range runs {
		var files []string
		if !r.HasTest {
			files, noTest = append(files, "eval-test.json"), true
		}
		if !r.HasSG {
			files, noSG = append(files, "sg.json"), true
		}
		if len(files) > 0 {
			lacking = append(lacking, r.Dir+" lacks "+strings.Join(files, " and "))
		}
	}
	if len(lacking) == 0 {
		return ""
	}
	what := fmt.Sprintf("%d of %d runs are left out of %s", len(lacking), len(runs), scatterFigName)
	if len(lacking) == len(runs) {
		what = "no " + scatterFigName + " figure: no run has both eval-test.json and sg.json"
	}
	if n := len(lacking) - maxNamedRuns; n > 0 {
		lacking = append(lacking[:maxNamedRuns], fmt.Sprintf("%d more", n))
	}
	var cmds []string
	if noTest {
		cmds = append(cmds, "ptb eval --model RUN --split test --json > RUN/eval-test.json")
	}
	if noSG {
		cmds = append(cmds, "ptb sg --model RUN --suites DIR/syntaxgym --json > RUN/sg.json")
	}
	return fmt.Sprintf("plot: %s (%s); make them with: %s", what, strings.Join(lacking, "; "), strings.Join(cmds, " and "))
}

// plotRuns draws both figures (the scatter only when some run has a test
// perplexity and an SG score) with their data as CSV, and returns the
// files written.
func plotRuns(runs []plotRun, out string) ([]string, error) {
	idx := modelIndex(runs)
	curves := bestCurves(runs)
	if len(curves) == 0 {
		return nil, errors.New("no run has finished an epoch yet: nothing to plot")
	}
	if err := os.MkdirAll(out, 0o777); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	var files []string
	p := figurePlot("Penn Treebank: validation perplexity", "epoch", "validation perplexity (log scale)")
	p.Y.Scale = plot.LogScale{}
	// The log scale needs a positive range; gonum widens a range of one
	// value by ±1, which would reach 0 for a perplexity of 1.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		for _, v := range c.Valid {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	p.Y.Min, p.Y.Max = lo, hi
	if lo == hi {
		p.Y.Min, p.Y.Max = lo/1.1, hi*1.1
	}
	p.Y.Tick.Marker = figure.LogTicks{}
	p.X.Tick.Marker = figure.IntegerTicks{}
	p.Legend.Top = true
	var rows [][]string
	for _, c := range curves {
		xys := make(plotter.XYs, len(c.Valid))
		for e, v := range c.Valid {
			xys[e] = plotter.XY{X: float64(e + 1), Y: v}
			rows = append(rows, []string{c.Model, c.Dir, strconv.Itoa(e + 1), strconv.FormatFloat(v, 'f', 4, 64)})
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		i := idx[c.Model]
		l.Color, l.Width = plotutil.Color(i), vg.Points(1.5)
		pts.Color, pts.Shape, pts.Radius = plotutil.Color(i), plotutil.Shape(i), vg.Points(2.5)
		p.Add(l, pts)
		label := fmt.Sprintf("%s (best %.2f)", ptbModelLabel(c.Model, c.Kind), c.best())
		if !c.Finished {
			label += ", in progress"
		}
		figure.LegendAdd(&p.Legend, label, l, pts)
	}
	f, err := figure.SavePlot(out, validFigName, p, 8*vg.Inch, 5*vg.Inch)
	if err != nil {
		return nil, err
	}
	files = append(files, f...)
	csvFile := filepath.Join(out, validFigName+".csv")
	if err := writeCSV(csvFile, []string{"model", "run", "epoch", "valid_perplexity"}, rows); err != nil {
		return nil, err
	}
	files = append(files, csvFile)

	for _, released := range []bool{false, true} {
		f, err := scatterFigure(runs, idx, out, released)
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
	}
	return files, nil
}

// scatterFigure draws the SG score against test perplexity, in our
// convention (sg.json) or, with released, in the authors' released
// convention (sg-released.json) beside the paper's own best runs, with
// its data as CSV, and returns the files written (none when no run has
// both numbers).
func scatterFigure(runs []plotRun, idx map[string]int, out string, released bool) ([]string, error) {
	series := scatterPoints(runs, released)
	if len(series) == 0 {
		return nil, nil
	}
	name, title, ylabel := scatterFigName, "Penn Treebank: SG score against test perplexity", "SG score"
	if released {
		name, title = releasedScatterFigName, "Penn Treebank: SG score (the authors' released convention) against test perplexity"
		ylabel = "SG score, released convention"
	}
	p := figurePlot(title, "test perplexity", ylabel)
	var rows [][]string
	for _, s := range series {
		sc, err := plotter.NewScatter(s.Points)
		if err != nil {
			return nil, err
		}
		i := idx[s.Model]
		sc.Color, sc.Shape, sc.Radius = plotutil.Color(i), plotutil.Shape(i), vg.Points(4)
		p.Add(sc)
		figure.LegendAdd(&p.Legend, ptbModelLabel(s.Model, s.Kind), sc)
		for j, pt := range s.Points {
			rows = append(rows, []string{s.Model, s.Dirs[j], strconv.FormatFloat(pt.X, 'f', 4, 64), strconv.FormatFloat(pt.Y, 'f', 6, 64)})
		}
	}
	if released {
		// The paper's best run of each model plotted, a filled disc in
		// the model's colour (no model's own marker).
		for _, s := range series {
			pp, ok := paperPoints[s.Model]
			if !ok {
				continue
			}
			sc, err := plotter.NewScatter(plotter.XYs{{X: pp[0], Y: pp[1]}})
			if err != nil {
				return nil, err
			}
			sc.Color, sc.Shape, sc.Radius = plotutil.Color(idx[s.Model]), draw.CircleGlyph{}, vg.Points(4)
			p.Add(sc)
			figure.LegendAdd(&p.Legend, ptbModelLabel(s.Model, s.Kind)+", the paper's best run", sc)
			rows = append(rows, []string{s.Model, "paper", strconv.FormatFloat(pp[0], 'f', 4, 64), strconv.FormatFloat(pp[1], 'f', 6, 64)})
		}
	}
	// A range of at least 10% of the perplexities (and 0.1 of the SG
	// score), so that a single run, or runs of nearly one value, still has
	// ticks that differ in their labels; then room around the points for
	// their markers, and above them for the legend.
	p.X.Min, p.X.Max = atLeast(p.X.Min, p.X.Max, max(0.1*math.Abs(p.X.Max), 1))
	p.Y.Min, p.Y.Max = atLeast(p.Y.Min, p.Y.Max, 0.1)
	dx, dy := (p.X.Max-p.X.Min)*0.05, (p.Y.Max-p.Y.Min)*0.08
	p.X.Min, p.X.Max = p.X.Min-dx, p.X.Max+dx
	p.Y.Min, p.Y.Max = p.Y.Min-dy, p.Y.Max+3*dy
	p.Legend.Top = true
	files, err := figure.SavePlot(out, name, p, 8*vg.Inch, 5*vg.Inch)
	if err != nil {
		return nil, err
	}
	csvFile := filepath.Join(out, name+".csv")
	if err := writeCSV(csvFile, []string{"model", "run", "test_perplexity", "sg_score"}, rows); err != nil {
		return nil, err
	}
	return append(files, csvFile), nil
}

// atLeast widens [lo, hi] about its middle to a span of at least span.
func atLeast(lo, hi, span float64) (float64, float64) {
	if hi-lo >= span {
		return lo, hi
	}
	mid := (lo + hi) / 2
	return mid - span/2, mid + span/2
}

// figurePlot is an empty plot with the figures' fonts, grid and ticks.
func figurePlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.X.Tick.Marker, p.Y.Tick.Marker = figure.PlainTicks{}, figure.PlainTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Left = false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), -vg.Points(8)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.ThumbnailWidth = vg.Points(24)
	return p
}

// writeCSV writes a header and rows atomically.
func writeCSV(path string, header []string, rows [][]string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		if err := cw.WriteAll(rows); err != nil {
			return err
		}
		return cw.Error()
	})
}
