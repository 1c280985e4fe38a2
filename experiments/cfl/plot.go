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

	"github.com/spf13/pflag"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/nsrnn/nsrnn/experiment"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("plot", "draw Figures 1–3 (PNG and SVG) from a sweep, its selection and recorded actions", runPlot)
}

// Names of the figure files, without the .png/.svg extension.
func fig1Name(task string) string { return "fig1-valid-" + task }
func fig2Name(task string) string { return "fig2-test-" + task }

const fig3Name = "fig3-actions"

// Figure 3 shows at most this many epochs, as in the paper.
const fig3Epochs = 30

// modelLabels are the paper's names of the model kinds.
var modelLabels = map[string]string{
	nsrnn.LSTM: "LSTM", nsrnn.Gref: "Gref", nsrnn.JM: "JM", nsrnn.NS: "NS",
	nsrnn.NSS: "NS+S", nsrnn.NSU: "NS+U", nsrnn.RNS: "NS+S+U (RNS)",
}

func modelLabel(kind string) string {
	if l, ok := modelLabels[kind]; ok {
		return l
	}
	return kind
}

// modelColors gives each model kind the same color in every figure.
var modelColors = []color.Color{
	color.RGBA{0x33, 0x33, 0x33, 0xff}, // lstm: dark grey
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, // gref: blue
	color.RGBA{0xff, 0x7f, 0x0e, 0xff}, // jm: orange
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, // ns: green
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, // ns+s: red
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, // ns+u: purple
	color.RGBA{0x8c, 0x56, 0x4b, 0xff}, // rns: brown
}

func modelStyle(kind string) (color.Color, []vg.Length) {
	i := slices.Index(nsrnn.Kinds, kind)
	if i < 0 {
		return color.Black, nil
	}
	var dashes []vg.Length
	if i%2 == 1 {
		dashes = []vg.Length{vg.Points(5), vg.Points(2)}
	}
	return modelColors[i], dashes
}

