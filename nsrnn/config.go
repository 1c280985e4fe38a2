package nsrnn

import (
	"fmt"
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
)

// Kinds lists the model kinds in the paper's order.
var Kinds = []string{LSTM, Gref, JM, NS, NSS, NSU, RNS}

// IsNondeterministic reports whether kind is one of the NS variants.
func IsNondeterministic(kind string) bool {
	switch kind {
	case NS, NSS, NSU, RNS:
		return true
	}
	return false
}

// Config describes a model. The zero values of optional fields select the
// paper's CFL setting.
type Config struct {
	// Kind is one of Kinds.
	Kind string `json:"kind"`
	// InputVocab is the number of input symbols; OutputVocab the number
	// of predicted symbols, whose last one is EOS.
	InputVocab  int `json:"input_vocab"`
	OutputVocab int `json:"output_vocab"`
	// Embedding is the size of a learned input embedding; 0 feeds one-hot
	// vectors (the CFL setting).
	Embedding int `json:"embedding,omitempty"`
	// Hidden is the LSTM's hidden size; Layers its number of layers
	// (default 1).
	Hidden int `json:"hidden"`
	Layers int `json:"layers,omitempty"`
	// States and Symbols are |Q| and |Γ| of a nondeterministic stack.
	States  int `json:"states,omitempty"`
	Symbols int `json:"symbols,omitempty"`
	// Window is D of the memory-limited nondeterministic stack; 0 is
	// unlimited.
	Window int `json:"window,omitempty"`
	// Bottom is the nondeterministic stack's bottom-symbol behaviour.
	Bottom stacks.Bottom `json:"bottom,omitempty"`
	// StackEmbedding is the size of the vectors of a Gref or JM stack.
	StackEmbedding int `json:"stack_embedding,omitempty"`
	// PushHiddenState makes JM push the hidden state instead of a learned
	// vector (then StackEmbedding must be 0 or equal Hidden).
	PushHiddenState bool `json:"push_hidden_state,omitempty"`
	// DepthLimit bounds the depth of a JM stack; 0 is unlimited.
	DepthLimit int `json:"depth_limit,omitempty"`
	// InitRange, when positive, initializes every parameter uniformly in
	// ±InitRange (the PTB setting uses 0.05). When 0, the CFL setting is
	// used: LSTM and NS action weights uniform in ±0.1, other affine
	// layers Xavier-uniform with zero bias.
	InitRange float64 `json:"init_range,omitempty"`
}

// Validate reports an impossible configuration with an error that names the
// offending field.
func (c Config) Validate() error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	known := false
	for _, k := range Kinds {
		known = known || c.Kind == k
	}
	if !known {
		bad("unknown model %q (want one of %s)", c.Kind, strings.Join(Kinds, ", "))
	}
	if c.InputVocab < 1 {
		bad("input vocabulary size %d < 1", c.InputVocab)
	}
	if c.OutputVocab < 1 {
		bad("output vocabulary size %d < 1", c.OutputVocab)
	}
	if c.Embedding < 0 {
		bad("embedding size %d < 0", c.Embedding)
	}
	if c.Hidden < 1 {
		bad("hidden size %d < 1", c.Hidden)
	}
	if c.Layers < 0 {
		bad("layers %d < 0", c.Layers)
	}
	if c.InitRange < 0 {
		bad("initialization range %g < 0", c.InitRange)
	}
	ns := IsNondeterministic(c.Kind)
	if ns {
		if c.States < 1 || c.Symbols < 1 {
			bad("model %s needs states ≥ 1 and symbols ≥ 1, got %d and %d", c.Kind, c.States, c.Symbols)
		}
		if c.Window < 0 {
			bad("window %d < 0", c.Window)
		}
	} else {
		if c.States != 0 || c.Symbols != 0 {
			bad("states and symbols apply only to the ns models, not %s", c.Kind)
		}
		if c.Window != 0 {
			bad("a window applies only to the ns models, not %s", c.Kind)
		}
		if c.Bottom != stacks.Original {
			bad("the bottom behaviour applies only to the ns models, not %s", c.Kind)
		}
	}
	switch c.Kind {
	case Gref, JM:
		if c.PushHiddenState {
			if c.Kind != JM {
				bad("push-hidden-state applies only to jm")
			} else if c.StackEmbedding != 0 && c.StackEmbedding != c.Hidden {
				bad("jm pushing the hidden state has stack embedding %d, must equal the hidden size %d", c.StackEmbedding, c.Hidden)
			}
		} else if c.StackEmbedding < 1 {
			bad("model %s needs a stack embedding size ≥ 1, got %d", c.Kind, c.StackEmbedding)
		}
	default:
		if c.StackEmbedding != 0 {
			bad("a stack embedding size applies only to gref and jm, not %s", c.Kind)
		}
		if c.PushHiddenState {
			bad("push-hidden-state applies only to jm, not %s", c.Kind)
		}
	}
	if c.DepthLimit != 0 && c.Kind != JM {
		bad("a depth limit applies only to jm, not %s", c.Kind)
	}
	if c.DepthLimit < 0 {
		bad("depth limit %d < 0", c.DepthLimit)
	}
	if len(errs) > 0 {
		return fmt.Errorf("nsrnn: invalid model configuration: %s", strings.Join(errs, "; "))
	}
	return nil
}

func (c Config) layers() int {
	if c.Layers == 0 {
		return 1
	}
	return c.Layers
}

func (c Config) inputSize() int {
	if c.Embedding > 0 {
		return c.Embedding
	}
	return c.InputVocab
}

// nsConfig is the stack configuration of an NS-variant model.
func (c Config) nsConfig() stacks.NSConfig {
	return stacks.NSConfig{
		States: c.States, Symbols: c.Symbols,
		Normalized:   c.Kind == NS || c.Kind == NSS,
		StateReading: c.Kind == NSS || c.Kind == RNS,
		Bottom:       c.Bottom, Window: c.Window,
	}
}
