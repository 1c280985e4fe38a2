package nsrnn

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// TestSampleLogProbsAgreeWithTheGraph: the runner behind Sample computes
// the model exactly as the graphs do: a sampled complete string's
// log-probability equals LogProb (sentence mode) for every kind, and the
// stream mode's equals the stream's.
func TestSampleLogProbsAgreeWithTheGraph(t *testing.T) {
	for _, k := range AllKinds() {
		cfg := tinyConfig(k.Name, 3, 4)
		cfg.InitRange = 0.8
		m := newTiny(t, cfg, 5)
		gs, err := m.Sample(30, SampleOptions{Seed: 1, MaxLength: 12, Batch: 7})
		if err != nil {
			t.Fatal(err)
		}
		complete := 0
		for _, g := range gs {
			if !g.Complete {
				if len(g.Symbols) != 12 {
					t.Errorf("%s: unfinished string of length %d", k.Name, len(g.Symbols))
				}
				continue
			}
			complete++
			lp, err := m.LogProb(g.Symbols)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(lp-g.LogProb) > 1e-9*math.Max(1, -lp) {
				t.Errorf("%s: sampled %v with log-probability %v, LogProb gives %v", k.Name, g.Symbols, g.LogProb, lp)
			}
		}
		if complete < 5 {
			t.Errorf("%s: only %d of 30 strings complete", k.Name, complete)
		}
		// The same strings from the same seed whatever the batch size;
		// their log-probabilities agree to rounding (an optimized BLAS
		// rounds a product differently for other matrix shapes).
		again, _ := m.Sample(30, SampleOptions{Seed: 1, MaxLength: 12, Batch: 4})
		for i := range gs {
			if !slices.Equal(again[i].Symbols, gs[i].Symbols) || math.Abs(again[i].LogProb-gs[i].LogProb) > 1e-12*math.Max(1, -gs[i].LogProb) {
				t.Errorf("%s: the same seed gave different strings with another batch size: %v (%v) and %v (%v)", k.Name, gs[i].Symbols, gs[i].LogProb, again[i].Symbols, again[i].LogProb)
				break
			}
		}
	}
}