func runPlot(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("plot", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	sweep := fs.String("sweep", "", "sweep directory, after select (required for Figures 1 and 2)")
	out := fs.String("out", "", "output directory of the figures (required)")
	actions := fs.String("actions", "", "directory written by the actions command (default: <sweep>/actions if it exists)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	if *sweep == "" && *actions == "" {
		return fmt.Errorf("--sweep is required (or --actions alone for Figure 3)")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	var written []string
	if *sweep != "" {
		sel, err := experiment.ReadSelection(*sweep)
		if _, ok := errors.AsType[*iofs.PathError](err); ok {
			return fmt.Errorf("--sweep: %w (run select first)", err)
		} else if err != nil {
			return err
		}
		files, err := plotSelection(sel, *sweep, *out, stderr)
		if err != nil {
			return err
		}
		written = append(written, files...)
	}
	adir := *actions
	if adir == "" {
		adir = filepath.Join(*sweep, "actions")
		if _, err := os.Stat(adir); err != nil {
			adir = ""
			fmt.Fprintf(stderr, "plot: no %s; skipping Figure 3 (run actions --out there, or pass --actions)\n", filepath.Join(*sweep, "actions"))
		}
	}
	if adir != "" {
		files, err := plotActions(adir, *out)
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

// plotSelection draws Figures 1 and 2 for every task of the selection.
func plotSelection(sel *experiment.Selection, sweep, out string, stderr io.Writer) ([]string, error) {
	byTask := map[string][]experiment.Selected{}
	var tasks []string
	for _, s := range sel.Selected {
		if _, ok := byTask[s.Task]; !ok {
			tasks = append(tasks, s.Task)
		}
		byTask[s.Task] = append(byTask[s.Task], s)
	}
	var files []string
	for _, task := range tasks {
		// Figure 1: validation difference vs training time.
		p := newPlot(fmt.Sprintf("%s: validation set during training", task),
			"training time (s)", "cross-entropy diff. (nats)")
		for _, s := range byTask[task] {
			recs, err := experiment.ReadLog(filepath.Join(s.Dir, experiment.LogFile))
			if err != nil {
				return nil, err
			}
			xys := make(plotter.XYs, len(recs))
			for i, r := range recs {
				xys[i].X, xys[i].Y = r.ElapsedSeconds, r.ValidDifference
			}
			if err := addLine(p, s.Model, xys); err != nil {
				return nil, err
			}
		}
		fs, err := savePlot(p, out, fig1Name(task), 6*vg.Inch, 4*vg.Inch)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)

		// Figure 2: test difference by length.
		p = newPlot(fmt.Sprintf("%s: test set by length", task), "string length", "cross-entropy diff. (nats)")
		n := 0
		for _, s := range byTask[task] {
			path := experiment.TestResultPath(sweep, task, s.Model)
			b, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				continue
			} else if err != nil {
				return nil, err
			}
			var rep experiment.Report
			if err := json.Unmarshal(b, &rep); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			xys := make(plotter.XYs, len(rep.ByLength))
			for i, r := range rep.ByLength {
				xys[i].X, xys[i].Y = float64(r.Length), r.Difference
			}
			if err := addLine(p, s.Model, xys); err != nil {
				return nil, err
			}
			n++
		}
		if n == 0 {
			fmt.Fprintf(stderr, "plot: no test results in %s; skipping Figure 2 of %s (run select without --no-test)\n", filepath.Join(sweep, experiment.TestDir, task), task)
			continue
		}
		if fs, err = savePlot(p, out, fig2Name(task), 6*vg.Inch, 4*vg.Inch); err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	return files, nil
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
	p.Add(plotter.NewGrid())
	// Differences fall during training and grow with length: the
	// bottom-left corner is usually the emptiest.
	p.Legend.Top, p.Legend.Left = false, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(8)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	return p
}

func addLine(p *plot.Plot, kind string, xys plotter.XYs) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color, l.Dashes = modelStyle(kind)
	l.Width = vg.Points(1.5)
	p.Add(l)
	p.Legend.Add(modelLabel(kind), l)
	return nil
}

// savePlot writes p as name.png and name.svg in dir.
func savePlot(p *plot.Plot, dir, name string, w, h vg.Length) ([]string, error) {
	var files []string
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, name+ext)
		if err := p.Save(w, h, path); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
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
	p.Y.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for e := 1; e <= len(g.z); e++ {
			t := plot.Tick{Value: float64(e)}
			if e == 1 || e%5 == 0 {
				t.Label = fmt.Sprint(e)
			}
			ts = append(ts, t)
		}
		return ts
	})
	p.X.Min, p.X.Max = 0.5, float64(len(g.z[0]))+0.5
	p.Y.Min, p.Y.Max = 0.5, float64(len(g.z))+0.5
	return p, nil
}

// plotActions draws Figure 3 from DIR/<model>/actions.jsonl for every
// model found, side by side in one figure.
func plotActions(dir, out string) ([]string, error) {
	var plots []*plot.Plot
	for _, kind := range nsrnn.Kinds {
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
		plots = append(plots, p)
	}
	if len(plots) == 0 {
		return nil, fmt.Errorf("--actions %s: no <model>/%s files", dir, actionsFile)
	}
	w, h := vg.Length(len(plots))*4.5*vg.Inch, 4*vg.Inch
	caption := "Figure 3: weight of the correct action type (black = 1, white = 0): push before #, pop from # on"
	var files []string
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(out, fig3Name+ext)
		var c interface {
			vg.CanvasSizer
			io.WriterTo
		}
		switch ext {
		case ".png":
			ic := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150))
			c = vgimg.PngCanvas{Canvas: ic}
		default:
			c = vgsvg.New(w, h)
		}
		dc := draw.New(c)
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		top := dc
		top.Min.Y = top.Max.Y - vg.Points(18)
		cap := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter}
		cap.Font.Size = vg.Points(10)
		top.FillText(cap, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: (top.Min.Y + top.Max.Y) / 2}, caption)
		body := dc
		body.Max.Y -= vg.Points(18)
		tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(12), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadTop: vg.Points(4), PadBottom: vg.Points(4)}
		canvases := plot.Align([][]*plot.Plot{plots}, tiles, body)
		for i, p := range plots {
			p.Draw(canvases[0][i])
		}
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		if _, err := c.WriteTo(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}
