package nskernel

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzUnmarshalState decodes arbitrary bytes as a carried state (a
// checkpoint's, through the stacks' carried states). They are refused with
// an error, or give a state that encodes again (in the current format: the
// same bytes, unless they were of the former VRNS kernel) and decodes to
// the same encoding, and that a tape of its configuration and batch begins
// from and steps on, never panicking. The seeds are a state of the former
// VRNS kernel (state_compat_test.go) and the states of small tapes of
// every variant.
func FuzzUnmarshalState(f *testing.F) {
	// The former VRNS kernel's state; not nskernel-state.bin, of the format
	// of the tapes' states below and so large that the fuzzer would spend
	// its time minimizing it.
	b, err := os.ReadFile(filepath.Join("testdata", "vrnskernel-state.bin"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, c := range []Config{
		{States: 1, Symbols: 2, Window: 2},
		{States: 2, Symbols: 2, Window: 3, Fixed: true},
		{States: 2, Symbols: 1, Window: 3, StateReading: true},
		{States: 1, Symbols: 2, Window: 3, Vector: 2},
		{States: 2, Symbols: 1, Window: 2, Vector: 1, Fixed: true},
	} {
		const batch = 2
		tp := NewTape(c, batch, 4)
		if c.Vector > 0 {
			if err := tp.BeginVector(nil, make([]float64, c.Vector)); err != nil {
				f.Fatal(err)
			}
		} else if err := tp.Begin(nil); err != nil {
			f.Fatal(err)
		}
		for s := range 4 {
			fuzzStep(tp, s)
			b, err := tp.State().MarshalBinary()
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := UnmarshalState(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		b, err := st.MarshalBinary()
		if err != nil {
			t.Fatalf("a decoded state does not encode: %v", err)
		}
		if bytes.HasPrefix(data, []byte(stateMagic)) && !bytes.Equal(b, data) {
			t.Fatalf("decoded and encoded again: %d bytes, were %d", len(b), len(data))
		}
		st2, err := UnmarshalState(b)
		if err != nil {
			t.Fatalf("a decoded state's encoding does not decode: %v", err)
		}
		if b2, _ := st2.MarshalBinary(); !bytes.Equal(b2, b) {
			t.Fatal("the encoding of a decoded state changed when decoded again")
		}
		c := st.Config()
		if c.States*c.Symbols > 8 || c.Window > 8 || c.Vector > 8 || st.Batch() > 4 {
			return // keep each input's run small
		}
		tp := NewTape(c, st.Batch(), 2)
		if c.Vector > 0 {
			err = tp.BeginVector(st, nil)
		} else {
			err = tp.Begin(st)
		}
		if err != nil {
			t.Fatalf("a tape of the state's configuration does not begin from it: %v", err)
		}
		for s := range 2 {
			fuzzStep(tp, s)
		}
		if _, err := tp.State().MarshalBinary(); err != nil {
			t.Fatalf("the state after the steps does not encode: %v", err)
		}
	})
}

// fuzzStep takes step s of tp with fixed normalized log-weights (and
// vectors, for a vector stack).
func fuzzStep(tp *Tape, s int) {
	c, batch := tp.Config(), tp.Batch()
	l := make([]float64, batch*c.NumActions())
	for i := range l {
		l[i] = 2 * math.Sin(float64(1+7*s+13*i))
	}
	LogSoftmaxRows(l, l, c, batch)
	r := make([]float64, batch*c.ReadingSize())
	if c.Vector > 0 {
		v := make([]float64, batch*c.Vector)
		for i := range v {
			v[i] = math.Cos(float64(3 + 5*s + 11*i))
		}
		tp.StepVector(l, v, r)
		return
	}
	tp.Step(l, r)
}
