// Package figure writes gonum/plot figures as the experiment programs
// commit them: a PNG at least MinPNGWidth pixels wide and an SVG of the
// same drawing, each written atomically, on a white background, with tick
// labels free of trailing zeros, and legends drawn inside a plot on a
// box of their own (LegendAdd).
package figure

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
)

// MinPNGWidth is the least width of the PNG files, in pixels: their
// resolution is chosen so that they are at least this wide.
const MinPNGWidth = 1600

// Save draws a figure of size w × h on a white background with drawFn and
// writes it as name.png (at least MinPNGWidth pixels wide, 200 dpi or
// more) and name.svg in dir, returning the two paths.
func Save(dir, name string, w, h vg.Length, drawFn func(draw.Canvas)) ([]string, error) {
	if !(w > 0 && h > 0) {
		return nil, fmt.Errorf("figure %s: size %v × %v must be positive", name, w, h)
	}
	dpi := max(200, int(math.Ceil(MinPNGWidth/float64(w/vg.Inch))))
	var files []string
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, name+ext)
		var c interface {
			vg.CanvasSizer
			io.WriterTo
		}
		switch ext {
		case ".png":
			c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))}
		default:
			c = vgsvg.New(w, h)
		}
		dc := draw.New(c)
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		drawFn(dc)
		err := atomicfile.Write(path, func(f io.Writer) error {
			_, err := c.WriteTo(f)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

// SavePlot writes one plot as a figure of size w × h (see Save).
func SavePlot(dir, name string, p *plot.Plot, w, h vg.Length) ([]string, error) {
	return Save(dir, name, w, h, p.Draw)
}

// LegendAdd adds an entry to l as l.Add does. The first entry added to a
// legend this way (the first of all its entries) also draws the legend's
// box: an opaque white rectangle with a light grey border behind every
// entry, so that the lines beneath a legend inside the data area do not
// run through it. The box is drawn from l as it is when the plot is
// drawn, so l must not be copied after the first LegendAdd.
func LegendAdd(l *plot.Legend, label string, thumbs ...plot.Thumbnailer) {
	if l.Rectangle(draw.Canvas{}).Size().Y == 0 {
		thumbs = append([]plot.Thumbnailer{legendBox{l}}, thumbs...)
	}
	l.Add(label, thumbs...)
}

// legendPad is the margin of a legend's box around its entries.
const legendPad = 4

// legendBox is the thumbnail of a legend's first entry that draws the
// box behind the whole legend (see LegendAdd).
type legendBox struct{ l *plot.Legend }

// Thumbnail draws the box. c is the first entry's icon: the legend's
// entries lie below its top, as wide as the legend (Legend.Rectangle's
// size) from its left edge (a legend at the left, whose texts follow the
// icons) or to its right edge (at the right, texts before the icons).
func (b legendBox) Thumbnail(c *draw.Canvas) {
	size := b.l.Rectangle(*c).Size()
	var r vg.Rectangle
	r.Max.Y = c.Max.Y
	r.Min.Y = c.Max.Y - size.Y
	if b.l.Left {
		r.Min.X = c.Min.X
		r.Max.X = c.Min.X + size.X
	} else {
		r.Max.X = c.Max.X
		r.Min.X = c.Max.X - size.X
	}
	pad := vg.Points(legendPad)
	r.Min.X, r.Min.Y = r.Min.X-pad, r.Min.Y-pad
	r.Max.X, r.Max.Y = r.Max.X+pad, r.Max.Y+pad
	outline := r.Path()
	c.SetColor(color.White)
	c.Fill(outline)
	c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 0xc0}, Width: vg.Points(0.5)})
	c.Stroke(outline)
}

// PlainTicks are gonum/plot's default ticks with their labels written
// without trailing zeros: the default writes the labels of a step of 25
// as 25.00, 75.00.
type PlainTicks struct{}

// Ticks returns the default ticks of [min, max], relabelled.
func (PlainTicks) Ticks(min, max float64) []plot.Tick {
	return Plain(plot.DefaultTicks{}.Ticks(min, max))
}

// LogTicks mark a logarithmic axis at every d·10^k in its range (d = 1,
// …, 9) and label those with d = 1, 2, 3 and 5, or every one of them when
// that leaves fewer than three labels, so that a range within one decade
// (perplexities from 280 to 450, say) still carries several labels. A
// range that holds fewer than two such values (124 to 189) gets
// PlainTicks's evenly spaced ones instead.
type LogTicks struct{}

// Ticks returns the ticks of [lo, hi] (lo > 0).
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	var ts []plot.Tick
	var digits []int
	for k := math.Floor(math.Log10(lo)); ; k++ {
		base := math.Pow(10, k)
		if base > hi {
			break
		}
		for d := 1; d <= 9; d++ {
			v := float64(d) * base
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', max(0, -int(k)), 64)})
			digits = append(digits, d)
		}
	}
	if len(ts) < 2 {
		return PlainTicks{}.Ticks(lo, hi)
	}
	labelled := 0
	for _, d := range digits {
		if d == 1 || d == 2 || d == 3 || d == 5 {
			labelled++
		}
	}
	for i, d := range digits {
		if labelled >= 3 && d != 1 && d != 2 && d != 3 && d != 5 {
			ts[i].Label = ""
		}
	}
	return ts
}

// IntegerTicks are PlainTicks without the ticks that fall between
// integers (for an axis of epochs).
type IntegerTicks struct{}

// Ticks returns the integer ticks among the default ticks of [min, max],
// or every integer in it when the default ticks hold fewer than two.
func (IntegerTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for _, t := range (PlainTicks{}).Ticks(min, max) {
		if t.Value == math.Trunc(t.Value) {
			ts = append(ts, t)
		}
	}
	if len(ts) >= 2 || max-min > 1000 {
		return ts
	}
	ts = ts[:0]
	for v := math.Ceil(min); v <= max; v++ {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ts
}

// Plain drops the trailing zeros (and a trailing point) of every decimal
// tick label, leaving labels in exponent notation alone.
func Plain(ts []plot.Tick) []plot.Tick {
	for i, t := range ts {
		if l := t.Label; strings.Contains(l, ".") && !strings.ContainsAny(l, "eE") {
			ts[i].Label = strings.TrimSuffix(strings.TrimRight(l, "0"), ".")
		}
	}
	return ts
}
