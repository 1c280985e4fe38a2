package nsrnn

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/nsrnn/nsrnn/stacks"
)

// Kind declares one model kind: its name, the configuration fields it
// uses (its hyperparameters, with their checks),
// its stack's constructor and sizes, and what it can do. A kind is one
// declaration passed to RegisterKind, in a file of its own (kind_lstm.go,
// kind_gref.go, kind_jm.go, kind_ns.go and kind_vrns.go hold the
// library's, registered in the order of one list): Config.Validate, CountParams, New, the command-line flags,
// run names, figures and the programs' lists of kinds all read the
// declarations, so that adding a kind, in this module or outside it, is
// one new file.
type Kind struct {
	// Name is the kind's name on command lines and in saved files
	// (Config.Kind).
	Name string
	// Hyperparameters are the fields of Config, beyond those of every
	// model (Kind, InputVocab, OutputVocab, Embedding, Hidden, Layers,
	// InitRange), that the kind uses; Validate refuses every other such
	// field set to a nonzero value (ErrNotApplicable).
	Hyperparameters []Hyperparameter
	// Streams reports whether the kind can run as a Stream (language
	// modeling): its stack can carry its state from chunk to chunk, given
	// the StreamDefault of its hyperparameters (a depth limit, a window).
	// It is what programs offer as stream models (ptb's --model);
	// NewStream asks the model's layer itself (stacks.Layer.Carryable)
	// for the configuration at hand.
	Streams bool
	// Stack builds the kind's stack for a validated configuration; nil
	// for a kind without a stack (the plain LSTM).
	Stack func(name string, c Config) (stacks.Layer, error)
	// StackParams counts the stack's parameters, and ReadingSize the
	// size of its reading, for a validated configuration, without
	// building anything (in float64, so that no size can overflow). Both
	// are required with Stack.
	StackParams func(c Config) float64
	ReadingSize func(c Config) float64
	// NSConfig, for a kind whose stack is a nondeterministic stack (its
	// action weights can be recorded and decoded: Model.ActionLogWeights,
	// Model.Viterbi), returns the stack's configuration; nil for the
	// other kinds.
	NSConfig func(c Config) stacks.NSConfig
}

// Hyperparameter declares one field of Config that a kind uses.
type Hyperparameter struct {
	// Field is the Go name of the Config field ("States"). Its
	// command-line flag is its JSON name with dashes for underscores
	// (Flag: "states", "stack-embedding").
	Field string
	// Option, in place of Field, names an integer hyperparameter of the
	// kind's own, kept in Config.Options: a kind registered outside this
	// package declares its hyperparameters so, instead of borrowing a
	// field of another kind's ("counters"; lower-case letters, digits and
	// dashes, from a letter; its flag is its name). Its checks are those
	// of a field; Config.Options.Get reads it.
	Option string
	// Name is what messages call the field, a noun phrase ("states", "a
	// window").
	Name string
	// Doc is the flag's help; %s in it stands for the kinds that use the
	// field. Where several kinds use a field, the help is the Doc of the
	// first registered.
	Doc string
	// Required means the kind needs a nonzero value: Validate refuses a
	// zero one (ErrRequired) when Check is nil, and a program that fills
	// in defaults asks for it.
	Required bool
	// Size marks a field that sets the number of parameters, which
	// Validate names when a configuration has too many.
	Size bool
	// StreamDefault, when nonzero, is the value that programs running
	// the kind as a stream (ptb train) give the field when it is zero,
	// so that the stack can carry its state: the paper's window D = 35,
	// JM's depth limit 10. The field's default is otherwise its zero
	// value.
	StreamDefault int
	// Check, when not nil, reports a value of the field that the kind
	// cannot use, given the whole configuration: a *FieldError made by
	// Refuse, whose reason is ErrRequired or ErrOutOfRange (another
	// error counts as out of range). Validate calls it whatever the
	// field's value.
	Check func(c Config) error
}

// Flag is the hyperparameter's command-line flag, without its dashes: the
// field's JSON name with dashes for underscores.
func (h Hyperparameter) Flag() string {
	if h.Option != "" {
		return h.Option
	}
	return FieldFlag(h.Field)
}

// Refuse returns the error of a Hyperparameter's Check: a *FieldError
// with the reason (ErrRequired, ErrOutOfRange) and the formatted message,
// whose Field Validate fills in.
func Refuse(reason error, format string, args ...any) error {
	return &FieldError{Reason: reason, msg: fmt.Sprintf(format, args...)}
}

// Uses reports whether the kind declares the Config field named field
// (its Go name).
func (k Kind) Uses(field string) bool {
	_, ok := k.hyperparameter(field)
	return ok
}

