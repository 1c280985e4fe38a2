package protocol

import (
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// TestCheckSizes: CheckSizes applies the memory rules to the largest part
// of each batch as Gradient runs it. Two strings of 2,000 symbols take
// about 8.7 GiB in the RNS stack's unlimited dynamic program (4.4 GiB
// each, over the 8 GiB of stacks.MaxTapeBytes together): refused as one
// part, accepted in two; short batches pass; the error names the split
// and the length.
func TestCheckSizes(t *testing.T) {
	m, err := nsrnn.New(nsrnn.Config{Kind: nsrnn.RNS, InputVocab: 2, OutputVocab: 3, Hidden: 4, States: 2, Symbols: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	long := make([]int, 2000)
	d := &RunData{
		Train: []nsrnn.Batch{{{0, 1}, {1, 0}}},
		Valid: []nsrnn.Batch{{{0}}, {long, long}},
	}
	m.Workers = 1
	if err := d.CheckSizes(m); err == nil || !strings.Contains(err.Error(), "validation strings of length 2000") {
		t.Errorf("one part: %v, want the validation strings of length 2000 refused", err)
	}
	m.Workers = 2
	if err := d.CheckSizes(m); err != nil {
		t.Errorf("two parts: %v, want them accepted", err)
	}
	d.Train = append(d.Train, nsrnn.Batch{make([]int, 3000)})
	if err := d.CheckSizes(m); err == nil || !strings.Contains(err.Error(), "training strings of length 3000") {
		t.Errorf("a string of 3000: %v, want it refused", err)
	}
}
