package main

import (
	"bufio"
	"encoding/json"
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

// Figure 3 shows at most this many epochs, as in the paper.
const fig3Epochs = 30

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
		for _, c := range p.Curves {
			xys := make(plotter.XYs, len(c.Points))
			for j, pt := range c.Points {
				xys[j].X, xys[j].Y = pt.X, pt.Y
			}
			out[i].lines = append(out[i].lines, series{kind: c.Model, xys: xys, inProgress: c.InProgress, label: c.Label})
		}
	}
	return out
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
		fs, err := savePanels(out, fig1AllName, "Figure 1: cross-entropy difference on the validation set during training", panels, xLabel, diffLabel)
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
				fs, err := savePanels(out, f.all, f.caption, f.panels, f.xLabel, diffLabel)
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
func savePanels(dir, name, caption string, panels []panel, x, y string) ([]string, error) {
	rows, cols, legendCell := panelGrid(len(panels))
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	var lines []series
	for i, pn := range panels {
		p, err := panelPlot(pn, protocol.TaskTitle(pn.task), x, y)
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
		column = legendColumn(legend)
	}
	w := vg.Length(cols)*4.5*vg.Inch + column
	caption, band := fitCaption(caption, w)
	h := vg.Length(rows)*3.5*vg.Inch + band
	return figure.Save(dir, name, w, h, func(dc draw.Canvas) {
		body := drawCaption(dc, caption, band)
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
			drawLegendColumn(dc, legend, body.Max.X, top)
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
	column := legendColumn(legend)
	return figure.Save(dir, name, 6*vg.Inch+column, 4*vg.Inch, func(dc draw.Canvas) {
		pc := dc
		pc.Max.X -= column
		p.Draw(pc)
		drawLegendColumn(dc, legend, pc.Max.X, p.DataCanvas(pc).Max.Y)
	})
}

// legendMargin is the space on each side of a legend in a column of its
// own.
const legendMargin = 10

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

// legendColumn is the width of a column that holds legend: its widest
// entry with legendMargin on each side.
func legendColumn(legend *plot.Legend) vg.Length {
	return legend.Rectangle(draw.Canvas{}).Size().X + 2*vg.Points(legendMargin)
}

// drawLegendColumn draws legend in the column of dc right of x, its first
// entry's top at top.
func drawLegendColumn(dc draw.Canvas, legend *plot.Legend, x, top vg.Length) {
	lc := dc
	lc.Min.X = x + vg.Points(legendMargin)
	lc.Max.Y = top
	legend.Top, legend.Left = true, true
	legend.Draw(lc)
}

// captionStyle is the text style of a figure's caption.
func captionStyle() draw.TextStyle {
	sty := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter}
	sty.Font.Size = vg.Points(12)
	return sty
}

// fitCaption wraps caption at spaces into lines that fit a figure w wide,
// and returns it with the height of the band along the top that holds it
// (24 points for one line).
func fitCaption(caption string, w vg.Length) (string, vg.Length) {
	sty := captionStyle()
	limit := w - vg.Points(24)
	var lines []string
	line := ""
	for _, word := range strings.Fields(caption) {
		if line != "" && sty.Width(line+" "+word) > limit {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	lines = append(lines, line)
	text := strings.Join(lines, "\n")
	return text, sty.Height(text) + vg.Points(24) - sty.Height("x")
}

// drawCaption writes caption (from fitCaption) in a band of the given
// height along the top of dc and returns the rest.
func drawCaption(dc draw.Canvas, caption string, band vg.Length) draw.Canvas {
	top := dc
	top.Min.Y = top.Max.Y - band
	top.FillText(captionStyle(), vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: (top.Min.Y + top.Max.Y) / 2}, caption)
	body := dc
	body.Max.Y -= band
	return body
}

// readActions reads an actions.jsonl file.
func readActions(path string) ([]actionRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []actionRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var r actionRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		recs = append(recs, r)
	}
	return recs, sc.Err()
}

// Action types, in the order of Model.ActionTypeWeights.
const (
	actPush = iota
	actReplace
	actPop
)

// correctAction is the correct action type of stack update t (1-based)
// on a marked-reversal string whose marker # is symbol number marker
// (1-based): push while reading the first half (t < marker), pop from the
// marker on (t ≥ marker). The reading r_t reaches the prediction of symbol
// t+2 (r_{t−1} feeds h_t, which predicts w_{t+1}), so the
// update made on reading # must already pop the symbol pushed last, which
// the prediction made on reading # has used.
func correctAction(t, marker int) int {
	if t < marker {
		return actPush
	}
	return actPop
}

// actionGrid is a heatmap's data: rows are epochs, columns positions t.
type actionGrid struct {
	z [][]float64 // z[epoch index][t-1]
}

func (g actionGrid) Dims() (c, r int)   { return len(g.z[0]), len(g.z) }
func (g actionGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g actionGrid) X(c int) float64    { return float64(c + 1) }
func (g actionGrid) Y(r int) float64    { return float64(r + 1) }

// greys is a palette from white (0) to black (1).
type greys int

func (n greys) Colors() []color.Color {
	cs := make([]color.Color, n)
	for i := range cs {
		v := uint8(255 - 255*i/(int(n)-1))
		cs[i] = color.Gray{Y: v}
	}
	return cs
}

// actionPlot draws one model's Figure 3 heatmap from its records.
func actionPlot(kind string, recs []actionRecord) (*plot.Plot, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("no records")
	}
	if len(recs) > fig3Epochs {
		recs = recs[:fig3Epochs]
	}
	syms := strings.Fields(recs[0].String)
	marker := slices.Index(syms, "#") + 1
	if marker == 0 {
		return nil, fmt.Errorf("the string %q has no marker #; Figure 3 needs a marked-reversal string", recs[0].String)
	}
	g := actionGrid{}
	for _, r := range recs {
		if len(r.Weights) == 0 || len(r.Weights) != len(recs[0].Weights) {
			return nil, fmt.Errorf("epoch %d: %d positions, want %d", r.Epoch, len(r.Weights), len(recs[0].Weights))
		}
		row := make([]float64, len(r.Weights))
		for i, w := range r.Weights {
			row[i] = w[correctAction(i+1, marker)]
		}
		g.z = append(g.z, row)
	}
	p := plot.New()
	p.Title.Text = modelLabel(kind)
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = fmt.Sprintf("t (string position; # at t = %d)", marker)
	p.Y.Label.Text = "epochs elapsed"
	h := plotter.NewHeatMap(g, greys(256))
	h.Min, h.Max = 0, 1
	p.Add(h)
	p.Y.Scale = plot.InvertedScale{Normalizer: plot.LinearScale{}}
	p.Y.Tick.Marker = epochTicks(len(g.z))
	p.X.Min, p.X.Max = 0.5, float64(len(g.z[0]))+0.5
	p.Y.Min, p.Y.Max = 0.5, float64(len(g.z))+0.5
	return p, nil
}

