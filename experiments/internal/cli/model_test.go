package cli

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// TestModelFlagsKinds checks that the kind-specific flags follow the kinds
// table: each is accepted by the kinds that list it and refused, naming
// the flag and the kinds it applies to, by the others.
func TestModelFlagsKinds(t *testing.T) {
	values := map[string][]string{
		"states": {"--states", "2"}, "symbols": {"--symbols", "2"}, "stack-embedding": {"--stack-embedding", "4"},
		"push-hidden-state": {"--push-hidden-state"}, "depth-limit": {"--depth-limit", "3"}, "window": {"--window", "3"},
		"bottom": {"--bottom", "fixed"}, "bottom-vector": {"--bottom-vector", "zero"},
	}
	for _, k := range nsrnn.AllKinds() {
		for flag, args := range values {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			mf := AddModelFlags(fs, 4)
			base := []string{"--model", k.Name}
			// What the kind needs besides the flag under test.
			if slices.Contains(k.Flags(), "states") && flag != "states" && flag != "symbols" {
				base = append(base, "--states", "2", "--symbols", "2")
			}
			if flag == "states" && slices.Contains(k.Flags(), "symbols") {
				base = append(base, "--symbols", "2")
			}
			if flag == "symbols" && slices.Contains(k.Flags(), "states") {
				base = append(base, "--states", "2")
			}
			if slices.Contains(k.Flags(), "stack-embedding") && flag != "stack-embedding" && flag != "push-hidden-state" {
				base = append(base, "--stack-embedding", "4")
			}
			if err := fs.Parse(append(base, args...)); err != nil {
				t.Fatal(err)
			}
			_, err := mf.Config(3, 4, 0, 0)
			uses := slices.Contains(k.Flags(), flag)
			switch {
			case uses && err != nil:
				t.Errorf("%s --%s: %v", k.Name, flag, err)
			case !uses && err == nil:
				t.Errorf("%s --%s: no error", k.Name, flag)
			case !uses && (!strings.Contains(err.Error(), "--"+flag) || !strings.Contains(err.Error(), strings.Join(KindsUsing(flag), ", "))):
				t.Errorf("%s --%s: error %q names neither the flag nor the kinds it applies to", k.Name, flag, err)
			}
		}
	}
	var want []string
	for _, k := range nsrnn.AllKinds() {
		if slices.Contains(k.Flags(), "window") {
			want = append(want, k.Name)
		}
	}
	if got := KindsUsing("window"); len(got) == 0 || !slices.Equal(got, want) {
		t.Errorf("KindsUsing(window) = %v, want %v", got, want)
	}
	// Every kind-specific flag of the table is a model flag.
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	AddModelFlags(fs, 4)
	for _, k := range nsrnn.AllKinds() {
		for _, f := range k.Flags() {
			if fs.Lookup(f) == nil {
				t.Errorf("kind %s's flag --%s is not a model flag", k.Name, f)
			} else if _, ok := values[f]; !ok {
				t.Errorf("the test does not try --%s", f)
			}
		}
	}
	mf := &ModelFlags{Model: nsrnn.Config{Kind: "gru", Hidden: 4}}
	if _, err := mf.Config(3, 4, 0, 0); err == nil || !strings.Contains(err.Error(), `--model "gru"`) {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestConfigNamesFlags: a field that a flag sets is named by its flag in
// the error, which still wraps the field errors.
func TestConfigNamesFlags(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	mf := AddModelFlags(fs, 20)
	if err := fs.Parse([]string{"--model", "rns", "--hidden", "-1", "--states", "2", "--symbols", "-1"}); err != nil {
		t.Fatal(err)
	}
	_, err := mf.Config(3, 4, 0, 0)
	if err == nil || !strings.Contains(err.Error(), "--hidden: ") || !strings.Contains(err.Error(), "--symbols: ") {
		t.Fatalf("error %v, want one naming --hidden and --symbols", err)
	}
	var fe *nsrnn.FieldError
	var ce *nsrnn.ConfigError
	if !errors.As(err, &fe) || !errors.Is(err, nsrnn.ErrOutOfRange) || !errors.As(err, &ce) {
		t.Errorf("error %v does not wrap the configuration and field errors", err)
	}
}

// TestCheckGiven: 0 typed for --layers or for a size field that the kind
// cannot have 0 in is refused, naming the flag, where a program would
// otherwise fill in its default for the "not given" zero; the same zero
// not typed, a zero the kind accepts (JM pushing the hidden state), and 0
// for a field whose zero means something (a window, a depth limit), pass.
func TestCheckGiven(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" for no error
	}{
		{[]string{"--model", "rns"}, ""},
		{[]string{"--model", "rns", "--states", "0"}, "--states 0 must be at least 1"},
		{[]string{"--model", "rns", "--states", "2", "--symbols", "0"}, "--symbols 0 must be at least 1"},
		{[]string{"--model", "gref", "--stack-embedding", "0"}, "--stack-embedding 0 must be at least 1"},
		{[]string{"--model", "lstm", "--layers", "0"}, "--layers 0 must be at least 1"},
		{[]string{"--model", "lstm", "--layers", "2"}, ""},
		{[]string{"--model", "rns", "--window", "0"}, ""},
		{[]string{"--model", "jm", "--depth-limit", "0"}, ""},
		{[]string{"--model", "jm", "--stack-embedding", "0"}, "--stack-embedding 0 must be at least 1"},
		{[]string{"--model", "jm", "--push-hidden-state", "--stack-embedding", "0"}, ""},
		{[]string{"--model", "vrns", "--stack-embedding", "0"}, "--stack-embedding 0 must be at least 1"},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		mf := AddModelFlags(fs, 4)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := mf.CheckGiven()
		if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if c.want != "" {
			if _, err := mf.Config(3, 4, 0, 0); err == nil || err.Error() != c.want {
				t.Errorf("%v: Config: %v, want %q", c.args, err, c.want)
			}
		}
	}
}
