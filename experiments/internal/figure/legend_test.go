package figure

import (
	"image"
	"image/color"
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// areaColor is the colour of the data area: not a grey, which the
// antialiased black texts and lines would also give.
var areaColor = color.RGBA{R: 0x80, G: 0xa0, B: 0xc0, A: 0xff}

// colouredArea is a plotter that fills the whole data area in areaColor.
type colouredArea struct{}

func (colouredArea) Plot(c draw.Canvas, _ *plot.Plot) {
	c.SetColor(areaColor)
	c.Fill(c.Rectangle.Path())
}

// legendImage draws a plot whose data area is coloured (or left white),
// with a two-entry legend in the given corner added by LegendAdd (boxed)
// or Legend.Add, at 72 dpi (one pixel per point), and returns the image
// and the legend's size.
func legendImage(t *testing.T, left, top, boxed, coloured bool) (image.Image, vg.Point) {
	t.Helper()
	p := plot.New()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	if coloured {
		p.Add(colouredArea{})
	}
	p.Legend.Left, p.Legend.Top = left, top
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(-8)
	if !top {
		p.Legend.YOffs = vg.Points(8)
	}
	if !left {
		p.Legend.XOffs = vg.Points(-8)
	}
	for _, label := range []string{"a long label", "b"} {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0.5}, {X: 1, Y: 0.5}})
		if err != nil {
			t.Fatal(err)
		}
		if boxed {
			LegendAdd(&p.Legend, label, l)
		} else {
			p.Legend.Add(label, l)
		}
	}
	img := vgimg.NewWith(vgimg.UseWH(300, 200), vgimg.UseDPI(72))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(dc)
	return img.Image(), p.Legend.Rectangle(dc).Size()
}

// TestLegendAdd draws a legend in each corner of a coloured data area with
// and without its box. The pixels that differ (the area's colour become white) must
// form the box: a rectangle the legend's size plus the margin on every
// side, and every dark pixel of the legend drawn without a box (its
// texts and thumbnails) must lie inside it, clear of its margin.
func TestLegendAdd(t *testing.T) {
	for _, c := range []struct {
		name      string
		left, top bool
	}{{"bottom left", true, false}, {"top left", true, true}, {"bottom right", false, false}, {"top right", false, true}} {
		boxed, size := legendImage(t, c.left, c.top, true, true)
		plain, _ := legendImage(t, c.left, c.top, false, true)
		white, _ := legendImage(t, c.left, c.top, false, false)
		b := plain.Bounds()
		diff, dark, area := image.Rectangle{}, image.Rectangle{}, image.Rectangle{}
		grow := func(r *image.Rectangle, x, y int) {
			px := image.Rect(x, y, x+1, y+1)
			if r.Empty() {
				*r = px
			} else {
				*r = r.Union(px)
			}
		}
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r0, g0, b0, _ := plain.At(x, y).RGBA()
				r1, g1, b1, _ := boxed.At(x, y).RGBA()
				if r0 != r1 || g0 != g1 || b0 != b1 {
					grow(&diff, x, y)
				}
				if r0 == 0x8080 && g0 == 0xa0a0 && b0 == 0xc0c0 {
					grow(&area, x, y)
				}
			}
		}
		// The legend's dark pixels, within the data area (the axes'
		// lines and labels lie outside it). The box lies beneath the
		// entries: within it, the boxed legend's pixels are those of
		// the same legend drawn on a white data area.
		area = area.Inset(1)
		isDark := func(c color.Color) bool { r, g, b, _ := c.RGBA(); return r < 0x4000 && g < 0x4000 && b < 0x4000 }
		for y := area.Min.Y; y < area.Max.Y; y++ {
			for x := area.Min.X; x < area.Max.X; x++ {
				if isDark(plain.At(x, y)) {
					grow(&dark, x, y)
				}
			}
		}
		entries, differ := 0, 0
		in := diff.Inset(2) // clear of the box's outline
		for y := in.Min.Y; y < in.Max.Y; y++ {
			for x := in.Min.X; x < in.Max.X; x++ {
				if isDark(white.At(x, y)) {
					entries++
				}
				if boxed.At(x, y) != white.At(x, y) {
					differ++
				}
			}
		}
		if entries == 0 || differ > 0 {
			t.Errorf("%s: within the box, %d pixels differ from the legend drawn on white (%d dark pixels of its entries)", c.name, differ, entries)
		}
		// The box is drawn with an outline of half a point, so its
		// pixels reach about a pixel beyond the exact rectangle.
		wantW, wantH := float64(size.X)+2*legendPad, float64(size.Y)+2*legendPad
		if math.Abs(float64(diff.Dx())-wantW) > 2.5 || math.Abs(float64(diff.Dy())-wantH) > 2.5 {
			t.Errorf("%s: the box covers %v (%d × %d pixels), want about %.1f × %.1f", c.name, diff, diff.Dx(), diff.Dy(), wantW, wantH)
		}
		inner := diff.Inset(legendPad - 2)
		if dark.Empty() || !dark.In(inner) {
			t.Errorf("%s: the legend's dark pixels %v are not inside the box %v, clear of its margin", c.name, dark, diff)
		}
	}
}
