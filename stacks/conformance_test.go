package stacks_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

// The conformance suite (package stackstest) run against every stack kind.

func TestConformanceGref(t *testing.T) {
	stackstest.Test(t, "m=2", func(hidden int) (stacks.Layer, error) { return stacks.NewGref("gref", hidden, 2) })
}

func TestConformanceJM(t *testing.T) {
	for _, depth := range []int{0, 1, 3} {
		stackstest.Test(t, fmt.Sprintf("learned m=2/depth=%d", depth), func(hidden int) (stacks.Layer, error) {
			return stacks.NewJM("jm", hidden, 2, false, depth)
		})
		stackstest.Test(t, fmt.Sprintf("push hidden/depth=%d", depth), func(hidden int) (stacks.Layer, error) {
			return stacks.NewJM("jm", hidden, hidden, true, depth)
		})
	}
}

func TestConformanceNS(t *testing.T) {
	for _, v := range nsVariants {
		for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
			for _, window := range []int{0, 2, 5} {
				for _, size := range [][2]int{{2, 2}, {1, 3}} {
					cfg := nsConfig(size[0], size[1], v.normalized, v.stateReading, bottom, window)
					stackstest.Test(t, nsName(cfg), func(hidden int) (stacks.Layer, error) { return stacks.NewNS("ns", hidden, cfg) })
				}
			}
		}
	}
	// More states than symbols.
	for _, cfg := range []stacks.NSConfig{
		nsConfig(3, 1, true, true, stacks.Original, 0),
		nsConfig(3, 1, false, false, stacks.Fixed, 3),
	} {
		stackstest.Test(t, nsName(cfg), func(hidden int) (stacks.Layer, error) { return stacks.NewNS("ns", hidden, cfg) })
	}
}

// TestStateOfAnotherStack checks that states are refused by stacks of
// another configuration or kind, both as values (SetState) and as
// encodings (UnmarshalState).
func TestStateOfAnotherStack(t *testing.T) {
	const batch, hidden = 2, 3
	var layers []stacks.Layer
	for _, cfg := range []stacks.NSConfig{
		nsConfig(2, 2, true, false, stacks.Original, 2),
		nsConfig(2, 2, true, false, stacks.Original, 3),
		nsConfig(2, 2, true, false, stacks.Fixed, 2),
		nsConfig(2, 2, false, true, stacks.Original, 2),
		nsConfig(2, 1, true, false, stacks.Original, 2),
	} {
		layers = append(layers, nsNew(t, hidden, cfg, 1, 1))
	}
	for _, c := range []struct{ m, depth int }{{2, 2}, {2, 3}, {1, 2}} {
		s, err := stacks.NewJM("jm", hidden, c.m, false, c.depth)
		if err != nil {
			t.Fatal(err)
		}
		s.Init(param.Scheme{Uniform: 1}, rand.New(rand.NewPCG(1, 1)))
		layers = append(layers, s)
	}
	states := make([]stacks.State, len(layers))
	encs := make([][]byte, len(layers))
	nets := make([]*stackstest.Net, len(layers))
	for i, l := range layers {
		nets[i] = newNet(t, l, stackstest.NewData(rand.New(rand.NewPCG(2, 2)), batch, hidden, l.ReadingSize(), 3), stackstest.Options{Steps: 3, Carry: true})
		defer nets[i].Close()
		runNet(t, nets[i])
		var err error
		if states[i], err = nets[i].Instance.State(); err != nil {
			t.Fatal(err)
		}
		if encs[i], err = states[i].MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range layers {
		for j := range layers {
			err := nets[i].Instance.SetState(states[j])
			_, uerr := l.UnmarshalState(encs[j])
			if i == j {
				if err != nil || uerr != nil {
					t.Errorf("layer %d refused its own state: %v, %v", i, err, uerr)
				}
				continue
			}
			if err == nil {
				t.Errorf("layer %d accepted the state of layer %d", i, j)
			}
			if uerr == nil {
				t.Errorf("layer %d decoded the encoding of layer %d", i, j)
			}
		}
	}
}
