package nsrnn

import (
	"fmt"
	"image/color"
	"strings"

	"github.com/nsrnn/nsrnn/stacks"
)

// Model kinds, as named on every command line.
const (
	LSTM = "lstm" // no stack
	Gref = "gref" // stratification stack
	JM   = "jm"   // superposition stack
	NS   = "ns"   // nondeterministic stack, normalized, symbol reading
	NSS  = "ns+s" // normalized, state+symbol reading
	NSU  = "ns+u" // unnormalized, symbol reading
	RNS  = "rns"  // unnormalized, state+symbol reading (NS+S+U)
	VRNS = "vrns" // RNS that also pushes vectors, reading the expected top vector
)

// StackFamily groups the model kinds by the configuration fields their
// stack uses.
type StackFamily int

const (
	// NoStack is the plain LSTM.
	NoStack StackFamily = iota
	// VectorStack is a stack of vectors (gref, jm): Config.StackEmbedding,
	// and for jm PushHiddenState and DepthLimit.
	VectorStack
	// NondeterministicStack is an NS variant: Config.States, Symbols,
	// Window and Bottom.
	NondeterministicStack
)

// Kind describes one model kind. The table returned by AllKinds is the one
// place that lists them: configuration checks, parameter counts, plots,
// sweeps and the command-line programs all read it, so adding a kind means
// adding one entry.
type Kind struct {
	// Name is the kind's name on command lines and in saved files.
	Name string
	// Label is the paper's name of the kind, for figures and tables.
	Label string
	// Color is the kind's colour in figures; Dashed marks kinds drawn
	// with dashed lines.
	Color  color.RGBA
	Dashed bool
	// Family says which configuration fields the stack uses.
	Family StackFamily
	// Flags are the command-line flags, beyond those of every model, that
	// apply to the kind.
	Flags []string
	// Streams reports whether the kind can run as a Stream (language
	// modeling): its stack can carry its state from chunk to chunk, given
	// a depth limit (jm) or a window (the NS variants but vrns).
	Streams bool
	// Stack builds the kind's stack for a validated configuration; nil
	// for the plain LSTM.
	Stack func(name string, c Config) (stacks.Layer, error)
	// StackParams counts the stack's parameters, and ReadingSize the
	// size of its reading, for a configuration, without building
	// anything (in float64, so that no size can overflow).
	StackParams func(c Config) float64
	ReadingSize func(c Config) float64
}

var nsFlags = []string{"states", "symbols", "window", "bottom"}

func nsKind(name, label string, col color.RGBA, dashed bool) Kind {
	return Kind{
		Name: name, Label: label, Color: col, Dashed: dashed, Family: NondeterministicStack, Flags: nsFlags, Streams: true,
		Stack: func(n string, c Config) (stacks.Layer, error) { return stacks.NewNS(n, c.Hidden, c.nsConfig()) },
		StackParams: func(c Config) float64 {
			q, g := float64(c.States), float64(c.Symbols)
			return q * g * (2*q*g + q) * (float64(c.Hidden) + 1)
		},
		ReadingSize: func(c Config) float64 {
			if c.nsConfig().StateReading {
				return float64(c.States) * float64(c.Symbols)
			}
			return float64(c.Symbols)
		},
	}
}

var kindTable = []Kind{
	{Name: LSTM, Label: "LSTM", Color: color.RGBA{0x33, 0x33, 0x33, 0xff}, Family: NoStack, Streams: true},
	{
		Name: Gref, Label: "Gref", Color: color.RGBA{0x1f, 0x77, 0xb4, 0xff}, Dashed: true, Family: VectorStack,
		Flags: []string{"stack-embedding"},
		Stack: func(n string, c Config) (stacks.Layer, error) { return stacks.NewGref(n, c.Hidden, c.StackEmbedding) },
		StackParams: func(c Config) float64 {
			return (float64(c.Hidden) + 1) * (float64(c.StackEmbedding) + 2)
		},
		ReadingSize: func(c Config) float64 { return float64(c.StackEmbedding) },
	},
	{
		Name: JM, Label: "JM", Color: color.RGBA{0xff, 0x7f, 0x0e, 0xff}, Family: VectorStack,
		Flags: []string{"stack-embedding", "push-hidden-state", "depth-limit"}, Streams: true,
		Stack: func(n string, c Config) (stacks.Layer, error) {
			return stacks.NewJM(n, c.Hidden, c.jmSize(), c.PushHiddenState, c.DepthLimit)
		},
		StackParams: func(c Config) float64 {
			p := 3 * (float64(c.Hidden) + 1)
			if !c.PushHiddenState {
				p += (float64(c.Hidden) + 1) * float64(c.StackEmbedding)
			}
			return p
		},
		ReadingSize: func(c Config) float64 { return float64(c.jmSize()) },
	},
	nsKind(NS, "NS", color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, true),
	nsKind(NSS, "NS+S", color.RGBA{0xd6, 0x27, 0x28, 0xff}, false),
	nsKind(NSU, "NS+U", color.RGBA{0x94, 0x67, 0xbd, 0xff}, true),
	nsKind(RNS, "NS+S+U (RNS)", color.RGBA{0x8c, 0x56, 0x4b, 0xff}, false),
	{
		Name: VRNS, Label: "VRNS", Color: color.RGBA{0xe3, 0x77, 0xc2, 0xff}, Dashed: true, Family: NondeterministicStack,
		Flags: append(append([]string(nil), nsFlags...), "stack-embedding", "bottom-vector"),
		Stack: func(n string, c Config) (stacks.Layer, error) { return stacks.NewVRNS(n, c.Hidden, c.vrnsConfig()) },
		StackParams: func(c Config) float64 {
			q, g, m := float64(c.States), float64(c.Symbols), float64(c.StackEmbedding)
			p := (float64(c.Hidden) + 1) * (q*g*(2*q*g+q) + m)
			if c.BottomVector == stacks.LearnedBottom {
				p += m
			}
			return p
		},
		ReadingSize: func(c Config) float64 { return float64(c.States) * float64(c.Symbols) * float64(c.StackEmbedding) },
	},
}

// Kinds lists the names of the model kinds: the paper's, in its order,
// then the vector stack of the authors' later release.
var Kinds = kindNames()

func kindNames() []string {
	names := make([]string, len(kindTable))
	for i, k := range kindTable {
		names[i] = k.Name
	}
	return names
}

// AllKinds returns the table of model kinds in the paper's order (a copy).
func AllKinds() []Kind { return append([]Kind(nil), kindTable...) }

// LookupKind returns the kind named name, or an error listing the kinds.
func LookupKind(name string) (Kind, error) {
	for _, k := range kindTable {
		if k.Name == name {
			return k, nil
		}
	}
	return Kind{}, fmt.Errorf("unknown model %q (want one of %s)", name, strings.Join(Kinds, ", "))
}

// IsNondeterministic reports whether kind is one of the NS variants.
func IsNondeterministic(kind string) bool {
	k, err := LookupKind(kind)
	return err == nil && k.Family == NondeterministicStack
}