// prepareActions reads Figure 3 from DIR/<model>/actions.jsonl for every
// model found in each of dirs: one row of panels per directory, side by
// side by model. With more than one directory each panel's title names
// its run's seed (from DIR/<model>/settings.json, else the directory);
// every title says at which epoch the validation difference first came
// within convergedDiff of the bound, when DIR/<model>/log.jsonl is there.
func prepareActions(dirs []string) (drawFunc, error) {
	var rows [][]*plot.Plot
	for _, dir := range dirs {
		var row []*plot.Plot
		for _, kind := range nsrnn.KindNames() {
			path := filepath.Join(dir, kind, actionsFile)
			recs, err := readActions(path)
			if errors.Is(err, os.ErrNotExist) {
				continue
			} else if err != nil {
				return nil, err
			}
			p, err := actionPlot(kind, recs)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			title, err := actionTitle(filepath.Join(dir, kind), kind, len(dirs) > 1, len(recs))
			if err != nil {
				return nil, err
			}
			p.Title.Text = title
			row = append(row, p)
		}
		if len(row) == 0 {
			return nil, fmt.Errorf("--actions %s: no <model>/%s files", dir, actionsFile)
		}
		if len(rows) > 0 && len(row) != len(rows[0]) {
			return nil, fmt.Errorf("--actions %s: %d models, where %s has %d; each directory needs the same models", dir, len(row), dirs[0], len(rows[0]))
		}
		rows = append(rows, row)
	}
	cols := len(rows[0])
	w := vg.Length(cols) * 4.5 * vg.Inch
	caption, band := fitCaption("Figure 3: weight of the correct action type (black = 1, white = 0): push before #, pop from # on", w)
	h := vg.Length(len(rows))*(5*vg.Inch-vg.Points(24)) + band
	return func(out string) ([]string, error) {
		return figure.Save(out, fig3Name, w, h, func(dc draw.Canvas) {
			body := drawCaption(dc, caption, band)
			tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Points(12), PadY: vg.Points(12), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadTop: vg.Points(4), PadBottom: vg.Points(4)}
			canvases := plot.Align(rows, tiles, body)
			for i, row := range rows {
				for j, p := range row {
					p.Draw(canvases[i][j])
				}
			}
		})
	}, nil
}

// convergedDiff is the difference from the lower bound, in nats per
// symbol, that the paper counts as having learned a task.
const convergedDiff = 0.05

// actionTitle is the title of a Figure 3 panel of the run in dir: the
// model, its seed when withSeed, and the first epoch among the first
// epochs recorded whose validation difference is within convergedDiff of
// the bound (from the run's log, when it has one).
func actionTitle(dir, kind string, withSeed bool, epochs int) (string, error) {
	title := modelLabel(kind)
	if withSeed {
		as, err := readActionsSettings(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			title += ", " + filepath.Base(filepath.Dir(dir))
		case err != nil:
			return "", err
		default:
			title += fmt.Sprintf(", seed %d", as.Run.Seed)
		}
	}
	log, err := protocol.ReadLog(filepath.Join(dir, protocol.LogFile))
	if errors.Is(err, os.ErrNotExist) {
		return title, nil
	} else if err != nil {
		return "", err
	}
	for _, r := range log {
		if r.Epoch <= epochs && r.ValidDifference <= convergedDiff {
			return title + fmt.Sprintf(": within %.2f at epoch %d", convergedDiff, r.Epoch), nil
		}
	}
	return title + fmt.Sprintf(": not within %.2f in %d epochs", convergedDiff, min(epochs, len(log))), nil
}

// epochTicks marks every epoch of Figure 3's axis, labelling each when
// there are at most 20, else the first and every other one.
func epochTicks(epochs int) plot.Ticker {
	return plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for e := 1; e <= epochs; e++ {
			t := plot.Tick{Value: float64(e)}
			if epochs <= 20 || e%2 == 1 {
				t.Label = fmt.Sprint(e)
			}
			ts = append(ts, t)
		}
		return ts
	})
}
