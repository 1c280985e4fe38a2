package main

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nsrnn/nsrnn/experiments/internal/figure"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

func init() {
	prog.Register("plot", "draw Figures 1–3 (PNG and SVG) from a sweep, its selection and recorded actions, or Figure 1 of run directories", runPlot)
}

// Names of the figure files, without the .png/.svg extension: one file
// per task, and the multi-panel figure of all tasks, as in the paper.
func fig1Name(task string) string { return "fig1-valid-" + task }
func fig2Name(task string) string { return "fig2-test-" + task }

const (
	fig1AllName = "fig1-valid"
	fig2AllName = "fig2-test"
	fig3Name    = "fig3-actions"
)

// modelLabel is the paper's name of a model kind (protocol.KindStyle).
func modelLabel(kind string) string { return protocol.KindStyle(kind).Label }

// modelStyle is the colour and dashes of a model kind's lines in every
// figure (protocol.KindStyle).
func modelStyle(kind string) (color.Color, []vg.Length) {
	st := protocol.KindStyle(kind)
	var dashes []vg.Length
	if st.Dashed {
		dashes = []vg.Length{vg.Points(5), vg.Points(2)}
	}
	return st.Color, dashes
}

func runPlot(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("plot", stdout)
	sweep := fs.String("sweep", "", "sweep directory, after select, for Figures 1 and 2 of its selected runs (required, unless run directories are given as arguments: cfl plot --out DIR RUN_DIR…, Figure 1 of every run, no selected.json needed; or --actions alone)")
	out := fs.String("out", "", "output directory of the figures (required)")
	actions := fs.String("actions", "", "directory written by the actions command, or several, comma-separated (one row of Figure 3 each, e.g. one per seed) (default: <sweep>/actions if it exists)")
	wallClock := fs.Bool("time", false, "plot Figure 1 against training time in seconds instead of epochs")
	unfinished := fs.Bool("unfinished", false, "Figure 1 also shows, for each task and model without a finished run, its unfinished run closest to the bound so far (labelled \"in progress\")")
	reference := fs.String("reference", "", "a CSV file of reference curves (header figure,task,model,x,y; figure fig1 or fig2) drawn dotted in each model's colour beside the selection's, e.g. the paper's own (results/cfl/paper-curves.csv, whose Figure 2 curves are length-conditioned: use --length-conditioned with it) (default: none)")
	referenceLabel := fs.String("reference-label", "reference", "the legend's name of the --reference curves")
	conditioned := fs.Bool("length-conditioned", false, "Figure 2 measures each length against the strings' distribution given their length, as the paper's Figure 2 does (log K/(n+1) nats per symbol above the default, which gives each of the K test lengths probability 1/K)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	runDirs := fs.Args()
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	if *sweep != "" && len(runDirs) > 0 {
		return fmt.Errorf("give --sweep or run directories (%q), not both", runDirs)
	}
	if *unfinished && len(runDirs) > 0 {
		return fmt.Errorf("--unfinished is for --sweep: run directories are plotted finished or not")
	}
	if *conditioned && *sweep == "" {
		return fmt.Errorf("--length-conditioned is for Figure 2, which needs --sweep")
	}
	if *reference != "" && *sweep == "" {
		return fmt.Errorf("--reference is drawn beside a selection's Figures 1 and 2: it needs --sweep")
	}
	if fs.Changed("reference-label") && *reference == "" {
		return fmt.Errorf("--reference-label names the --reference curves: give --reference too")
	}
	if strings.TrimSpace(*referenceLabel) == "" {
		return fmt.Errorf("--reference-label is empty: the legend names the reference curves by it")
	}
	var ref map[referenceKey][]series
	if *reference != "" {
		var err error
		if ref, err = readReference(*reference); err != nil {
			return err
		}
		for k, ss := range ref {
			if k.figure == "fig1" && *wallClock {
				return fmt.Errorf("--reference: %s has Figure 1 curves by epoch; draw them without --time", *reference)
			}
			for i := range ss {
				ss[i].label = *referenceLabel
			}
		}
	}
	if *sweep == "" && *actions == "" && len(runDirs) == 0 {
		return fmt.Errorf("--sweep or run directories are required (or --actions alone for Figure 3)")
	}
	// Everything is read and checked before --out is made or written.
	var draws []drawFunc
	if len(runDirs) > 0 {
		d, err := prepareRuns(runDirs, *wallClock, stderr)
		if err != nil {
			return err
		}
		draws = append(draws, d)
	}
	if *sweep != "" {
		sel, err := protocol.ReadSelection(*sweep)
		if _, ok := errors.AsType[*iofs.PathError](err); ok {
			return fmt.Errorf("--sweep: %w (run select first)", err)
		} else if err != nil {
			return err
		}
		var extra []protocol.UnfinishedRun
		if *unfinished {
			if extra, err = protocol.FindUnfinished(*sweep, sel); err != nil {
				return fmt.Errorf("--sweep: %w", err)
			}
		}
		d, err := prepareSelection(sel, extra, *sweep, *wallClock, *conditioned, ref, stderr)
		if err != nil {
			return err
		}
		draws = append(draws, d)
	}
	adir := *actions
	if adir == "" && *sweep != "" {
		adir = filepath.Join(*sweep, "actions")
		if _, err := os.Stat(adir); err != nil {
			adir = ""
			fmt.Fprintf(stderr, "plot: no %s; skipping Figure 3 (run actions --out there, or pass --actions)\n", filepath.Join(*sweep, "actions"))
		}
	}
	if adir != "" {
		dirs := strings.Split(adir, ",")
		if slices.Contains(dirs, "") {
			return fmt.Errorf("--actions %q: an empty directory in the list", adir)
		}
		d, err := prepareActions(dirs)
		if err != nil {
			return err
		}
		draws = append(draws, d)
	}
	if err := os.MkdirAll(*out, 0o777); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := protocol.CheckWritable(*out); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	var written []string
	for _, d := range draws {
		files, err := d(*out)
		if err != nil {
			return err
		}
		written = append(written, files...)
	}
	for _, f := range written {
		fmt.Fprintln(stdout, f)
	}
	return nil
}

// series is one model's line in a panel as drawn; inProgress marks an
// unfinished run's. Its legend entry is the kind's label (with "(in
// progress)") unless label is set.
type series struct {
	kind       string
	xys        plotter.XYs
	inProgress bool
	label      string
	// reference marks a curve of --reference, drawn dotted and named
	// once in the legend, not per model.
	reference bool
	// variant tells apart the curves of one kind in a panel (runs of one
	// kind plotted together, each labelled): the k-th is drawn in its
	// kind's colour with the k-th of runDashes.
	variant int
}

// runDashes are the dash patterns of the second, third, … curve of one
// kind in a panel (the first keeps its kind's style).
var runDashes = [][]vg.Length{
	{vg.Points(7), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(9), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(4), vg.Points(4)},
}

// styled sets l's dashes for the series' variant.
func (s series) styled(l *plotter.Line) {
	if s.variant > 0 {
		l.Dashes = runDashes[(s.variant-1)%len(runDashes)]
	}
}

// legendLabel is the series' legend entry.
func (s series) legendLabel() string {
	if s.label != "" {
		return s.label
	}
	label := modelLabel(s.kind)
	if s.inProgress {
		label += " (in progress)"
	}
	return label
}

// panel is one task's lines in a figure, as drawn.
type panel struct {
	task  string
	lines []series
	// noBound is set for a panel of runs without a lower bound (the
	// user's strings): it plots cross-entropies.
	noBound bool
}

// noBoundLabel is the y axis of Figure 1 for runs on the user's strings,
// which have no lower bound to measure a difference from.
const noBoundLabel = "cross-entropy (nats per symbol; no lower bound)"

// yLabel is a panel's y axis: noBoundLabel when its runs have no lower
// bound.
func (pn panel) yLabel() string {
	if pn.noBound {
		return noBoundLabel
	}
	return diffLabel
}

// toPanels turns the figures' data (package protocol) into what is
// drawn.
func toPanels(ps []protocol.Panel) []panel {
	out := make([]panel, len(ps))
	for i, p := range ps {
		out[i].task, out[i].noBound = p.Task, p.NoBound
		seen := map[string]int{} // curves of each kind so far
		for _, c := range p.Curves {
			xys := make(plotter.XYs, len(c.Points))
			for j, pt := range c.Points {
				xys[j].X, xys[j].Y = pt.X, pt.Y
			}
			sr := series{kind: c.Model, xys: xys, inProgress: c.InProgress, label: c.Label}
			if c.Label != "" { // runs of one kind, each named
				sr.variant = seen[c.Model]
				seen[c.Model]++
			}
			out[i].lines = append(out[i].lines, sr)
		}
	}
	return out
}

// measureName names what the panels plot, for a caption: the
// cross-entropy difference, the cross-entropy where no panel's runs have
// a lower bound (the user's strings), or both.
func measureName(panels []panel) string {
	some, all := false, len(panels) > 0
	for _, pn := range panels {
		some = some || pn.noBound
		all = all && pn.noBound
	}
	switch {
	case all:
		return "cross-entropy (no lower bound)"
	case some:
		return "cross-entropy difference (the cross-entropy itself where there is no lower bound)"
	}
	return "cross-entropy difference"
}

// diffLabel is the y axis of Figures 1 and 2.
const diffLabel = "cross-entropy diff. (nats per symbol)"

// fig1XName is the name of Figure 1's x values in its CSV file.
func fig1XName(wallClock bool) string {
	if wallClock {
		return "seconds"
	}
	return "epoch"
}

// fig1XLabel is Figure 1's x axis.
func fig1XLabel(wallClock bool) string {
	if wallClock {
		return "training time (s)"
	}
	return "epoch"
}

// actionsDir returns the directory written by the actions command that
// dir is (one with a model's directory holding an actions file) or is in
// (a model's directory), and whether there is one.
func actionsDir(dir string) (string, bool) {
	if _, err := os.Stat(filepath.Join(dir, actionsFile)); err == nil {
		return filepath.Dir(dir), true
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), actionsFile)); e.IsDir() && err == nil {
			return dir, true
		}
	}
	return "", false
}

