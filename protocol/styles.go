package protocol

import (
	"fmt"
	"hash/fnv"
	"image/color"
	"sync"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// Style is how the figures and tables of the programs draw a model kind:
// its label (the paper's name of the kind), its colour, whether its lines
// are dashed, and how a configuration is named by its sizes. The model
// package knows none of it; the library's kinds have the styles of the
// paper's figures, and a program may register one for a kind of its own
// (RegisterStyle).
type Style struct {
	// Label names the kind in legends and tables ("RNS").
	Label string
	// Color is its lines' colour; Dashed marks kinds drawn dashed. The
	// paper's kinds have its figures' colours (matplotlib's first seven,
	// LSTM blue to NS+S+U pink) and solid lines.
	Color  color.RGBA
	Dashed bool
	// SizeName names a configuration by its sizes in run names, after the
	// kind's name and a dash ("1-2" for |Q| = 1, |Γ| = 2; "hidden-247");
	// nil names it by its hidden size.
	SizeName func(c nsrnn.Config) string
}

func nsSizeName(c nsrnn.Config) string { return fmt.Sprintf("%d-%d", c.States, c.Symbols) }

// styles holds the registered styles by kind name.
var styles = struct {
	sync.RWMutex
	m map[string]Style
}{m: map[string]Style{
	nsrnn.LSTM: {Label: "LSTM", Color: color.RGBA{0x1f, 0x77, 0xb4, 0xff}},
	nsrnn.Gref: {Label: "Gref", Color: color.RGBA{0xff, 0x7f, 0x0e, 0xff},
		SizeName: func(c nsrnn.Config) string { return fmt.Sprintf("learned-%d", c.StackEmbedding) }},
	nsrnn.JM: {Label: "JM", Color: color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, SizeName: func(c nsrnn.Config) string {
		if c.PushHiddenState {
			return fmt.Sprintf("hidden-%d", c.Hidden)
		}
		return fmt.Sprintf("learned-%d", c.StackEmbedding)
	}},
	nsrnn.NS:   {Label: "NS", Color: color.RGBA{0xd6, 0x27, 0x28, 0xff}, SizeName: nsSizeName},
	nsrnn.NSS:  {Label: "NS+S", Color: color.RGBA{0x94, 0x67, 0xbd, 0xff}, SizeName: nsSizeName},
	nsrnn.NSU:  {Label: "NS+U", Color: color.RGBA{0x8c, 0x56, 0x4b, 0xff}, SizeName: nsSizeName},
	nsrnn.RNS:  {Label: "NS+S+U (RNS)", Color: color.RGBA{0xe3, 0x77, 0xc2, 0xff}, SizeName: nsSizeName},
	nsrnn.VRNS: {Label: "VRNS", Color: color.RGBA{0xbc, 0xbd, 0x22, 0xff}, Dashed: true, SizeName: nsSizeName},
}}

// RegisterStyle sets the style of a model kind, for a kind registered
// outside package nsrnn (nsrnn.RegisterKind) or to restyle one. It panics
// on an empty kind name or label, a programmer error; it is safe for
// concurrent use.
func RegisterStyle(kind string, s Style) {
	if kind == "" || s.Label == "" {
		panic(fmt.Sprintf("protocol: RegisterStyle(%q) needs a kind name and a label", kind))
	}
	styles.Lock()
	defer styles.Unlock()
	styles.m[kind] = s
}

// fallback are the colours of kinds without a registered style: the
// rest of matplotlib's ten (grey, olive and cyan), none of the paper's.
var fallback = []color.RGBA{{0x7f, 0x7f, 0x7f, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0x9e, 0xda, 0xe5, 0xff}}

// KindStyle returns the style of a model kind: the registered one, or for
// another kind its name as label, a colour chosen by its name among a few
// that the paper's kinds do not use, dashed lines, and its hidden size as
// its size name.
func KindStyle(kind string) Style {
	styles.RLock()
	s, ok := styles.m[kind]
	styles.RUnlock()
	if ok {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(kind))
	return Style{Label: kind, Color: fallback[h.Sum32()%uint32(len(fallback))], Dashed: true}
}

// ModelName names a configuration as the paper's PTB table (and ptb
// sweep) does, by its kind's SizeName: lstm-256, jm-hidden-247,
// jm-learned-22, rns-1-2, ….
func ModelName(c nsrnn.Config) string {
	if sn := KindStyle(c.Kind).SizeName; sn != nil {
		return c.Kind + "-" + sn(c)
	}
	return fmt.Sprintf("%s-%d", c.Kind, c.Hidden)
}
