package cli

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// ModelFlags are the command-line flags that describe a model: --model,
// --hidden, --layers, and one flag for each Config field that a
// registered kind declares as a hyperparameter (nsrnn.Kind), named by
// nsrnn.FieldFlag ("--states", "--stack-embedding").
type ModelFlags struct {
	// Model holds the flags' values: Kind (--model), Hidden, Layers and
	// the kinds' hyperparameters.
	Model nsrnn.Config

	fs *pflag.FlagSet // the flags' set, for which were given (CheckGiven)
}

// flagField returns the Config field whose flag is flag ("" for none).
func flagField(flag string) string {
	for _, f := range nsrnn.StackFields() {
		if nsrnn.FieldFlag(f) == flag {
			return f
		}
	}
	return ""
}

// KindsUsing returns the names of the model kinds that declare the field
// of the flag (without its dashes), in the order of nsrnn.AllKinds.
func KindsUsing(flag string) []string {
	if f := flagField(flag); f != "" {
		return nsrnn.KindsUsing(f)
	}
	return nil
}

// KindUses reports whether the model kind named kind declares the field
// of the flag (without its dashes).
func KindUses(kind, flag string) bool {
	k, err := nsrnn.LookupKind(kind)
	return err == nil && k.Uses(flagField(flag))
}

// StackFlags returns the flags (without their dashes) of the fields that
// the registered kinds declare, in the order of Config.
func StackFlags() []string {
	var flags []string
	for _, f := range nsrnn.StackFields() {
		if len(nsrnn.KindsUsing(f)) > 0 {
			flags = append(flags, nsrnn.FieldFlag(f))
		}
	}
	return flags
}

// fieldDoc is the help of a field's flag: the Doc of the first kind that
// declares it, %s standing for the kinds that use it.
func fieldDoc(field string) string {
	kinds := strings.Join(nsrnn.KindsUsing(field), ", ")
	for _, k := range nsrnn.AllKinds() {
		for _, h := range k.Hyperparameters {
			if h.Field == field && h.Doc != "" {
				return strings.ReplaceAll(h.Doc, "%s", kinds)
			}
		}
	}
	return fmt.Sprintf("%s of %s", field, kinds)
}

// AddModelFlags registers the model flags on fs with the given default
// hidden size. The kind-specific flags, their help and the kinds they
// apply to come from the kinds' declarations (nsrnn.AllKinds).
func AddModelFlags(fs *pflag.FlagSet, hidden int) *ModelFlags {
	f := &ModelFlags{fs: fs}
	fs.StringVar(&f.Model.Kind, "model", "", "model: "+strings.Join(nsrnn.KindNames(), ", ")+" (required)")
	fs.IntVar(&f.Model.Hidden, "hidden", hidden, "LSTM hidden units")
	fs.IntVar(&f.Model.Layers, "layers", 1, "LSTM layers")
	for _, flag := range StackFlags() {
		field := flagField(flag)
		usage := fieldDoc(field)
		switch p := f.Model.FieldValue(field).(type) {
		case *int:
			fs.IntVar(p, flag, *p, usage)
		case *bool:
			fs.BoolVar(p, flag, *p, usage)
		case *float64:
			fs.Float64Var(p, flag, *p, usage)
		case pflag.Value:
			fs.Var(p, flag, usage)
		default:
			panic(fmt.Sprintf("cli: Config.%s of type %T has no flag type", field, p))
		}
	}
	return f
}

// CheckGiven refuses --layers 0, and 0 given to the flag of a size
// field of the kind that --model names (--states, --symbols,
// --stack-embedding) where the kind cannot have 0 there: in a
// configuration 0 means "not given", which a program fills with its
// default (one layer; a task's |Q| and |Γ|; a stack embedding), so a 0
// typed on the command line would be replaced silently. A 0 the kind
// accepts (JM's stack embedding when it pushes the hidden state) passes.
// Programs that fill such defaults call it first; Config calls it too.
func (f *ModelFlags) CheckGiven() error {
	if f.fs == nil {
		return nil
	}
	zero := func(flag string) bool { return f.Given(flag) && f.fs.Lookup(flag).Value.String() == "0" }
	if zero("layers") {
		return errors.New("--layers 0 must be at least 1")
	}
	k, err := nsrnn.LookupKind(f.Model.Kind)
	if err != nil {
		return nil // Config names the unknown kind
	}
	for _, h := range k.Hyperparameters {
		if h.Field == "" || !h.Size || !zero(h.Flag()) {
			continue
		}
		if h.Required || h.Check != nil && h.Check(f.Model) != nil {
			return fmt.Errorf("--%s 0 must be at least 1", h.Flag())
		}
	}
	return nil
}