// drawFunc writes figures into the directory out and returns the files
// written.
type drawFunc func(out string) ([]string, error)

// prepareRuns reads what Figure 1 of run directories needs, without a
// selection, and returns the function that draws it: one line per run
// with a finished epoch, one panel per task, one file per task and one
// with every task's panel. Each argument is a run directory
// (holding run.json) or a directory under which FindRuns finds runs.
func prepareRuns(args []string, wallClock bool, stderr io.Writer) (drawFunc, error) {
	data, skipped, err := protocol.RunsData(args, wallClock)
	if err != nil {
		for _, a := range args {
			if d, ok := actionsDir(a); ok {
				return nil, fmt.Errorf("%w; it holds recordings of cfl actions: give --actions %s", err, d)
			}
		}
		return nil, err
	}
	for _, d := range skipped {
		fmt.Fprintf(stderr, "plot: %s has no finished epoch yet; skipped\n", d)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("no run with a finished epoch in %q", args)
	}
	panels := toPanels(data)
	return func(out string) ([]string, error) {
		const title = "validation set during training"
		xLabel := fig1XLabel(wallClock)
		var files []string
		for _, pn := range panels {
			fs, err := savePanel(out, fig1Name(pn.task), pn, protocol.TaskTitle(pn.task)+": "+title, xLabel, pn.yLabel())
			if err != nil {
				return nil, err
			}
			files = append(files, fs...)
		}
		fs, err := savePanels(out, fig1AllName, "Figure 1: "+measureName(panels)+" on the validation set during training", panels, xLabel)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
		csvPath := filepath.Join(out, fig1AllName+".csv")
		if err := protocol.WritePanelsCSV(csvPath, data, fig1XName(wallClock), "valid_difference"); err != nil {
			return nil, err
		}
		return append(files, csvPath), nil
	}, nil
}