// Flags returns the command-line flags (without their dashes) of the
// kind's hyperparameters, in its declaration's order.
func (k Kind) Flags() []string {
	flags := make([]string, len(k.Hyperparameters))
	for i, h := range k.Hyperparameters {
		flags[i] = h.Flag()
	}
	return flags
}

func (k Kind) hyperparameter(field string) (Hyperparameter, bool) {
	for _, h := range k.Hyperparameters {
		if h.Field == field {
			return h, true
		}
	}
	return Hyperparameter{}, false
}

// commonFields are the Config fields of every model; the others are the
// kinds' hyperparameters (Options holds the options of the kinds that
// declare their own, which StackFields lists one by one).
var commonFields = []string{"Kind", "InputVocab", "OutputVocab", "Embedding", "Hidden", "Layers", "InitRange", "Options"}

// stackFields are the Config fields that kinds may declare, in Config's
// order, with their flags.
var stackFields = func() []reflect.StructField {
	var fs []reflect.StructField
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		if f := t.Field(i); !slices.Contains(commonFields, f.Name) {
			fs = append(fs, f)
		}
	}
	return fs
}()

// StackFields returns the Go names of the Config fields that kinds may
// declare as hyperparameters (all but those of every model), in the
// order of Config.
func StackFields() []string {
	names := make([]string, len(stackFields))
	for i, f := range stackFields {
		names[i] = f.Name
	}
	// Then the options that registered kinds declare, "Options.<name>",
	// in the order of registration.
	for _, k := range AllKinds() {
		for _, h := range k.Hyperparameters {
			if _, ok := optionOf(h.Field); ok && !slices.Contains(names, h.Field) {
				names = append(names, h.Field)
			}
		}
	}
	return names
}

// FieldFlag returns the command-line flag of a Config field: its JSON name
// with dashes for underscores ("stack-embedding" for StackEmbedding); ""
// for a name that is not a field of Config.
func FieldFlag(field string) string {
	if name, ok := optionOf(field); ok {
		return name
	}
	f, ok := reflect.TypeFor[Config]().FieldByName(field)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return strings.ReplaceAll(name, "_", "-")
}

// jsonName is the JSON name of a Config field.
func jsonName(field string) string {
	if name, ok := optionOf(field); ok {
		return "options." + name
	}
	return strings.ReplaceAll(FieldFlag(field), "-", "_")
}

// FieldValue returns a pointer to the field of c named field (its Go
// name): an *int, *bool, *float64, *stacks.Bottom, …, for a program that
// sets fields by name (a command line's flags). It panics if Config has
// no such field, a programmer error.
func (c *Config) FieldValue(field string) any {
	if name, ok := optionOf(field); ok {
		// A flag value (String, Set, Type) that sets the option.
		return optionValue{c, name}
	}
	v := reflect.ValueOf(c).Elem().FieldByName(field)
	if !v.IsValid() {
		panic("nsrnn: Config has no field " + field)
	}
	return v.Addr().Interface()
}

// FieldSet reports whether the field of c named field (its Go name) has a
// value other than its zero value, its default. It panics if Config has
// no such field, a programmer error.
func (c Config) FieldSet(field string) bool {
	if name, ok := optionOf(field); ok {
		return c.Options.Get(name) != 0
	}
	v := reflect.ValueOf(c).FieldByName(field)
	if !v.IsValid() {
		panic("nsrnn: Config has no field " + field)
	}
	return !v.IsZero()
}

// The table of kinds, in the order of registration.
var registry struct {
	sync.RWMutex
	kinds []Kind
}

// The library's kinds, registered in this order (that of AllKinds): the
// paper's, then those added since.
func init() {
	for _, k := range []Kind{
		lstmKind(), grefKind(), jmKind(),
		nsKind(NS, true, false), nsKind(NSS, true, true), nsKind(NSU, false, false), nsKind(RNS, false, true),
		vrnsKind(),
	} {
		RegisterKind(k)
	}
}

// kindName reports whether name can name a kind: letters, digits and
// "+-_.", at least one.
func kindName(name string) bool {
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("+-_.", r) {
			return false
		}
	}
	return name != "" && name != "." && name != ".."
}

// reservedFlags are the names no option may take besides the flags of
// Config's fields: the programs' flag of the model kind.
var reservedFlags = []string{"model"}

// reservedOption reports whether name is the flag of a field of Config
// (common to every kind, or a stack's) or one of reservedFlags: an option
// of that name would clash with it on a command line.
func reservedOption(name string) bool {
	if slices.Contains(reservedFlags, name) || slices.ContainsFunc(commonFields, func(f string) bool { return FieldFlag(f) == name }) {
		return true
	}
	return slices.ContainsFunc(stackFields, func(f reflect.StructField) bool { return FieldFlag(f.Name) == name })
}

