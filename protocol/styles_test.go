package protocol

import (
	"image/color"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// TestStyles: the paper's kinds have the colours of its figures,
// as its source defines them (\definecolor{color0}{rgb}{...} to color6,
// in the legend's order nsrnn.LSTM, Gref, JM, NS, NS+S, NS+U, NS+S+U), and its
// solid lines; no other kind shares one of them.
func TestStyles(t *testing.T) {
	paper := []struct {
		kind    string
		r, g, b float64
	}{
		{nsrnn.LSTM, 0.12156862745098, 0.466666666666667, 0.705882352941177},
		{nsrnn.Gref, 1, 0.498039215686275, 0.0549019607843137},
		{nsrnn.JM, 0.172549019607843, 0.627450980392157, 0.172549019607843},
		{nsrnn.NS, 0.83921568627451, 0.152941176470588, 0.156862745098039},
		{nsrnn.NSS, 0.580392156862745, 0.403921568627451, 0.741176470588235},
		{nsrnn.NSU, 0.549019607843137, 0.337254901960784, 0.294117647058824},
		{nsrnn.RNS, 0.890196078431372, 0.466666666666667, 0.76078431372549},
	}
	channel := func(x float64) uint8 { return uint8(math.Round(255 * x)) }
	used := map[color.RGBA]string{}
	for _, p := range paper {
		k := KindStyle(p.kind)
		want := color.RGBA{channel(p.r), channel(p.g), channel(p.b), 0xff}
		if k.Color != want || k.Dashed || !slices.Contains(PaperModels, p.kind) {
			t.Errorf("%s: colour %v, dashed %v, in PaperModels %v; the paper's figures draw it solid in %v", p.kind, k.Color, k.Dashed, slices.Contains(PaperModels, p.kind), want)
		}
		used[want] = p.kind
	}
	for _, k := range nsrnn.AllKinds() {
		if owner, ok := used[KindStyle(k.Name).Color]; ok && owner != k.Name {
			t.Errorf("%s has the colour of the paper's %s", k.Name, owner)
		}
	}
	if got := strings.Join(PaperModels, ","); got != "lstm,gref,jm,ns,ns+s,ns+u,rns" {
		t.Errorf("PaperModels = %s, want the paper's order", got)
	}
	// A kind without a style: its name, a colour none of the paper's
	// kinds has, dashed; a registered one is used.
	s := KindStyle("no-such-kind")
	if _, clash := used[s.Color]; s.Label != "no-such-kind" || clash || !s.Dashed {
		t.Errorf("the default style %+v", s)
	}
	RegisterStyle("styled-kind", Style{Label: "Styled", Color: color.RGBA{1, 2, 3, 255}})
	if s := KindStyle("styled-kind"); s.Label != "Styled" || s.Color != (color.RGBA{1, 2, 3, 255}) {
		t.Errorf("a registered style: %+v", s)
	}
	cfg := nsrnn.Config{Kind: nsrnn.JM, Hidden: 247, PushHiddenState: true}
	if got := ModelName(cfg); got != "jm-hidden-247" {
		t.Errorf("ModelName(%+v) = %q", cfg, got)
	}
}