// prepareSelection reads what Figures 1 and 2 of a selection need and
// returns the function that draws them: one file per task, and one
// figure with a panel per task. With conditioned, Figure 2's differences
// are length-conditioned (protocol.LengthConditioned); the reference
// curves (readReference) are drawn in the panels of their figure and task.
func prepareSelection(sel *protocol.Selection, extra []protocol.UnfinishedRun, sweep string, wallClock, conditioned bool, ref map[referenceKey][]series, stderr io.Writer) (drawFunc, error) {
	data, err := protocol.SelectionData(sel, extra, sweep, wallClock)
	if err != nil {
		return nil, err
	}
	fig2Caption := "Figure 2: cross-entropy difference on the test set by string length (best run of each model)"
	fig2Title, fig2Y := "test set by length", "test_difference"
	if conditioned {
		data.Test = protocol.LengthConditioned(data.Test)
		fig2Caption = "Figure 2: cross-entropy difference on the test set by string length, each length against the distribution given the length, as in the paper (best run of each model)"
		fig2Title, fig2Y = "test set by length, each given its length", "test_difference_given_length"
	}
	for _, task := range data.NoTest {
		fmt.Fprintf(stderr, "plot: no test results in %s; skipping Figure 2 of %s (run select without --no-test)\n", filepath.Join(sweep, protocol.TestDir, task), task)
	}
	fig1, fig2 := toPanels(data.Valid), toPanels(data.Test)
	used := map[referenceKey]bool{}
	addReference(fig1, "fig1", ref, used)
	addReference(fig2, "fig2", ref, used)
	for _, k := range unusedReference(ref, used) {
		fmt.Fprintf(stderr, "plot: --reference has curves for %s, which the selection has no panel for; not drawn\n", k)
	}
	return func(out string) ([]string, error) {
		xLabel := fig1XLabel(wallClock)
		fig1Caption := "Figure 1: cross-entropy difference on the validation set during training (best run of each model)"
		if len(extra) > 0 {
			fig1Caption = "Figure 1: cross-entropy difference on the validation set during training (best finished run of each model; unfinished runs up to their last epoch)"
		}
		var files []string
		for _, f := range []struct {
			panels       []panel
			name         func(string) string
			all, caption string
			title        string
			xLabel       string
		}{
			{fig1, fig1Name, fig1AllName, fig1Caption, "validation set during training", xLabel},
			{fig2, fig2Name, fig2AllName, fig2Caption, fig2Title, "string length"},
		} {
			for _, pn := range f.panels {
				fs, err := savePanel(out, f.name(pn.task), pn, protocol.TaskTitle(pn.task)+": "+f.title, f.xLabel, pn.yLabel())
				if err != nil {
					return nil, err
				}
				files = append(files, fs...)
			}
			if len(f.panels) > 0 {
				fs, err := savePanels(out, f.all, strings.Replace(f.caption, "cross-entropy difference", measureName(f.panels), 1), f.panels, f.xLabel)
				if err != nil {
					return nil, err
				}
				files = append(files, fs...)
			}
		}
		for _, c := range []struct {
			name   string
			panels []protocol.Panel
			x, y   string
		}{
			{fig1AllName, data.Valid, fig1XName(wallClock), "valid_difference"},
			{fig2AllName, data.Test, "length", fig2Y},
		} {
			if len(c.panels) == 0 {
				continue
			}
			path := filepath.Join(out, c.name+".csv")
			if err := protocol.WritePanelsCSV(path, c.panels, c.x, c.y); err != nil {
				return nil, err
			}
			files = append(files, path)
		}
		return files, nil
	}, nil
}

