package stacks_test

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/nsrnn/nsrnn/stacks"
)

// TestSizerAgreesWithBind checks that CheckSize refuses exactly the runs
// that Bind refuses for their memory, with the same error, for every stack
// whose memory grows with the run: unlimited and windowed NS, the vector
// stack, JM with and without a depth limit, and Gref; and that a runner
// of the same size is refused with the same error.
func TestSizerAgreesWithBind(t *testing.T) {
	must := func(l stacks.Layer, err error) stacks.Layer {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	unlimited := must(stacks.NewNS("ns", 4, stacks.NSConfig{States: 2, Symbols: 3}))
	windowed := must(stacks.NewNS("ns", 4, stacks.NSConfig{States: 2, Symbols: 3, Window: 5}))
	wide := must(stacks.NewNS("ns", 4, stacks.NSConfig{States: 1, Symbols: 2, Window: 1 << 26}))
	vector := must(stacks.NewVRNS("v", 4, stacks.VRNSConfig{States: 3, Symbols: 3, Vector: 8}))
	jm := must(stacks.NewJM("jm", 4, 10, false, 0))
	deep := must(stacks.NewJM("jm", 4, 10, false, 1<<28))
	gref := must(stacks.NewGref("gref", 4, 10))
	for _, c := range []struct {
		name         string
		l            stacks.Layer
		batch, steps int
		carry        bool
		refused      bool
	}{
		{"unlimited NS, 10 × 80", unlimited, 10, 80, false, false},
		{"unlimited NS, 1000 × 5000", unlimited, 1000, 5000, false, true},
		{"windowed NS carried, 32 × 35", windowed, 32, 35, true, false},
		{"window 2^26 carried, 32 × 35", wide, 32, 35, true, true},
		{"vector stack, 2 × 3", vector, 2, 3, false, false},
		{"vector stack, 1000 × 5000", vector, 1000, 5000, false, true},
		{"JM, 32 × 35", jm, 32, 35, false, false},
		{"JM, 32 × 10^6", jm, 32, 1e6, false, true},
		{"JM depth 2^28 carried, 32 × 35", deep, 32, 35, true, true},
		{"Gref, 10 × 80", gref, 10, 80, false, false},
		{"Gref, 1 × 10^6", gref, 1, 1e6, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sz, ok := c.l.(stacks.Sizer)
			if !ok {
				t.Fatalf("%T does not implement Sizer", c.l)
			}
			check := sz.CheckSize(c.batch, c.steps, c.carry)
			if (check != nil) != c.refused {
				t.Fatalf("CheckSize: %v, want refused %v", check, c.refused)
			}
			_, bind := c.l.Bind(stacks.NewBinding(G.NewGraph()), c.batch, c.steps, c.carry)
			switch {
			case !c.refused && bind != nil:
				t.Errorf("Bind: %v", bind)
			case c.refused && (bind == nil || bind.Error() != check.Error()):
				t.Errorf("Bind: %v, want CheckSize's error %v", bind, check)
			}
			// A runner (generation) of the same size is refused with the
			// same error: it keeps the same tape.
			if c.carry {
				return
			}
			_, run := c.l.(stacks.Runners).NewRunner(c.batch, c.steps)
			switch {
			case !c.refused && run != nil:
				t.Errorf("NewRunner: %v", run)
			case c.refused && (run == nil || run.Error() != check.Error()):
				t.Errorf("NewRunner: %v, want CheckSize's error %v", run, check)
			}
		})
	}
	if err := unlimited.(stacks.Sizer).CheckSize(0, 3, false); err == nil {
		t.Error("CheckSize with batch 0: no error")
	}
}
