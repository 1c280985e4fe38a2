package nsrnn

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nsrnn/nsrnn/stacks"
)

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
	// StackEmbedding is the size of the vectors of a Gref or JM stack, and
	// of the pushed vectors of a VRNS stack.
	StackEmbedding int `json:"stack_embedding,omitempty"`
	// BottomVector is the vector of a VRNS stack's initial bottom symbol:
	// learned (the default), zero or one.
	BottomVector stacks.BottomVector `json:"bottom_vector,omitempty"`
	// PushHiddenState makes JM push the hidden state instead of a learned
	// vector (then StackEmbedding must be 0 or equal Hidden).
	PushHiddenState bool `json:"push_hidden_state,omitempty"`
	// DepthLimit bounds the depth of a JM stack; 0 is unlimited.
	DepthLimit int `json:"depth_limit,omitempty"`
	// InitRange, when positive, initializes every parameter uniformly in
	// ±InitRange (the PTB setting uses 0.05). When 0, the CFL setting is
	// used: LSTM and NS action weights uniform in ±0.1, other affine
	// layers Xavier-uniform with zero bias. It must be finite and at most
	// MaxInitRange.
	InitRange float64 `json:"init_range,omitempty"`
}

// Validate reports an impossible configuration. The error is a
// *ConfigError listing every offending field as a *FieldError, each of
// which wraps the reason (ErrUnknownKind, ErrRequired, ErrOutOfRange,
// ErrNotApplicable or ErrTooLarge), so that a caller can tell them apart:
//
//	var fe *nsrnn.FieldError
//	if errors.As(err, &fe) && fe.Field == "Hidden" { … }
//	if errors.Is(err, nsrnn.ErrNotApplicable) { … }
func (c Config) Validate() error {
	var fields []*FieldError
	bad := func(field string, reason error, format string, args ...any) {
		fields = append(fields, &FieldError{Field: field, Reason: reason, msg: fmt.Sprintf(format, args...)})
	}
	kind, err := LookupKind(c.Kind)
	if err != nil {
		bad("Kind", ErrUnknownKind, "%v", err)
	}
	if c.InputVocab < 1 {
		bad("InputVocab", ErrOutOfRange, "input vocabulary size %d < 1", c.InputVocab)
	}
	if c.OutputVocab < 1 {
		bad("OutputVocab", ErrOutOfRange, "output vocabulary size %d < 1", c.OutputVocab)
	}
	if c.Embedding < 0 {
		bad("Embedding", ErrOutOfRange, "embedding size %d < 0", c.Embedding)
	}
	if c.Hidden < 1 {
		bad("Hidden", ErrOutOfRange, "hidden size %d < 1", c.Hidden)
	}
	if c.Layers < 0 {
		bad("Layers", ErrOutOfRange, "layers %d < 0", c.Layers)
	}
	if c.Layers > 1000 {
		bad("Layers", ErrOutOfRange, "layers %d > 1000", c.Layers)
	}
	if !(c.InitRange >= 0 && c.InitRange <= MaxInitRange) {
		bad("InitRange", ErrOutOfRange, "initialization range %g outside [0, %g]", c.InitRange, float64(MaxInitRange))
	}
	if c.DepthLimit < 0 {
		bad("DepthLimit", ErrOutOfRange, "depth limit %d < 0", c.DepthLimit)
	}
	if err != nil {
		// The other fields' checks depend on the kind.
		return &ConfigError{Fields: fields}
	}
	ns := kind.Family == NondeterministicStack
	if ns {
		if c.States < 1 {
			bad("States", ErrRequired, "model %s needs states ≥ 1 and symbols ≥ 1, got %d and %d", c.Kind, c.States, c.Symbols)
		} else if c.Symbols < 1 {
			bad("Symbols", ErrRequired, "model %s needs states ≥ 1 and symbols ≥ 1, got %d and %d", c.Kind, c.States, c.Symbols)
		}
		if c.Window < 0 {
			bad("Window", ErrOutOfRange, "window %d < 0", c.Window)
		}
	} else {
		if c.States != 0 || c.Symbols != 0 {
			field := "States"
			if c.States == 0 {
				field = "Symbols"
			}
			bad(field, ErrNotApplicable, "states and symbols apply only to the ns models, not %s", c.Kind)
		}
		if c.Window != 0 {
			bad("Window", ErrNotApplicable, "a window applies only to the ns models, not %s", c.Kind)
		}
		if c.Bottom != stacks.Original {
			bad("Bottom", ErrNotApplicable, "the bottom behaviour applies only to the ns models, not %s", c.Kind)
		}
	}
	switch {
	case kind.Name == VRNS:
		if c.StackEmbedding < 1 {
			bad("StackEmbedding", ErrRequired, "model vrns needs a pushed-vector size (stack embedding) ≥ 1, got %d", c.StackEmbedding)
		}
		if c.PushHiddenState {
			bad("PushHiddenState", ErrNotApplicable, "push-hidden-state applies only to jm, not vrns")
		}
	case kind.Family == VectorStack:
		if c.PushHiddenState {
			if c.Kind != JM {
				bad("PushHiddenState", ErrNotApplicable, "push-hidden-state applies only to jm")
			} else if c.StackEmbedding != 0 && c.StackEmbedding != c.Hidden {
				bad("StackEmbedding", ErrOutOfRange, "jm pushing the hidden state has stack embedding %d, must equal the hidden size %d", c.StackEmbedding, c.Hidden)
			}
		} else if c.StackEmbedding < 1 {
			bad("StackEmbedding", ErrRequired, "model %s needs a stack embedding size ≥ 1, got %d", c.Kind, c.StackEmbedding)
		}
	default:
		if c.StackEmbedding != 0 {
			bad("StackEmbedding", ErrNotApplicable, "a stack embedding size applies only to gref, jm and vrns, not %s", c.Kind)
		}
		if c.PushHiddenState {
			bad("PushHiddenState", ErrNotApplicable, "push-hidden-state applies only to jm, not %s", c.Kind)
		}
	}
	if c.BottomVector != stacks.LearnedBottom && c.Kind != VRNS {
		bad("BottomVector", ErrNotApplicable, "a bottom vector applies only to vrns, not %s", c.Kind)
	}
	if c.DepthLimit != 0 && c.Kind != JM {
		bad("DepthLimit", ErrNotApplicable, "a depth limit applies only to jm, not %s", c.Kind)
	}
	if len(fields) == 0 {
		if n := c.countParams(kind); n > MaxParams {
			bad("", ErrTooLarge, "%s would have %.3g parameters (%.3g GiB), more than the limit of %d (%d GiB); reduce %s",
				c.Kind, n, n*8/(1<<30), MaxParams, MaxParams*8>>30, c.sizeFields(kind))
		}
	}
	if len(fields) > 0 {
		return &ConfigError{Fields: fields}
	}
	return nil
}