// Given reports whether the flag (without its dashes) was given on the
// command line.
func (f *ModelFlags) Given(flag string) bool {
	if f.fs == nil {
		return false
	}
	fl := f.fs.Lookup(flag)
	return fl != nil && fl.Changed
}

// Config turns the flags into a validated model configuration. A
// kind-specific flag given a value (other than its default) for a kind
// that does not declare its field is an error naming the flag and the
// kinds it applies to; other errors name the flag at fault where they
// can.
func (f *ModelFlags) Config(inputVocab, outputVocab, embedding int, initRange float64) (nsrnn.Config, error) {
	if f.Model.Kind == "" {
		return nsrnn.Config{}, fmt.Errorf("--model is required (one of %s)", strings.Join(nsrnn.KindNames(), ", "))
	}
	kind, err := nsrnn.LookupKind(f.Model.Kind)
	if err != nil {
		return nsrnn.Config{}, fmt.Errorf("--model %q: unknown model (want one of %s)", f.Model.Kind, strings.Join(nsrnn.KindNames(), ", "))
	}
	if err := f.CheckGiven(); err != nil {
		return nsrnn.Config{}, err
	}
	c := f.Model
	flags := StackFlags()
	slices.Sort(flags)
	for _, flag := range flags {
		field := flagField(flag)
		if !kind.Uses(field) && c.FieldSet(field) {
			return nsrnn.Config{}, fmt.Errorf("--%s applies only to %s, not --model %s", flag, strings.Join(KindsUsing(flag), ", "), c.Kind)
		}
	}
	c.InputVocab, c.OutputVocab, c.Embedding, c.InitRange = inputVocab, outputVocab, embedding, initRange
	if err := c.Validate(); err != nil {
		return c, flagErrors(err)
	}
	return c, nil
}

// flagErrors rewrites a *nsrnn.ConfigError so that each field's error
// names the flag that sets the field (--hidden, --states, …), where one
// of AddModelFlags does: "--hidden: hidden size -1 < 1". Other errors,
// and the errors of fields that no flag sets (a vocabulary, or the
// embedding a program derives from --hidden), are as they were; the
// result wraps the *nsrnn.ConfigError.
func flagErrors(err error) error {
	ce, ok := errors.AsType[*nsrnn.ConfigError](err)
	if !ok {
		return err
	}
	flags := append([]string{"hidden", "layers"}, StackFlags()...)
	msgs := make([]string, len(ce.Fields))
	named := false
	for i, fe := range ce.Fields {
		msgs[i] = fe.Error()
		if flag := nsrnn.FieldFlag(fe.Field); fe.Field != "" && slices.Contains(flags, flag) {
			msgs[i] = "--" + flag + ": " + msgs[i]
			named = true
		}
	}
	if !named {
		return err
	}
	return &flagError{msg: "invalid model: " + strings.Join(msgs, "; "), err: ce}
}

// flagError is a configuration error whose message names flags; it
// unwraps to the *nsrnn.ConfigError, and through it to the field errors.
type flagError struct {
	msg string
	err *nsrnn.ConfigError
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// ModelFlagValues returns the values of the model flags (without their
// dashes) that give c: --model, --hidden, --layers and the flag of every
// field its kind declares, formatted as the flags parse them, for a
// program that resumes a run from its saved configuration. It panics on
// an unknown kind, a programmer error.
func ModelFlagValues(c nsrnn.Config) map[string]string {
	kind, err := nsrnn.LookupKind(c.Kind)
	if err != nil {
		panic(err)
	}
	vals := map[string]string{"model": c.Kind, "hidden": fmt.Sprint(c.Hidden), "layers": fmt.Sprint(max(c.Layers, 1))}
	for _, flag := range StackFlags() {
		field := flagField(flag)
		if !kind.Uses(field) {
			continue
		}
		switch p := c.FieldValue(field).(type) {
		case *int:
			vals[flag] = fmt.Sprint(*p)
		case *bool:
			vals[flag] = fmt.Sprint(*p)
		case *float64:
			vals[flag] = strconv.FormatFloat(*p, 'g', -1, 64)
		case pflag.Value:
			vals[flag] = p.String()
		default:
			panic(fmt.Sprintf("cli: Config.%s of type %T has no flag type", field, p))
		}
	}
	return vals
}