// panelPlot draws a panel's lines (its legend is drawn beside it: see
// savePanel and savePanels).
func panelPlot(pn panel, title, x, y string) (*plot.Plot, error) {
	p := newPlot(title, x, y)
	if x == fig1XLabel(false) || x == "string length" {
		// Whole epochs, whole lengths: no tick at 1.5.
		p.X.Tick.Marker = figure.IntegerTicks{}
	}
	for _, s := range pn.lines {
		line := modelLine
		if s.reference {
			line = referenceLine
		}
		l, err := line(s.kind, s.xys)
		if err != nil {
			return nil, err
		}
		if l != nil {
			if !s.reference {
				s.styled(l)
			}
			p.Add(l)
		}
	}
	return p, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Min = 0
	p.X.Tick.Marker, p.Y.Tick.Marker = figure.PlainTicks{}, figure.PlainTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// modelLine is a model kind's line, in its style; nil for no points.
func modelLine(kind string, xys plotter.XYs) (*plotter.Line, error) {
	if len(xys) == 0 {
		return nil, nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color, l.Dashes = modelStyle(kind)
	l.Width = vg.Points(1.5)
	return l, nil
}

// referenceLine is a reference curve's line (plot --reference): dotted,
// in its model's colour; nil for no points.
func referenceLine(kind string, xys plotter.XYs) (*plotter.Line, error) {
	l, err := modelLine(kind, xys)
	if l != nil {
		dotted(l)
	}
	return l, err
}

// dotted draws l in the dotted style of the reference curves.
func dotted(l *plotter.Line) {
	l.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2)}
	l.Width = vg.Points(1.75)
}

// panelGrid is the layout of a figure of n panels: at most three columns,
// as many rows as needed, and whether the shared legend has a cell of its
// own, the first one left empty after the last panel. When the panels fill
// their rows (one panel, two, three, six…) there is no such cell: the
// legend takes a column of its own at the right, as wide as its entries,
// rather than a row or a cell as large as a panel.
func panelGrid(n int) (rows, cols int, legendCell bool) {
	cols = min(n, 3)
	rows = (n + cols - 1) / cols
	return rows, cols, n%cols != 0
}