// TestSampleStreamMode checks stream-mode sampling against the stream's
// log-probabilities, and the options: prompt, top-k 1 (greedy) and errors.
func TestSampleStreamMode(t *testing.T) {
	cfg := streamConfigs()["rns-D3"]
	m, _ := New(cfg, 2)
	gs, err := m.Sample(5, SampleOptions{Seed: 3, MaxLength: 20, Stream: true, Start: 4, End: 0, Prompt: []int{2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := m.NewStream(1)
	for _, g := range gs {
		if len(g.Symbols) < 2 || g.Symbols[0] != 2 || g.Symbols[1] != 3 {
			t.Fatalf("string %v does not start with the prompt", g.Symbols)
		}
		s.Reset()
		prev, lp := 4, 0.0
		seq := g.Symbols
		if g.Complete {
			seq = append(append([]int(nil), seq...), 0)
		}
		for j, x := range seq {
			next, err := s.Next([]int{prev})
			if err != nil {
				t.Fatal(err)
			}
			if j >= 2 {
				lp += next[0][x]
			}
			prev = x
		}
		if math.Abs(lp-g.LogProb) > 1e-9*math.Max(1, -lp) {
			t.Errorf("%v: log-probability %v, stream gives %v", g.Symbols, g.LogProb, lp)
		}
	}
	// Greedy sampling is deterministic whatever the seed.
	a, _ := m.Sample(3, SampleOptions{Seed: 1, MaxLength: 8, TopK: 1, Stream: true, Start: 4, End: 0})
	b, _ := m.Sample(3, SampleOptions{Seed: 2, MaxLength: 8, TopK: 1, Stream: true, Start: 4, End: 0})
	for i := range a {
		if len(a[i].Symbols) != len(b[i].Symbols) || a[i].LogProb != b[i].LogProb {
			t.Error("top-k 1 depends on the seed")
		}
	}
	for _, opt := range []SampleOptions{
		{MaxLength: 0},
		{MaxLength: 5, Temperature: -1},
		{MaxLength: 5, TopK: -2},
		{MaxLength: 1, Prompt: []int{1, 2}},
		{MaxLength: 5, Prompt: []int{9}},
		{MaxLength: 5, Stream: true, Start: 17},
	} {
		if _, err := m.Sample(2, opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
	// With an output symbol that is not an input symbol (a sentence
	// model's EOS), stream mode must end on it: another end would feed it
	// back as an input.
	sm, err := New(Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sm.Sample(20, SampleOptions{MaxLength: 10, Stream: true, Start: 0, End: 0, Batch: 1}); err == nil {
		t.Error("stream mode ending on 0 with output symbol 3 not an input: no error")
	}
	if _, err := sm.Sample(20, SampleOptions{MaxLength: 10, Stream: true, Start: 0, End: 3}); err != nil {
		t.Errorf("stream mode ending on 3: %v", err)
	}
}

// TestSampleEach checks that SampleEach passes Sample's strings in order
// (string i is Sample's string i, whatever the count or the batch), stops
// when yield returns false, draws without a bound for a negative count,
// and refuses bad options before calling yield.
func TestSampleEach(t *testing.T) {
	m := newTiny(t, tinyConfig(RNS, 3, 4), 5)
	opt := SampleOptions{Seed: 4, MaxLength: 12, Batch: 3}
	want, err := m.Sample(10, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		count int
		stop  int // yield returns false at this call (0-based); -1: never
		calls int
	}{
		{"all", 10, -1, 10},
		{"stopped in a batch", 10, 4, 5},
		{"unbounded, stopped", -1, 9, 10},
		{"none", 0, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []Generated
			err := m.SampleEach(c.count, opt, func(i int, g Generated) bool {
				if i != len(got) {
					t.Fatalf("call %d has index %d", len(got), i)
				}
				got = append(got, g)
				return i != c.stop
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != c.calls {
				t.Fatalf("%d calls, want %d", len(got), c.calls)
			}
			for i, g := range got {
				// Log-probabilities to rounding: the last batch's size
				// differs (see above).
				if !slices.Equal(g.Symbols, want[i].Symbols) || g.Complete != want[i].Complete || math.Abs(g.LogProb-want[i].LogProb) > 1e-12*math.Max(1, -g.LogProb) {
					t.Fatalf("string %d is %v (%v), Sample's is %v (%v)", i, g.Symbols, g.LogProb, want[i].Symbols, want[i].LogProb)
				}
			}
		})
	}
	// A count whose strings Sample refuses to hold is drawn a batch at a
	// time.
	n := 0
	if err := m.SampleEach(1<<40, opt, func(int, Generated) bool { n++; return n < 7 }); err != nil || n != 7 {
		t.Errorf("SampleEach(2^40) stopped after 7: %d calls, %v", n, err)
	}
	if _, err := m.Sample(1<<40, opt); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Sample(2^40): %v, want ErrTooLarge", err)
	}
	if err := m.SampleEach(3, SampleOptions{MaxLength: 0}, func(int, Generated) bool { t.Error("yield called"); return true }); err == nil {
		t.Error("MaxLength 0: no error")
	}
	// A stack whose dynamic program would not fit the memory limit is
	// refused with ErrTooLarge too, by Sample and SampleEach.
	wide, err := New(Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 4, States: 2, Symbols: 2, Window: math.MaxInt}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wide.Sample(1, SampleOptions{MaxLength: 3}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Sample with window MaxInt: %v, want ErrTooLarge", err)
	}
	if err := wide.SampleEach(1, SampleOptions{MaxLength: 3}, func(int, Generated) bool { return true }); !errors.Is(err, ErrTooLarge) {
		t.Errorf("SampleEach with window MaxInt: %v, want ErrTooLarge", err)
	}
}

// TestSampleRefusesNonFiniteModel: a model with a NaN or infinite
// parameter (a diverged run) is an error of Sample and SampleEach, in
// both modes, not strings of NaN log-probability; and scores that are NaN
// or +Inf are refused by the sampling loop itself.
func TestSampleRefusesNonFiniteModel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		param int // index into Params; -1: the last (the output bias)
		value float64
	}{
		{"NaN output bias", -1, math.NaN()},
		{"NaN first weight", 0, math.NaN()},
		{"+Inf weight", 0, math.Inf(1)},
		{"-Inf output bias", -1, math.Inf(-1)},
	} {
		for _, kind := range []string{LSTM, RNS} {
			m := newTiny(t, tinyConfig(kind, 3, 4), 1)
			ps := m.Params()
			p := ps[(tc.param+len(ps))%len(ps)]
			p.Data()[0] = tc.value
			for mode, opt := range map[string]SampleOptions{
				"sentence": {Seed: 1, MaxLength: 5},
				"stream":   {Seed: 1, MaxLength: 5, Stream: true, Start: 0, End: 3},
			} {
				if kind == RNS && mode == "stream" {
					continue
				}
				gs, err := m.Sample(3, opt)
				if err == nil {
					t.Errorf("%s, %s, %s mode: no error, strings %+v", tc.name, kind, mode, gs)
				}
				err = m.SampleEach(3, opt, func(int, Generated) bool { return true })
				if err == nil {
					t.Errorf("%s, %s, %s mode: SampleEach: no error", tc.name, kind, mode)
				}
			}
		}
	}
	for _, tc := range []struct {
		row []float64
		ok  bool
	}{
		{[]float64{0, 1, -2}, true},
		{[]float64{0, math.Inf(-1), 1}, true},
		{[]float64{0, math.NaN(), 1}, false},
		{[]float64{math.Inf(1), 0}, false},
	} {
		if err := checkScores(tc.row); (err == nil) != tc.ok {
			t.Errorf("checkScores(%v): error %v, want ok %v", tc.row, err, tc.ok)
		}
	}
}
