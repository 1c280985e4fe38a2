package counterstack_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/examples/counterstack"
	"github.com/nsrnn/nsrnn/nsrnn"
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

// A kind registered from outside has no GPU implementation: asking for a
// GPU is refused at once (whether or not one is there) with an error
// naming the kind, and the model keeps working on the CPU.
func TestNoGPU(t *testing.T) {
	m, err := nsrnn.New(nsrnn.Config{Kind: counterstack.Kind, InputVocab: 3, OutputVocab: 4, Hidden: 5, Options: nsrnn.MakeOptions(map[string]int{"counters": 2})}, 1)
	if err != nil {
		t.Fatal(err)
	}
	err = m.SetDevice(nsrnn.CUDA(0))
	if !errors.Is(err, nsrnn.ErrNoDeviceKernel) || !strings.Contains(err.Error(), counterstack.Kind) {
		t.Fatalf("SetDevice(cuda:0): %v, want an error wrapping ErrNoDeviceKernel that names the kind", err)
	}
	if m.Device() != nsrnn.CPU {
		t.Fatalf("the model moved to %v", m.Device())
	}
	if _, err := m.Loss([][]int{{0, 1, 2}}); err != nil {
		t.Fatal(err)
	}
}
