package nsrnn

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestConfigValidateErrors: every refusal is a *FieldError naming the
// field, with a reason errors.Is can test, and all of a configuration's
// faults are listed.
func TestConfigValidateErrors(t *testing.T) {
	good := Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 5, States: 2, Symbols: 3}
	for _, tc := range []struct {
		name   string
		mod    func(*Config)
		field  string
		reason error
	}{
		{"unknown kind", func(c *Config) { c.Kind = "gru" }, "Kind", ErrUnknownKind},
		{"no hidden", func(c *Config) { c.Hidden = 0 }, "Hidden", ErrOutOfRange},
		{"no input vocabulary", func(c *Config) { c.InputVocab = -1 }, "InputVocab", ErrOutOfRange},
		{"init range NaN", func(c *Config) { c.InitRange = math.NaN() }, "InitRange", ErrOutOfRange},
		{"ns without symbols", func(c *Config) { c.Symbols = 0 }, "Symbols", ErrRequired},
		{"ns without states", func(c *Config) { c.States = 0 }, "States", ErrRequired},
		{"lstm with states", func(c *Config) { c.Kind = LSTM; c.Symbols = 0 }, "States", ErrNotApplicable},
		{"lstm with symbols", func(c *Config) { c.Kind = LSTM; c.States = 0 }, "Symbols", ErrNotApplicable},
		{"jm without embedding", func(c *Config) { *c = Config{Kind: JM, InputVocab: 3, OutputVocab: 4, Hidden: 5} }, "StackEmbedding", ErrRequired},
		{"jm push hidden wrong size", func(c *Config) {
			*c = Config{Kind: JM, InputVocab: 3, OutputVocab: 4, Hidden: 5, PushHiddenState: true, StackEmbedding: 4}
		}, "StackEmbedding", ErrOutOfRange},
		{"gref push hidden", func(c *Config) {
			*c = Config{Kind: Gref, InputVocab: 3, OutputVocab: 4, Hidden: 5, PushHiddenState: true, StackEmbedding: 5}
		}, "PushHiddenState", ErrNotApplicable},
		{"depth limit on ns", func(c *Config) { c.DepthLimit = 10 }, "DepthLimit", ErrNotApplicable},
		{"negative window", func(c *Config) { c.Window = -1 }, "Window", ErrOutOfRange},
		{"unknown bottom", func(c *Config) { c.Bottom = 7 }, "Bottom", ErrOutOfRange},
		{"unknown bottom vector", func(c *Config) {
			*c = Config{Kind: VRNS, InputVocab: 3, OutputVocab: 4, Hidden: 5, States: 2, Symbols: 3, StackEmbedding: 4, BottomVector: 9}
		}, "BottomVector", ErrOutOfRange},
		{"too many parameters", func(c *Config) { c.States, c.Symbols = 100, 100 }, "", ErrTooLarge},
	} {
		c := good
		tc.mod(&c)
		err := c.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: error %v is not a *ConfigError", tc.name, err)
			continue
		}
		if len(ce.Fields) != 1 {
			t.Errorf("%s: %d fields refused, want 1: %v", tc.name, len(ce.Fields), err)
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: field error %v, want field %q", tc.name, fe, tc.field)
		}
		if !errors.Is(err, tc.reason) {
			t.Errorf("%s: error %v does not wrap %v", tc.name, err, tc.reason)
		}
		if !strings.HasPrefix(err.Error(), "nsrnn: invalid model configuration: ") {
			t.Errorf("%s: message %q", tc.name, err)
		}
	}

	// Several faults: each is listed, in the order of the fields.
	bad := Config{Kind: LSTM, InputVocab: 0, OutputVocab: 4, Hidden: 0, Window: 2}
	var ce *ConfigError
	if err := bad.Validate(); !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *ConfigError", err)
	}
	var got []string
	for _, f := range ce.Fields {
		got = append(got, f.Field)
	}
	if strings.Join(got, ",") != "InputVocab,Hidden,Window" {
		t.Errorf("fields %v, want InputVocab, Hidden, Window", got)
	}
	if err := bad.Validate(); !errors.Is(err, ErrOutOfRange) || !errors.Is(err, ErrNotApplicable) || errors.Is(err, ErrRequired) {
		t.Errorf("reasons of %v: want out of range and not applicable only", err)
	}
}

