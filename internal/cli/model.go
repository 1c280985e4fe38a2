package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/stacks"
)

// ModelFlags are the command-line flags that describe a model.
type ModelFlags struct {
	Kind            string
	Hidden          int
	Layers          int
	States, Symbols int
	StackEmbedding  int
	PushHiddenState bool
	DepthLimit      int
	Window          int
	Bottom          string
	BottomVector    string
}

// KindsUsing returns the names of the model kinds whose Kind.Flags list
// the flag (without its dashes), in the order of nsrnn.AllKinds.
func KindsUsing(flag string) []string {
	var names []string
	for _, k := range nsrnn.AllKinds() {
		if slices.Contains(k.Flags, flag) {
			names = append(names, k.Name)
		}
	}
	return names
}

// KindUses reports whether the model kind named kind has the flag (without
// its dashes) among its Kind.Flags.
func KindUses(kind, flag string) bool {
	k, err := nsrnn.LookupKind(kind)
	return err == nil && slices.Contains(k.Flags, flag)
}

// AddModelFlags registers the model flags on fs with the given default
// hidden size. The help of the kind-specific flags names the kinds they
// apply to, from nsrnn.AllKinds.
func AddModelFlags(fs *pflag.FlagSet, hidden int) *ModelFlags {
	f := &ModelFlags{}
	kindsOf := func(flag string) string { return strings.Join(KindsUsing(flag), ", ") }
	fs.StringVar(&f.Kind, "model", "", "model: "+strings.Join(nsrnn.Kinds, ", ")+" (required)")
	fs.IntVar(&f.Hidden, "hidden", hidden, "LSTM hidden units")
	fs.IntVar(&f.Layers, "layers", 1, "LSTM layers")
	fs.IntVar(&f.States, "states", 0, "|Q|, PDA states of "+kindsOf("states"))
	fs.IntVar(&f.Symbols, "symbols", 0, "|Γ|, stack symbol types of "+kindsOf("symbols"))
	fs.IntVar(&f.StackEmbedding, "stack-embedding", 0, "size of the stack vectors of "+kindsOf("stack-embedding"))
	fs.BoolVar(&f.PushHiddenState, "push-hidden-state", false, kindsOf("push-hidden-state")+" pushes the hidden state instead of a learned vector")
	fs.IntVar(&f.DepthLimit, "depth-limit", 0, "stack depth limit of "+kindsOf("depth-limit")+" (default 0: unlimited)")
	fs.IntVar(&f.Window, "window", 0, "D, the window of the memory-limited "+kindsOf("window")+" (default 0: unlimited)")
	fs.StringVar(&f.Bottom, "bottom", "original", "bottom-symbol behaviour of "+kindsOf("bottom")+": original (ICLR 2022) or fixed (ICLR 2023)")
	fs.StringVar(&f.BottomVector, "bottom-vector", "learned", "vector of the initial bottom symbol of "+kindsOf("bottom-vector")+": learned, zero or one")
	return f
}

// set reports, for each kind-specific model flag, whether f gives it a
// value other than its default.
func (f *ModelFlags) set() map[string]bool {
	return map[string]bool{
		"states": f.States != 0, "symbols": f.Symbols != 0, "stack-embedding": f.StackEmbedding != 0,
		"push-hidden-state": f.PushHiddenState, "depth-limit": f.DepthLimit != 0, "window": f.Window != 0,
		"bottom": f.Bottom != "" && f.Bottom != "original", "bottom-vector": f.BottomVector != "" && f.BottomVector != "learned",
	}
}

// Config turns the flags into a validated model configuration. A
// kind-specific flag (one of some kinds' nsrnn.Kind.Flags) given a value
// for a kind that does not use it is an error naming the flag and the
// kinds it applies to; other errors name the flag at fault where they
// can.
func (f *ModelFlags) Config(inputVocab, outputVocab, embedding int, initRange float64) (nsrnn.Config, error) {
	if f.Kind == "" {
		return nsrnn.Config{}, fmt.Errorf("--model is required (one of %s)", strings.Join(nsrnn.Kinds, ", "))
	}
	kind, err := nsrnn.LookupKind(f.Kind)
	if err != nil {
		return nsrnn.Config{}, fmt.Errorf("--model %q: unknown model (want one of %s)", f.Kind, strings.Join(nsrnn.Kinds, ", "))
	}
	var bottom stacks.Bottom
	switch f.Bottom {
	case "", "original":
	case "fixed":
		bottom = stacks.Fixed
	default:
		return nsrnn.Config{}, fmt.Errorf("--bottom %q: want original or fixed", f.Bottom)
	}
	var bottomVector stacks.BottomVector
	switch f.BottomVector {
	case "", "learned":
	case "zero":
		bottomVector = stacks.ZeroBottom
	case "one":
		bottomVector = stacks.OneBottom
	default:
		return nsrnn.Config{}, fmt.Errorf("--bottom-vector %q: want learned, zero or one", f.BottomVector)
	}
	set := f.set()
	var names []string
	for name := range set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if set[name] && !slices.Contains(kind.Flags, name) {
			return nsrnn.Config{}, fmt.Errorf("--%s applies only to %s, not --model %s", name, strings.Join(KindsUsing(name), ", "), f.Kind)
		}
	}
	c := nsrnn.Config{
		Kind: f.Kind, InputVocab: inputVocab, OutputVocab: outputVocab, Embedding: embedding,
		Hidden: f.Hidden, Layers: f.Layers, StackEmbedding: f.StackEmbedding,
		PushHiddenState: f.PushHiddenState, DepthLimit: f.DepthLimit, InitRange: initRange,
		States: f.States, Symbols: f.Symbols, Window: f.Window, Bottom: bottom, BottomVector: bottomVector,
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}