// RegisterKind adds a model kind to the table, after those registered
// before it (the library's come first, in the paper's order, then the
// vector stack). Call it from an init function, or at least before any
// Config of the kind is validated; from then on models of the kind can be
// built, trained, run as streams (if it Streams), saved and loaded (Load
// finds the kind by name, so a program that loads a model of a kind
// registered outside this module registers it too). It is safe for
// concurrent use.
//
// RegisterKind panics, as a programmer error, if the kind's name is
// empty or holds other characters than letters, digits and "+-_." (it
// names run directories and is a value of command lines), or is already
// registered (names never clash: there is no replacing a kind), or if its
// declaration is inconsistent: a hyperparameter that is not one of
// StackFields or is declared twice, an option named as a flag of a field
// of Config or "model", or a Stack without StackParams and ReadingSize.
// That the layers its Stack makes agree with StackParams and ReadingSize
// is checked when a model is built (New).
func RegisterKind(k Kind) {
	if !kindName(k.Name) {
		panic(fmt.Sprintf("nsrnn: RegisterKind: bad kind name %q (letters, digits and +-_. only)", k.Name))
	}
	if k.Stack != nil && (k.StackParams == nil || k.ReadingSize == nil) {
		panic(fmt.Sprintf("nsrnn: RegisterKind(%s): a Stack needs StackParams and ReadingSize", k.Name))
	}
	k.Hyperparameters = slices.Clone(k.Hyperparameters)
	for i, h := range k.Hyperparameters {
		if h.Option != "" {
			// An option of the kind's own, named among the fields as
			// "Options.<name>".
			if h.Field != "" || !optionName(h.Option) || reservedOption(h.Option) {
				panic(fmt.Sprintf("nsrnn: RegisterKind(%s): option %q: declare a Field or an Option (lower-case letters, digits and dashes, from a letter), not the name of a flag of a field, nor %s", k.Name, h.Option, strings.Join(reservedFlags, ", ")))
			}
			h.Field = optionPrefix + h.Option
			k.Hyperparameters[i] = h
		} else if !slices.ContainsFunc(stackFields, func(f reflect.StructField) bool { return f.Name == h.Field }) {
			panic(fmt.Sprintf("nsrnn: RegisterKind(%s): hyperparameter %q is not one of %s", k.Name, h.Field, strings.Join(StackFields(), ", ")))
		}
		if slices.ContainsFunc(k.Hyperparameters[:i], func(o Hyperparameter) bool { return o.Field == h.Field }) {
			panic(fmt.Sprintf("nsrnn: RegisterKind(%s): hyperparameter %s declared twice", k.Name, h.Field))
		}
	}
	registry.Lock()
	defer registry.Unlock()
	if slices.ContainsFunc(registry.kinds, func(o Kind) bool { return o.Name == k.Name }) {
		panic(fmt.Sprintf("nsrnn: RegisterKind: kind %q is already registered", k.Name))
	}
	registry.kinds = append(registry.kinds, k)
}

// AllKinds returns the table of model kinds in the order of registration:
// the paper's, in its order, then the vector stack of the authors' later
// release, then any registered since (a copy).
func AllKinds() []Kind {
	registry.RLock()
	defer registry.RUnlock()
	kinds := slices.Clone(registry.kinds)
	for i := range kinds {
		kinds[i].Hyperparameters = slices.Clone(kinds[i].Hyperparameters)
	}
	return kinds
}

// KindNames returns the names of the model kinds, in the order of
// AllKinds.
func KindNames() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, len(registry.kinds))
	for i, k := range registry.kinds {
		names[i] = k.Name
	}
	return names
}

// LookupKind returns the kind named name, or an error listing the kinds.
func LookupKind(name string) (Kind, error) {
	registry.RLock()
	for _, k := range registry.kinds {
		if k.Name == name {
			registry.RUnlock()
			k.Hyperparameters = slices.Clone(k.Hyperparameters)
			return k, nil
		}
	}
	registry.RUnlock()
	return Kind{}, fmt.Errorf("unknown model %q (want one of %s)", name, strings.Join(KindNames(), ", "))
}

// KindsUsing returns the names of the kinds that declare the Config field
// named field, in the order of AllKinds.
func KindsUsing(field string) []string {
	var names []string
	for _, k := range AllKinds() {
		if k.Uses(field) {
			names = append(names, k.Name)
		}
	}
	return names
}

// IsNondeterministic reports whether the kind named kind has a
// nondeterministic stack (Kind.NSConfig).
func IsNondeterministic(kind string) bool {
	k, err := LookupKind(kind)
	return err == nil && k.NSConfig != nil
}