// TestConfigErrorMessageOnce: a problem that refuses several fields (both
// sizes of a nondeterministic stack missing, fields that do not apply to
// the kind) is said once in the message, while every field is still
// listed.
func TestConfigErrorMessageOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      Config
		fields int
		want   string // said exactly once
	}{
		{"rns without states and symbols", Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 5}, 2, "needs states ≥ 1 and symbols ≥ 1"},
		{"vrns without states and symbols", Config{Kind: VRNS, InputVocab: 3, OutputVocab: 4, Hidden: 5, StackEmbedding: 2}, 2, "needs states ≥ 1 and symbols ≥ 1"},
		{"lstm with states and symbols", Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 5, States: 2, Symbols: 3}, 2, "apply only to"},
		{"two faults", Config{Kind: NS, InputVocab: 3, OutputVocab: 4, Hidden: 0}, 3, "hidden size 0 < 1"},
	} {
		err := tc.c.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || len(ce.Fields) != tc.fields {
			t.Errorf("%s: error %v, want a *ConfigError of %d fields", tc.name, err, tc.fields)
			continue
		}
		if n := strings.Count(err.Error(), tc.want); n != 1 {
			t.Errorf("%s: message %q says %q %d times, want once", tc.name, err, tc.want, n)
		}
		if _, err := New(tc.c, 1); err == nil || strings.Count(err.Error(), tc.want) != 1 {
			t.Errorf("%s: New: %v, want %q once", tc.name, err, tc.want)
		}
	}
}

// PartsFor gives one part per core, and more where the dynamic programs of
// a part per core outgrow the budget: RNS at |Q| = 3 on batches of ten
// strings of 80 symbols (about 41 MB of triangles), not at |Q| = 2 (18 MB),
// nor for a kind without a nondeterministic stack; never more parts than
// sequences, never fewer than one.
func TestPartsFor(t *testing.T) {
	rns := func(q, window int) Config {
		return Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 20, States: q, Symbols: 3, Window: window}
	}
	for _, c := range []struct {
		name            string
		cfg             Config
		batch, n, cores int
		want            int
	}{
		{"lstm", Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 20}, 10, 80, 2, 2},
		{"rns Q2, two cores", rns(2, 0), 10, 80, 2, 2},
		{"rns Q2, one core", rns(2, 0), 10, 80, 1, 1},
		{"rns Q3, two cores", rns(3, 0), 10, 80, 2, 4},
		{"rns Q3, one core", rns(3, 0), 10, 80, 1, 2},
		{"rns Q3, short strings", rns(3, 0), 10, 20, 2, 2},
		{"rns Q3, a window", rns(3, 5), 10, 80, 2, 2},
		{"ns+s Q3", Config{Kind: NSS, InputVocab: 3, OutputVocab: 4, Hidden: 20, States: 3, Symbols: 3}, 10, 80, 2, 4},
		{"vrns Q3", Config{Kind: VRNS, InputVocab: 3, OutputVocab: 4, Hidden: 20, States: 3, Symbols: 3, StackEmbedding: 3}, 10, 80, 2, 4},
		{"huge strings: one a part", rns(3, 0), 10, 1000, 2, 10},
		{"fewer sequences than cores", rns(3, 0), 3, 80, 8, 3},
		{"no cores, no batch", rns(2, 0), 0, 80, 0, 1},
	} {
		if got := c.cfg.PartsFor(c.batch, c.n, c.cores); got != c.want {
			t.Errorf("%s: PartsFor(%d, %d, %d) = %d, want %d", c.name, c.batch, c.n, c.cores, got, c.want)
		}
	}
}
