package stacks_test

import (
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/stacks"
)

// TestConstructorsRefuseHugeLayers: sizes whose parameters or action
// counts would exhaust the memory (or overflow an int) are errors from
// the constructors, before anything is allocated.
func TestConstructorsRefuseHugeLayers(t *testing.T) {
	for _, c := range []struct {
		name string
		new  func() error
		want string
	}{
		{"NS |Q||Γ| 40,000", func() error { _, err := stacks.NewNS("s", 8, stacks.NSConfig{States: 200, Symbols: 200}); return err }, "pairs"},
		{"NS |Q||Γ| 2^80", func() error {
			_, err := stacks.NewNS("s", 8, stacks.NSConfig{States: 1 << 40, Symbols: 1 << 40})
			return err
		}, "pairs"},
		{"NS hidden 2^30", func() error { _, err := stacks.NewNS("s", 1<<30, stacks.NSConfig{States: 2, Symbols: 3}); return err }, "MaxParams"},
		{"VRNS vector 2^30", func() error {
			_, err := stacks.NewVRNS("s", 8, stacks.VRNSConfig{States: 2, Symbols: 3, Vector: 1 << 30})
			return err
		}, "vector"},
		{"Gref 2^16 × 2^16", func() error { _, err := stacks.NewGref("s", 1<<16, 1<<16); return err }, "MaxParams"},
		{"JM 2^16 × 2^16", func() error { _, err := stacks.NewJM("s", 1<<16, 1<<16, false, 0); return err }, "MaxParams"},
	} {
		if err := c.new(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	if err := (stacks.NSConfig{States: 1 << 40, Symbols: 1 << 40}).Validate(); err == nil {
		t.Error("Validate of |Q| = |Γ| = 2^40: no error")
	}
	// The sizes of the paper's models are far within the limits.
	if _, err := stacks.NewNS("s", 256, stacks.NSConfig{States: 3, Symbols: 4, Window: 35}); err != nil {
		t.Errorf("RNS 3-4: %v", err)
	}
}