// Reasons for which Validate refuses a field; a *FieldError wraps one.
var (
	// ErrUnknownKind: Config.Kind names no kind of AllKinds.
	ErrUnknownKind = errors.New("unknown model kind")
	// ErrRequired: the kind needs the field and it is missing (zero).
	ErrRequired = errors.New("required by the model kind")
	// ErrOutOfRange: the field's value is outside its valid range.
	ErrOutOfRange = errors.New("out of range")
	// ErrNotApplicable: the field is set but the kind does not use it.
	ErrNotApplicable = errors.New("does not apply to the model kind")
)

// FieldError is one field of a Config that Validate refused.
type FieldError struct {
	// Field is the Config field's Go name ("Hidden", "States", …); it
	// is empty for a model over the parameter limit (Reason
	// ErrTooLarge), where no one field is at fault.
	Field string
	// Reason is ErrUnknownKind, ErrRequired, ErrOutOfRange,
	// ErrNotApplicable or ErrTooLarge.
	Reason error
	msg    string
}

// Error describes the field and its value.
func (e *FieldError) Error() string { return e.msg }

// Unwrap returns the reason.
func (e *FieldError) Unwrap() error { return e.Reason }

// ConfigError is the error of Validate: every field it refused.
type ConfigError struct {
	Fields []*FieldError
}

// Error lists the fields' errors after "nsrnn: invalid model
// configuration: ".
func (e *ConfigError) Error() string {
	msgs := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		msgs[i] = f.msg
	}
	return "nsrnn: invalid model configuration: " + strings.Join(msgs, "; ")
}

// Unwrap returns the fields' errors, for errors.Is and errors.As.
func (e *ConfigError) Unwrap() []error {
	errs := make([]error, len(e.Fields))
	for i, f := range e.Fields {
		errs[i] = f
	}
	return errs
}

// MaxInitRange is the largest Config.InitRange: weights drawn from a
// wider range saturate every gate of the LSTM (and from ±1e308 on, their
// draws overflow to infinity), so that no model trains from them.
const MaxInitRange = 100

// MaxParams is the largest number of parameters a model may have (2 GiB
// of float64 values). Validate refuses larger configurations before
// anything is allocated.
const MaxParams = 1 << 28

// countParams counts the parameters in float64, so that absurd sizes
// cannot overflow.
func (c Config) countParams(kind Kind) float64 {
	in, n := float64(c.inputSize()), 0.0
	if kind.Family != NoStack {
		in += kind.ReadingSize(c)
		n = kind.StackParams(c)
	}
	return c.baseParams(in) + n
}

// baseParams counts the embedding, LSTM and output parameters for a first
// layer reading in inputs.
func (c Config) baseParams(in float64) float64 {
	H := float64(c.Hidden)
	n := float64(c.Embedding) * float64(c.InputVocab)
	for l := 0; l < c.layers(); l++ {
		n += 4*H*(in+H) + 8*H
		in = H
	}
	return n + float64(c.OutputVocab)*(H+1)
}

// sizeFields names the fields that set a configuration's size.
func (c Config) sizeFields(kind Kind) string {
	f := "hidden, layers, input_vocab, output_vocab, embedding"
	switch kind.Family {
	case NondeterministicStack:
		f += ", states, symbols"
	case VectorStack:
		f += ", stack_embedding"
	}
	return f
}

// vrnsConfig is the stack configuration of a VRNS model.
func (c Config) vrnsConfig() stacks.VRNSConfig {
	return stacks.VRNSConfig{States: c.States, Symbols: c.Symbols, Vector: c.StackEmbedding,
		Bottom: c.Bottom, Window: c.Window, BottomVector: c.BottomVector}
}

// jmSize is the size of the vectors of a JM stack.
func (c Config) jmSize() int {
	if c.PushHiddenState {
		return c.Hidden
	}
	return c.StackEmbedding
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
		StateReading: c.Kind == NSS || c.Kind == RNS || c.Kind == VRNS,
		Bottom:       c.Bottom, Window: c.Window,
	}
}
