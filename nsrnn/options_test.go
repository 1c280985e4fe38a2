package nsrnn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
)

// Options keep a canonical form (so that equal options compare equal),
// drop zeros, and read and write JSON objects; a name that cannot name an
// option is refused.
func TestOptions(t *testing.T) {
	a := MakeOptions(map[string]int{"b": 2, "a": 1, "z": 0})
	b := Options("").With("a", 1).With("b", 2)
	if a != b || a != "a=1,b=2" {
		t.Errorf("MakeOptions %q, With %q, want both a=1,b=2", a, b)
	}
	if a.Get("b") != 2 || a.Get("c") != 0 || !slices.Equal(a.Names(), []string{"a", "b"}) {
		t.Errorf("Get and Names of %q", a)
	}
	if a.With("a", 0) != "b=2" {
		t.Errorf("setting a to 0 leaves %q", a.With("a", 0))
	}
	js, err := json.Marshal(struct {
		O Options `json:"o,omitempty"`
		E Options `json:"e,omitempty"`
	}{O: a})
	if err != nil || string(js) != `{"o":{"a":1,"b":2}}` {
		t.Errorf("JSON %s, %v", js, err)
	}
	var back struct{ O Options }
	if err := json.Unmarshal([]byte(`{"O":{"b":2,"a":1}}`), &back); err != nil || back.O != a {
		t.Errorf("from JSON: %q, %v", back.O, err)
	}
	for _, bad := range []string{`{"O":{"A":1}}`, `{"O":{"a=b":1}}`, `{"O":{"a":1.5}}`, `{"O":[1]}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("With of a bad name did not panic")
		}
	}()
	Options("").With("1a", 1)
}

// A kind declares an option of its own: Validate checks it (required, its
// Check), refuses it for a kind that does not declare it and refuses an
// option that no kind declares; the programs' flag is its name; a model
// saved with it loads with it, and configurations compare with ==.
func TestKindOption(t *testing.T) {
	RegisterKind(Kind{Name: "optkind", Streams: true,
		Hyperparameters: []Hyperparameter{{Option: "cells", Name: "a number of cells", Doc: "cells of %s", Required: true, Size: true}},
		Stack: func(name string, c Config) (stacks.Layer, error) {
			return stacks.NewJM(name, c.Hidden, c.Options.Get("cells"), false, 3)
		},
		StackParams: func(c Config) float64 {
			return 3*float64(c.Hidden+1) + float64(c.Hidden+1)*float64(c.Options.Get("cells"))
		},
		ReadingSize: func(c Config) float64 { return float64(c.Options.Get("cells")) },
	})
	k, err := LookupKind("optkind")
	if err != nil {
		t.Fatal(err)
	}
	if !k.Uses("Options.cells") || k.Flags()[0] != "cells" || !slices.Contains(StackFields(), "Options.cells") || FieldFlag("Options.cells") != "cells" {
		t.Errorf("the option's field and flag: uses %v, flags %v, fields %v", k.Uses("Options.cells"), k.Flags(), StackFields())
	}
	base := Config{Kind: "optkind", InputVocab: 3, OutputVocab: 4, Hidden: 5}
	if err := base.Validate(); !errors.Is(err, ErrRequired) || !strings.Contains(err.Error(), "a number of cells") {
		t.Errorf("without the required option: %v", err)
	}
	// A negative count of an option with no Check of its own is the
	// option's error, not the kind's StackParams'.
	neg := base
	neg.Options = MakeOptions(map[string]int{"cells": -3})
	var ce *ConfigError
	if err := neg.Validate(); !errors.Is(err, ErrOutOfRange) || !errors.As(err, &ce) || ce.Fields[0].Field != "Options.cells" || !strings.Contains(err.Error(), "a number of cells -3 < 0") {
		t.Errorf("a negative option: %v", err)
	}
	c := base
	c.Options = MakeOptions(map[string]int{"cells": 2})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	other := Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 5, Options: c.Options}
	if err := other.Validate(); !errors.Is(err, ErrNotApplicable) || !strings.Contains(err.Error(), "optkind") {
		t.Errorf("the option on an LSTM: %v", err)
	}
	// Options set as a string must be in the canonical form: a value
	// that is not an integer, a name given twice, names out of order or
	// a zero value are refused, not read as 0 or as the last one.
	for _, o := range []Options{"cells=3,size=x", "cells=3 ", "cells=3,cells=5", "size=2,cells=3", "cells=0", "cells", "cells=3,", "Cells=3"} {
		bad := c
		bad.Options = o
		if err := bad.Validate(); !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "MakeOptions") {
			t.Errorf("options %q: %v", o, err)
		}
	}
	unknown := c
	unknown.Options = c.Options.With("nobody", 1)
	if err := unknown.Validate(); !errors.Is(err, ErrNotApplicable) || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("an option no kind declares: %v", err)
	}
	var fv interface {
		Set(string) error
		String() string
	}
	fv = (&c).FieldValue("Options.cells").(interface {
		Set(string) error
		String() string
	})
	if err := fv.Set("3"); err != nil || c.Options.Get("cells") != 3 || fv.String() != "3" || !c.FieldSet("Options.cells") {
		t.Errorf("the option as a flag value: %v, %q", err, c.Options)
	}
	if fv.Set("x") == nil {
		t.Error("a flag value that is not an integer was accepted")
	}
	m, err := New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Config() != m.Config() || back.Config().Options.Get("cells") != 3 {
		t.Errorf("loaded %+v, saved %+v", back.Config(), m.Config())
	}
	if n, err := CountParams(c); err != nil || n != m.NumParams() {
		t.Errorf("CountParams %d (%v), the model has %d", n, err, m.NumParams())
	}
}

// TestKindDeclarationChecked: a kind registered from outside whose layer
// disagrees with its declaration (another reading size or parameter
// count, no layer, a parameter named as another of the model's) or whose
// declared counts are not whole numbers ≥ 0 is refused by New and
// CountParams with an error naming the kind, instead of training a model
// that its own files cannot load or whose graph reads the wrong values.
func TestKindDeclarationChecked(t *testing.T) {
	jm := func(name string, c Config) (stacks.Layer, error) { return stacks.NewJM(name, c.Hidden, 2, false, 3) }
	params := func(c Config) float64 { return 3*float64(c.Hidden+1) + float64(c.Hidden+1)*2 }
	reading := func(Config) float64 { return 2 }
	for _, tc := range []struct {
		name    string
		stack   func(string, Config) (stacks.Layer, error)
		params  func(Config) float64
		reading func(Config) float64
		want    string
	}{
		{"declkind-reading", jm, params, func(Config) float64 { return 3 }, "reads 2 values, its Kind.ReadingSize declares 3"},
		{"declkind-params", jm, func(c Config) float64 { return params(c) + 1 }, reading, "Kind.StackParams declares"},
		{"declkind-nil", func(string, Config) (stacks.Layer, error) { return nil, nil }, params, reading, "returned no layer"},
		{"declkind-typednil", func(string, Config) (stacks.Layer, error) { return (*stacks.JM)(nil), nil }, params, reading, "returned no layer"},
		{"declkind-clash", func(name string, c Config) (stacks.Layer, error) {
			l, err := jm(name, c)
			return clashLayer{l, param.New("output.b", c.OutputVocab)}, err
		}, func(c Config) float64 { return params(c) + float64(c.OutputVocab) }, reading, `two parameters are named "output.b"`},
		{"declkind-negative", jm, func(Config) float64 { return -1e300 }, reading, "whole number"},
		{"declkind-nan", jm, params, func(Config) float64 { return math.NaN() }, "whole number"},
	} {
		RegisterKind(Kind{Name: tc.name, Stack: tc.stack, StackParams: tc.params, ReadingSize: tc.reading})
		defer unregisterKind(tc.name) // the other tests build every kind of the table
		c := Config{Kind: tc.name, InputVocab: 3, OutputVocab: 4, Hidden: 5}
		_, err := New(c, 1)
		if err == nil || !strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New: %v; want an error naming the kind and saying %q", tc.name, err, tc.want)
		}
		if strings.Contains(tc.want, "whole number") {
			if n, err := CountParams(c); err == nil {
				t.Errorf("%s: CountParams = %d, no error", tc.name, n)
			}
		}
	}
}

// clashLayer is a stack layer with a parameter more, extra.
type clashLayer struct {
	stacks.Layer
	extra *param.Param
}

func (l clashLayer) Params() []*param.Param { return append(l.Layer.Params(), l.extra) }

// TestLoadUnregisteredKind: a model file of a kind this program has not
// registered is refused with an error wrapping ErrUnknownKind that says
// to import the kind's package, not as a damaged file.
func TestLoadUnregisteredKind(t *testing.T) {
	m, err := New(Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The same file with the kind renamed to one nobody registered, its
	// checksum made again.
	body := bytes.Replace(b[:len(b)-4], []byte(`"kind":"lstm"`), []byte(`"kind":"lstx"`), 1)
	crafted := binary.LittleEndian.AppendUint32(body, crc32.ChecksumIEEE(body))
	_, err = UnmarshalModel(crafted)
	if !errors.Is(err, ErrUnknownKind) || errors.Is(err, ErrBadModelFile) || !strings.Contains(err.Error(), "import") {
		t.Errorf("a model of an unregistered kind: %v", err)
	}
}

// unregisterKind removes a kind that a test registered (the table has no
// removal: kinds are registered for good).
func unregisterKind(name string) {
	registry.Lock()
	defer registry.Unlock()
	registry.kinds = slices.DeleteFunc(registry.kinds, func(k Kind) bool { return k.Name == name })
}
