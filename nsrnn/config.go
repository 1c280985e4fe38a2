package nsrnn

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nsrnn/nsrnn/stacks"
)

// Config describes a model. The zero values of optional fields select the
// paper's CFL setting.
type Config struct {
	// Kind names a kind of model: one of KindNames (LSTM, Gref, JM, NS,
	// NSS, NSU, RNS, VRNS and any kind registered with RegisterKind).
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
	// Options are the hyperparameters of the kinds registered outside
	// this package that declare their own (Hyperparameter.Option).
	Options Options `json:"options,omitempty"`
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
	if err != nil {
		// The other fields' checks depend on the kind.
		return &ConfigError{Fields: fields}
	}
	fields = append(fields, c.checkStackFields(kind)...)
	if len(fields) == 0 && kind.Stack != nil {
		// A kind registered from outside declares these; a count that
		// is not a whole number ≥ 0 would pass the limits below.
		for _, d := range []struct {
			what string
			n    float64
		}{{"StackParams", kind.StackParams(c)}, {"ReadingSize", kind.ReadingSize(c)}} {
			if !(d.n >= 0) || math.IsInf(d.n, 0) || d.n != math.Trunc(d.n) {
				return fmt.Errorf("nsrnn: model kind %s: its Kind.%s gives %g for this configuration; want a whole number ≥ 0", c.Kind, d.what, d.n)
			}
		}
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
// configuration: ", each message once: fields refused for one reason
// (States and Symbols of a nondeterministic stack, or fields that do not
// apply to the kind) share their message.
func (e *ConfigError) Error() string {
	var msgs []string
	for _, f := range e.Fields {
		if !slices.Contains(msgs, f.msg) {
			msgs = append(msgs, f.msg)
		}
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

// MaxTrainingBytes bounds the memory that training keeps for a model's
// parameters: trainingCopies values per parameter (the parameters, their
// gradients, an optimizer's state of up to two values, the best
// parameters so far, and a checkpoint's encoding of the model and of the
// best model). Fit and CheckTraining refuse a model beyond it: about
// 150 million parameters.
const MaxTrainingBytes = 8 << 30

// trainingCopies is the number of float64 values per parameter that
// training keeps (see MaxTrainingBytes).
const trainingCopies = 7

// trainingLimit is MaxTrainingBytes; tests lower it.
var trainingLimit float64 = MaxTrainingBytes

// CheckTraining returns Validate's error for an invalid configuration,
// and an error wrapping ErrTooLarge if training a model of c would keep
// more than MaxTrainingBytes for its parameters, so that a program can
// refuse it before it starts.
func (c Config) CheckTraining() error {
	if err := c.Validate(); err != nil {
		return err
	}
	kind, err := LookupKind(c.Kind)
	if err != nil {
		return err
	}
	n := c.countParams(kind)
	if b := 8 * n * trainingCopies; b > trainingLimit {
		return fmt.Errorf("%w: training %s with %.3g parameters would keep about %.3g GiB for them (gradients, optimizer state, best model, checkpoint), more than the limit of %.3g GiB (MaxTrainingBytes); reduce %s",
			ErrTooLarge, c.Kind, n, b/(1<<30), trainingLimit/(1<<30), c.sizeFields(kind))
	}
	return nil
}

// countParams counts the parameters in float64, so that absurd sizes
// cannot overflow.
func (c Config) countParams(kind Kind) float64 {
	in, n := float64(c.inputSize()), 0.0
	if kind.Stack != nil {
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

// sizeFields names the fields that set a configuration's size: those of
// every model and the kind's hyperparameters marked Size.
func (c Config) sizeFields(kind Kind) string {
	f := "hidden, layers, input_vocab, output_vocab, embedding"
	for _, h := range kind.Hyperparameters {
		if h.Size {
			f += ", " + jsonName(h.Field)
		}
	}
	return f
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

// checkStackFields checks the kind-specific fields of c (StackFields) by
// the kind's declaration: a field the kind does not declare must be zero
// (ErrNotApplicable), and a declared one passes its Check (or, without
// one, is nonzero if Required). Fields are checked in Config's order;
// undeclared fields set together that the same kinds declare share one
// message ("states and symbols apply only to …").
// intField returns the value of an integer field or option of c (its
// name as StackFields gives it), 0 for a field of another type.
func (c Config) intField(f string) int {
	if name, ok := optionOf(f); ok {
		return c.Options.Get(name)
	}
	if p, ok := c.FieldValue(f).(*int); ok {
		return *p
	}
	return 0
}

func (c Config) checkStackFields(kind Kind) []*FieldError {
	var fields []*FieldError
	known := StackFields()
	if err := c.Options.check(); err != nil {
		return []*FieldError{{Field: "Options", Reason: ErrOutOfRange, msg: err.Error()}}
	}
	for _, name := range c.Options.Names() {
		if !slices.Contains(known, optionPrefix+name) {
			fields = append(fields, &FieldError{Field: optionPrefix + name, Reason: ErrNotApplicable,
				msg: fmt.Sprintf("option %s is declared by no registered model kind", name)})
		}
	}
	notApplicable := map[string][]string{} // the kinds using a field → names of those set
	var groups []string
	for _, f := range known {
		h, ok := kind.hyperparameter(f)
		if !ok {
			if c.FieldSet(f) {
				using := strings.Join(KindsUsing(f), ", ")
				if _, ok := notApplicable[using]; !ok {
					groups = append(groups, using)
				}
				notApplicable[using] = append(notApplicable[using], f)
			}
			continue
		}
		var err error
		switch {
		case h.Check != nil:
			err = h.Check(c)
		case c.intField(f) < 0:
			// A count no kind can have; refused here, before a kind's
			// StackParams is asked about it.
			err = Refuse(ErrOutOfRange, "%s %d < 0", fieldName(f), c.intField(f))
		case h.Required && !c.FieldSet(f):
			err = Refuse(ErrRequired, "model %s needs %s", c.Kind, h.Name)
		}
		if err == nil {
			continue
		}
		fe := &FieldError{Reason: ErrOutOfRange, msg: err.Error()}
		var de *FieldError
		if errors.As(err, &de) {
			*fe = *de
		}
		fe.Field = f
		fields = append(fields, fe)
	}
	for _, using := range groups {
		set := notApplicable[using]
		names := make([]string, len(set))
		for i, f := range set {
			names[i] = fieldName(f)
		}
		verb := "applies"
		if len(names) > 1 || plural(names[0]) {
			verb = "apply"
		}
		if using == "" {
			using = "no model"
		}
		msg := fmt.Sprintf("%s %s only to %s, not %s", joinAnd(names), verb, using, c.Kind)
		for _, f := range set {
			fields = append(fields, &FieldError{Field: f, Reason: ErrNotApplicable, msg: msg})
		}
	}
	slices.SortStableFunc(fields, func(a, b *FieldError) int {
		return slices.Index(StackFields(), a.Field) - slices.Index(StackFields(), b.Field)
	})
	return fields
}

// fieldName is what messages call a Config field: the Name given by the
// first kind that declares it, or its flag.
func fieldName(field string) string {
	for _, k := range AllKinds() {
		if h, ok := k.hyperparameter(field); ok && h.Name != "" {
			return h.Name
		}
	}
	return FieldFlag(field)
}

// plural reports whether a noun phrase is plural: it has no article and
// ends in s ("states", not "a window" or "push-hidden-state").
func plural(noun string) bool {
	return strings.HasSuffix(noun, "s") && !strings.HasPrefix(noun, "a ") && !strings.HasPrefix(noun, "an ") && !strings.HasPrefix(noun, "the ")
}

// joinAnd joins words as "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// partsBudget is the memory that the parts of a batch running at once
// (one per core) may touch in the nondeterministic stack's dynamic program
// before PartsFor splits the batch into more, smaller parts: about three
// quarters of the 32 MB last-level cache of the machines it was measured
// on.
const partsBudget = 24 << 20

// PartsFor returns a part count for Model.Workers when batches of up to
// batch sequences of up to n symbols are run on cores cores: cores (at
// most batch), or, for a nondeterministic stack whose dynamic programs
// would touch more than the caches hold when one part runs on each core,
// a multiple of cores (at most batch) whose parts stay within them. Each
// sequence's program streams its whole triangle of γ blocks and their
// adjoints (about 4 MB at |Q| = 3, |Γ| = 3 and n = 80, 1.8 MB at |Q| = 2)
// at every step, so a part whose triangles outgrow the cache runs at the
// speed of memory: on two cores of an AMD EPYC machine, RNS with |Q| = 3
// trains batches of ten strings of lengths 40–80 about 1.3× faster in the
// four parts PartsFor gives than in two, while at |Q| = 2 it gives two,
// which more parts do not beat. The result is a count for this machine's
// speed only: parts of different counts give the same results to
// rounding.
func (c Config) PartsFor(batch, n, cores int) int {
	cores, batch = max(cores, 1), max(batch, 1)
	parts := min(cores, batch)
	kind, err := LookupKind(c.Kind)
	if err != nil || kind.NSConfig == nil || n < 2 {
		return parts
	}
	ns := kind.NSConfig(c)
	m := float64(ns.States * ns.Symbols)
	d := float64(n)
	if ns.Window > 0 && ns.Window < n {
		d = float64(ns.Window)
	}
	// The triangle of blocks (a band of width d under a window), each
	// m×m, with its adjoints, in float64.
	perSequence := (float64(n)*d - d*d/2) * 2 * m * m * 8
	rounds := math.Ceil(perSequence * float64(batch) / partsBudget)
	return int(min(float64(batch), float64(parts)*max(rounds, 1)))
}
