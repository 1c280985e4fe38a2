package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/stacks"
)

// A kind registered outside package nsrnn with an option of its own gets
// a flag of that name: it sets the option for the kind, is refused for
// another kind (naming the flag and the kind it applies to), and the
// option's own check is reported under the flag.
func TestModelFlagsOption(t *testing.T) {
	nsrnn.RegisterKind(nsrnn.Kind{Name: "cli-optkind",
		Hyperparameters: []nsrnn.Hyperparameter{{Option: "slots", Name: "a number of slots", Doc: "slots of %s", Required: true,
			Check: func(c nsrnn.Config) error {
				if n := c.Options.Get("slots"); n < 1 || n > 9 {
					return nsrnn.Refuse(nsrnn.ErrOutOfRange, "model %s needs 1 to 9 slots, got %d", c.Kind, n)
				}
				return nil
			}}},
		Stack: func(name string, c nsrnn.Config) (stacks.Layer, error) {
			return stacks.NewJM(name, c.Hidden, c.Options.Get("slots"), false, 0)
		},
		StackParams: func(c nsrnn.Config) float64 { return float64(c.Hidden+1) * float64(3+c.Options.Get("slots")) },
		ReadingSize: func(c nsrnn.Config) float64 { return float64(c.Options.Get("slots")) },
	})
	parse := func(args ...string) (nsrnn.Config, error) {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		mf := AddModelFlags(fs, 4)
		if err := fs.Parse(args); err != nil {
			return nsrnn.Config{}, err
		}
		return mf.Config(3, 4, 0, 0)
	}
	c, err := parse("--model", "cli-optkind", "--slots", "3")
	if err != nil || c.Options.Get("slots") != 3 {
		t.Fatalf("--slots 3: %+v, %v", c, err)
	}
	if _, err := parse("--model", "lstm", "--slots", "3"); err == nil || !strings.Contains(err.Error(), "--slots applies only to cli-optkind") {
		t.Errorf("--slots for an LSTM: %v", err)
	}
	if _, err := parse("--model", "cli-optkind", "--slots", "12"); err == nil || !strings.Contains(err.Error(), "--slots: model cli-optkind needs 1 to 9 slots, got 12") {
		t.Errorf("--slots 12: %v", err)
	}
	if _, err := parse("--model", "cli-optkind", "--slots", "x"); err == nil {
		t.Error("--slots x accepted")
	}
	if KindsUsing("slots")[0] != "cli-optkind" || !KindUses("cli-optkind", "slots") {
		t.Errorf("KindsUsing(slots) = %v", KindsUsing("slots"))
	}
}