// savePanels draws one figure with a panel per task, titled with the
// tasks' names, the caption above them and one legend for every model:
// in the cell after the last panel, or, when the panels fill their rows,
// in a column of its own at the right (see panelGrid), so that it covers
// no line. It writes the figure as name.png and name.svg.
func savePanels(dir, name, caption string, panels []panel, x string) ([]string, error) {
	rows, cols, legendCell := panelGrid(len(panels))
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	var lines []series
	for i, pn := range panels {
		p, err := panelPlot(pn, protocol.TaskTitle(pn.task), x, pn.yLabel())
		if err != nil {
			return nil, err
		}
		grid[i/cols][i%cols] = p
		for _, s := range pn.lines {
			// The shared legend names each kind once, unless lines
			// have labels of their own (runs of one kind).
			s.inProgress = false
			lines = append(lines, s)
		}
	}
	legend, err := modelLegend(lines, vg.Points(12))
	if err != nil {
		return nil, err
	}
	var column vg.Length
	if !legendCell {
		column = figure.LegendColumn(legend)
	}
	w := vg.Length(cols)*4.5*vg.Inch + column
	caption, band := figure.FitCaption(caption, w)
	h := vg.Length(rows)*3.5*vg.Inch + band
	return figure.Save(dir, name, w, h, func(dc draw.Canvas) {
		body := figure.DrawCaption(dc, caption, band)
		body.Max.X -= column
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(16), PadY: vg.Points(16),
			PadLeft: vg.Points(6), PadRight: vg.Points(10), PadTop: vg.Points(4), PadBottom: vg.Points(6)}
		canvases := plot.Align(grid, tiles, body)
		for i := range panels {
			grid[i/cols][i%cols].Draw(canvases[i/cols][i%cols])
		}
		if !legendCell {
			// At the right of the first row, level with its data.
			top := grid[0][cols-1].DataCanvas(canvases[0][cols-1]).Max.Y
			figure.DrawLegendColumn(dc, legend, body.Max.X, top)
			return
		}
		lc := canvases[len(panels)/cols][len(panels)%cols]
		// Inset the legend within its cell.
		lc.Min.X += vg.Points(24)
		lc.Max.Y -= vg.Points(24)
		legend.Top, legend.Left = true, true
		legend.Draw(lc)
	})
}

// savePanel draws one task's panel, titled title, with the legend of its
// lines in a column at the right, as a 6 × 4 inch plot with the column
// beside it, and writes it as name.png and name.svg.
func savePanel(dir, name string, pn panel, title, x, y string) ([]string, error) {
	p, err := panelPlot(pn, title, x, y)
	if err != nil {
		return nil, err
	}
	legend, err := modelLegend(pn.lines, vg.Points(10))
	if err != nil {
		return nil, err
	}
	column := figure.LegendColumn(legend)
	return figure.Save(dir, name, 6*vg.Inch+column, 4*vg.Inch, func(dc draw.Canvas) {
		pc := dc
		pc.Max.X -= column
		p.Draw(pc)
		figure.DrawLegendColumn(dc, legend, pc.Max.X, p.DataCanvas(pc).Max.Y)
	})
}

// modelLegend is the legend of lines: one entry per distinct label, the
// kinds in the order of the kinds table, then one for each label of
// reference curves, with text of the given size. A kind drawn only by
// reference curves has an entry of its own, dotted, "(<label> only)", so
// that every colour is named.
func modelLegend(lines []series, size vg.Length) (*plot.Legend, error) {
	var entries, refs []series
	for _, s := range lines {
		if s.reference {
			if !slices.ContainsFunc(refs, func(e series) bool { return e.legendLabel() == s.legendLabel() }) {
				refs = append(refs, s)
			}
			continue
		}
		if !slices.ContainsFunc(entries, func(e series) bool { return e.legendLabel() == s.legendLabel() }) {
			entries = append(entries, s)
		}
	}
	for _, s := range lines {
		if s.reference && !slices.ContainsFunc(entries, func(e series) bool { return e.kind == s.kind }) {
			// Named by its kind, dotted: the reference's own.
			entries = append(entries, series{kind: s.kind, reference: true, label: modelLabel(s.kind) + " (" + s.legendLabel() + " only)"})
		}
	}
	kindIndex := func(kind string) int {
		return slices.IndexFunc(nsrnn.AllKinds(), func(k nsrnn.Kind) bool { return k.Name == kind })
	}
	slices.SortStableFunc(entries, func(a, b series) int { return kindIndex(a.kind) - kindIndex(b.kind) })
	legend := plot.NewLegend()
	legend.TextStyle.Font.Size = size
	legend.ThumbnailWidth = 2.5 * size
	legend.Padding = size / 3
	for _, e := range entries {
		l, err := modelLine(e.kind, plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}})
		if err != nil {
			return nil, err
		}
		if e.reference {
			dotted(l)
		} else {
			e.styled(l)
		}
		legend.Add(e.legendLabel(), l)
	}
	// Reference curves are named once, by a grey dotted line.
	for _, r := range refs {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 0x60}
		dotted(l)
		legend.Add("dotted: "+r.legendLabel(), l)
	}
	return &legend, nil
}
