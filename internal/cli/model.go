package cli

import (
	"fmt"
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
}

// AddModelFlags registers the model flags on fs with the given default
// hidden size.
func AddModelFlags(fs *pflag.FlagSet, hidden int) *ModelFlags {
	f := &ModelFlags{}
	fs.StringVar(&f.Kind, "model", "", "model: "+strings.Join(nsrnn.Kinds, ", ")+" (required)")
	fs.IntVar(&f.Hidden, "hidden", hidden, "LSTM hidden units")
	fs.IntVar(&f.Layers, "layers", 1, "LSTM layers")
	fs.IntVar(&f.States, "states", 0, "|Q|, PDA states of the ns models")
	fs.IntVar(&f.Symbols, "symbols", 0, "|Γ|, stack symbol types of the ns models")
	fs.IntVar(&f.StackEmbedding, "stack-embedding", 0, "size of the stack vectors of gref and jm")
	fs.BoolVar(&f.PushHiddenState, "push-hidden-state", false, "jm pushes the hidden state instead of a learned vector")
	fs.IntVar(&f.DepthLimit, "depth-limit", 0, "jm stack depth limit (0: unlimited)")
	fs.IntVar(&f.Window, "window", 0, "D of the memory-limited ns models (0: unlimited)")
	fs.StringVar(&f.Bottom, "bottom", "original", "ns bottom-symbol behaviour: original (ICLR 2022) or fixed (ICLR 2023)")
	return f
}

// Config turns the flags into a validated model configuration. The error
// names the flag at fault where it can.
func (f *ModelFlags) Config(inputVocab, outputVocab, embedding int, initRange float64) (nsrnn.Config, error) {
	if f.Kind == "" {
		return nsrnn.Config{}, fmt.Errorf("--model is required (one of %s)", strings.Join(nsrnn.Kinds, ", "))
	}
	var bottom stacks.Bottom
	switch f.Bottom {
	case "original":
	case "fixed":
		bottom = stacks.Fixed
	default:
		return nsrnn.Config{}, fmt.Errorf("--bottom %q: want original or fixed", f.Bottom)
	}
	ns := nsrnn.IsNondeterministic(f.Kind)
	c := nsrnn.Config{
		Kind: f.Kind, InputVocab: inputVocab, OutputVocab: outputVocab, Embedding: embedding,
		Hidden: f.Hidden, Layers: f.Layers, StackEmbedding: f.StackEmbedding,
		PushHiddenState: f.PushHiddenState, DepthLimit: f.DepthLimit, InitRange: initRange,
	}
	if ns {
		c.States, c.Symbols, c.Window, c.Bottom = f.States, f.Symbols, f.Window, bottom
	} else {
		switch {
		case f.States != 0 || f.Symbols != 0:
			return c, fmt.Errorf("--states and --symbols apply only to the ns models, not --model %s", f.Kind)
		case f.Window != 0:
			return c, fmt.Errorf("--window applies only to the ns models, not --model %s", f.Kind)
		case bottom != stacks.Original:
			return c, fmt.Errorf("--bottom applies only to the ns models, not --model %s", f.Kind)
		}
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}
