package figure

import (
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LegendMargin is the space on each side of a legend in a column of its
// own.
const LegendMargin = 10

// LegendColumn is the width of a column that holds legend: its widest
// entry with LegendMargin on each side.
func LegendColumn(legend *plot.Legend) vg.Length {
	return legend.Rectangle(draw.Canvas{}).Size().X + 2*vg.Points(LegendMargin)
}

// DrawLegendColumn draws legend in the column of dc right of x, its first
// entry's top at top.
func DrawLegendColumn(dc draw.Canvas, legend *plot.Legend, x, top vg.Length) {
	lc := dc
	lc.Min.X = x + vg.Points(LegendMargin)
	lc.Max.Y = top
	legend.Top, legend.Left = true, true
	legend.Draw(lc)
}

// CaptionStyle is the text style of a figure's caption.
func CaptionStyle() draw.TextStyle {
	sty := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter}
	sty.Font.Size = vg.Points(12)
	return sty
}

// FitCaption wraps caption at spaces into lines that fit a figure w wide,
// and returns it with the height of the band along the top that holds it
// (24 points for one line).
func FitCaption(caption string, w vg.Length) (string, vg.Length) {
	sty := CaptionStyle()
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

// DrawCaption writes caption (from FitCaption) in a band of the given
// height along the top of dc and returns the rest.
func DrawCaption(dc draw.Canvas, caption string, band vg.Length) draw.Canvas {
	top := dc
	top.Min.Y = top.Max.Y - band
	top.FillText(CaptionStyle(), vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: (top.Min.Y + top.Max.Y) / 2}, caption)
	body := dc
	body.Max.Y -= band
	return body
}
