package nsrnn

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Options are the hyperparameters that kinds registered outside this
// package declare for themselves (Hyperparameter.Option), by name: integer
// values, none zero (zero is an option's default, as for the fields). They
// are kept in a canonical text form ("counters=3,decay=2", names in order)
// so that a Config stays comparable with ==; in JSON (model files,
// run.json) they are an object, {"counters": 3}. The zero value holds no
// options. Build them with MakeOptions or With, read them with Get.
type Options string

// optionName reports whether name can name an option: lower-case letters,
// digits and dashes, starting with a letter (it is also its flag).
func optionName(name string) bool {
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// MakeOptions returns the options of values (those with value 0 left
// out). It panics on a name that cannot name an option, a programmer
// error.
func MakeOptions(values map[string]int) Options {
	var o Options
	for _, n := range slices.Sorted(maps.Keys(values)) {
		o = o.With(n, values[n])
	}
	return o
}

// parse returns the options as a map (nil for none).
func (o Options) parse() map[string]int {
	if o == "" {
		return nil
	}
	m := map[string]int{}
	for _, kv := range strings.Split(string(o), ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, _ := strconv.Atoi(v)
		m[k] = n
	}
	return m
}

// check reports options that are not in the canonical form that
// MakeOptions and With make (an Options is a string, which a program may
// set directly): names that cannot name an option or repeated, values
// that are not nonzero integers, names out of order.
func (o Options) check() error {
	if o == "" {
		return nil
	}
	m := map[string]int{}
	for _, kv := range strings.Split(string(o), ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if _, dup := m[k]; !ok || err != nil || n == 0 || !optionName(k) || dup {
			return fmt.Errorf("options %q: %q is not name=value with a nonzero integer value, once per name (make options with MakeOptions or With)", string(o), kv)
		}
		m[k] = n
	}
	if c := MakeOptions(m); c != o {
		return fmt.Errorf("options %q are not in their canonical form %q (make options with MakeOptions or With)", string(o), string(c))
	}
	return nil
}

// Get returns the value of the option name (0 when it is not set).
func (o Options) Get(name string) int { return o.parse()[name] }

// With returns o with the option name set to v (removed when v is 0). It
// panics on a name that cannot name an option, a programmer error.
func (o Options) With(name string, v int) Options {
	if !optionName(name) {
		panic(fmt.Sprintf("nsrnn: %q cannot name an option (lower-case letters, digits and dashes, from a letter)", name))
	}
	m := o.parse()
	if m == nil {
		m = map[string]int{}
	}
	if v == 0 {
		delete(m, name)
	} else {
		m[name] = v
	}
	parts := make([]string, 0, len(m))
	for _, n := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, n+"="+strconv.Itoa(m[n]))
	}
	return Options(strings.Join(parts, ","))
}

// Names returns the names of the options set, in order.
func (o Options) Names() []string { return slices.Sorted(maps.Keys(o.parse())) }

// MarshalJSON writes the options as a JSON object.
func (o Options) MarshalJSON() ([]byte, error) {
	m := o.parse()
	if m == nil {
		m = map[string]int{}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads options from a JSON object of integers; a name that
// cannot name an option is an error.
func (o *Options) UnmarshalJSON(b []byte) error {
	var m map[string]int
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("nsrnn: options: %w", err)
	}
	for n := range m {
		if !optionName(n) {
			return fmt.Errorf("nsrnn: options: %q cannot name an option", n)
		}
	}
	*o = MakeOptions(m)
	return nil
}

// optionPrefix marks an option among the names of Config's fields that
// kinds declare (StackFields, Hyperparameter.Field): "Options.counters".
const optionPrefix = "Options."

// optionOf returns the option's name of a field name of StackFields, and
// whether it names an option.
func optionOf(field string) (string, bool) { return strings.CutPrefix(field, optionPrefix) }

// optionValue is an option of a Config as a flag value (Config.FieldValue).
type optionValue struct {
	c    *Config
	name string
}

func (v optionValue) String() string {
	if v.c == nil {
		return "0"
	}
	return strconv.Itoa(v.c.Options.Get(v.name))
}

func (v optionValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not an integer")
	}
	v.c.Options = v.c.Options.With(v.name, n)
	return nil
}

func (optionValue) Type() string { return "int" }
