package counterstack_test

import (
	"testing"

	"github.com/nsrnn/nsrnn/examples/counterstack"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

// TestConformance runs the suite that every stack passes on the counter
// stack: initialization, gradients against finite differences, trailing
// steps, carried state and errors.
func TestConformance(t *testing.T) {
	stackstest.Test(t, "counter", func(hidden int) (stacks.Layer, error) {
		return counterstack.New("counter", hidden, 2), nil
	})
}
