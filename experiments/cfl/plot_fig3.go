package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nsrnn/nsrnn/experiments/internal/figure"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure 3 shows at most this many epochs, as in the paper.
const fig3Epochs = 30

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

func (g actionGrid) Dims() (c, r int) { return len(g.z[0]), len(g.z) }

func (g actionGrid) Z(c, r int) float64 { return g.z[r][c] }

func (g actionGrid) X(c int) float64 { return float64(c + 1) }

func (g actionGrid) Y(r int) float64 { return float64(r + 1) }

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
	caption, band := figure.FitCaption("Figure 3: weight of the correct action type (black = 1, white = 0): push before #, pop from # on", w)
	h := vg.Length(len(rows))*(5*vg.Inch-vg.Points(24)) + band
	return func(out string) ([]string, error) {
		return figure.Save(out, fig3Name, w, h, func(dc draw.Canvas) {
			body := figure.DrawCaption(dc, caption, band)
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
