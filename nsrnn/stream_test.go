package nsrnn

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/stacks"
)

// streamConfigs are small models of every kind that can run as a stream.
func streamConfigs() map[string]Config {
	base := Config{InputVocab: 5, OutputVocab: 5, Embedding: 4, Hidden: 6, InitRange: 0.5}
	with := func(f func(*Config)) Config { c := base; f(&c); return c }
	return map[string]Config{
		"lstm":       with(func(c *Config) { c.Kind = LSTM }),
		"lstm-2":     with(func(c *Config) { c.Kind, c.Layers = LSTM, 2 }),
		"jm-depth3":  with(func(c *Config) { c.Kind, c.StackEmbedding, c.DepthLimit = JM, 3, 3 }),
		"jm-hidden":  with(func(c *Config) { c.Kind, c.PushHiddenState, c.DepthLimit = JM, true, 4 }),
		"rns-D35":    with(func(c *Config) { c.Kind, c.States, c.Symbols, c.Window = RNS, 2, 2, 35 }),
		"rns-D3":     with(func(c *Config) { c.Kind, c.States, c.Symbols, c.Window = RNS, 2, 3, 3 }),
		"ns-D3":      with(func(c *Config) { c.Kind, c.States, c.Symbols, c.Window = NS, 2, 2, 3 }),
		"ns-D35":     with(func(c *Config) { c.Kind, c.States, c.Symbols, c.Window = NS, 1, 2, 35 }),
		"rns-D3-fix": with(func(c *Config) { c.Kind, c.States, c.Symbols, c.Window, c.Bottom = RNS, 1, 3, 3, stacks.Fixed }),
		"vrns-D3":    with(func(c *Config) { c.Kind, c.States, c.Symbols, c.StackEmbedding, c.Window = VRNS, 2, 2, 2, 3 }),
	}
}

// randomStream returns B rows of n+1 tokens: inputs are the first n,
// targets the last n.
func randomStream(rng *rand.Rand, batch, n, vocab int) (in, tgt [][]int) {
	for b := 0; b < batch; b++ {
		row := make([]int, n+1)
		for i := range row {
			row[i] = rng.IntN(vocab)
		}
		in = append(in, row[:n])
		tgt = append(tgt, append([]int(nil), row[1:]...))
	}
	return in, tgt
}

func cols(rows [][]int, from, to int) [][]int {
	out := make([][]int, len(rows))
	for i, r := range rows {
		out[i] = r[from:to]
	}
	return out
}

// TestStreamChunkedEqualsWhole: the loss of a 300-token stream cut into
// chunks of several sizes equals its loss as one chunk, and Next step by
// step gives the same log-probabilities.
func TestStreamChunkedEqualsWhole(t *testing.T) {
	const batch, n = 2, 300
	for name, cfg := range streamConfigs() {
		t.Run(name, func(t *testing.T) {
			m, err := New(cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			in, tgt := randomStream(rng, batch, n, cfg.InputVocab)
			// A few positions without a target.
			tgt[1][7], tgt[0][200] = NoTarget, NoTarget
			targets := 2*n - 2
			s, err := m.NewStream(batch)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := s.Loss(in, tgt)
			if err != nil {
				t.Fatal(err)
			}
			wholeState, err := s.MarshalState()
			if err != nil {
				t.Fatal(err)
			}
			s.Reset()
			lp, err := s.LogProbs(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, sizes := range [][]int{{1, 299}, {35, 35, 35, 35, 35, 35, 35, 35, 20}, {7, 100, 3, 190}, {150, 150}} {
				s.Reset()
				total, at := 0.0, 0
				for _, k := range sizes {
					loss, err := s.Loss(cols(in, at, at+k), cols(tgt, at, at+k))
					if err != nil {
						t.Fatal(err)
					}
					cnt := 0
					for b := range tgt {
						for _, y := range tgt[b][at : at+k] {
							if y != NoTarget {
								cnt++
							}
						}
					}
					total += loss * float64(cnt)
					at += k
				}
				got := total / float64(targets)
				if math.Abs(got-whole) > 1e-9*math.Abs(whole) {
					t.Errorf("chunks %v: loss %.15g, whole %.15g", sizes, got, whole)
				}
				st, err := s.MarshalState()
				if err != nil {
					t.Fatal(err)
				}
				s2, _ := m.NewStream(batch)
				if err := s2.UnmarshalState(st); err != nil {
					t.Fatal(err)
				}
				if len(st) != len(wholeState) {
					t.Errorf("chunks %v: final state encodes to %d bytes, whole to %d", sizes, len(st), len(wholeState))
				}
			}
			// Next, token by token, for the first 60 tokens.
			s.Reset()
			for i := 0; i < 60; i++ {
				tok := []int{in[0][i], in[1][i]}
				next, err := s.Next(tok)
				if err != nil {
					t.Fatal(err)
				}
				for b := range next {
					for v := range next[b] {
						if d := math.Abs(next[b][v] - lp[b][i][v]); d > 1e-9*math.Max(1, math.Abs(lp[b][i][v])) {
							t.Fatalf("Next at %d stream %d symbol %d: %.15g, chunk gives %.15g", i, b, v, next[b][v], lp[b][i][v])
						}
					}
				}
			}
		})
	}
}

// TestStreamResumeFromEncodedState: a state encoded in the middle of a
// stream and decoded into a fresh stream continues bit for bit.
func TestStreamResumeFromEncodedState(t *testing.T) {
	for name, cfg := range streamConfigs() {
		m, err := New(cfg, 4)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		in, tgt := randomStream(rng, 3, 40, cfg.InputVocab)
		s, _ := m.NewStream(3)
		if _, err := s.Loss(cols(in, 0, 17), cols(tgt, 0, 17)); err != nil {
			t.Fatal(err)
		}
		enc, err := s.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.Loss(cols(in, 17, 40), cols(tgt, 17, 40))
		if err != nil {
			t.Fatal(err)
		}
		m2, _ := New(cfg, 4)
		s2, _ := m2.NewStream(3)
		if err := s2.UnmarshalState(enc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := s2.Loss(cols(in, 17, 40), cols(tgt, 17, 40))
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: resumed loss %.17g, uninterrupted %.17g", name, got, want)
		}
		if err := s2.UnmarshalState(enc[:len(enc)-3]); err == nil {
			t.Errorf("%s: a truncated state was accepted", name)
		}
		// The encoding of before the configuration's trailer (the first
		// magic, no trailer), as checkpoints of runs in flight hold it,
		// still resumes the same.
		n := binary.LittleEndian.Uint64(enc[len(enc)-8:])
		old := append([]byte(stateMagic1), enc[len(stateMagic):len(enc)-8-int(n)]...)
		s3, _ := m2.NewStream(3)
		if err := s3.UnmarshalState(old); err != nil {
			t.Fatalf("%s: the first encoding: %v", name, err)
		}
		if got, _ := s3.Loss(cols(in, 17, 40), cols(tgt, 17, 40)); got != want {
			t.Errorf("%s: resumed from the first encoding: loss %.17g, uninterrupted %.17g", name, got, want)
		}
	}
	// A state of another kind of the same sizes (RNS against NS+S: the
	// same dynamic program) is refused, naming both.
	rns, _ := New(Config{Kind: RNS, InputVocab: 4, OutputVocab: 4, Hidden: 3, States: 2, Symbols: 2, Window: 3}, 1)
	nss, _ := New(Config{Kind: NSS, InputVocab: 4, OutputVocab: 4, Hidden: 3, States: 2, Symbols: 2, Window: 3}, 1)
	a, _ := rns.NewStream(2)
	if _, err := a.Loss([][]int{{0, 1}, {2, 3}}, [][]int{{1, 2}, {3, 0}}); err != nil {
		t.Fatal(err)
	}
	enc, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := nss.NewStream(2)
	if err := b.UnmarshalState(enc); err == nil || !strings.Contains(err.Error(), "rns model") || !strings.Contains(err.Error(), "ns+s model") {
		t.Errorf("an RNS state given to an NS+S stream: %v; want a refusal naming both", err)
	}
}

// TestStreamGradientsFromCarriedState checks the gradient of a chunk that
// starts from a carried state against central finite differences.
func TestStreamGradientsFromCarriedState(t *testing.T) {
	for name, cfg := range streamConfigs() {
		t.Run(name, func(t *testing.T) {
			m, err := New(cfg, 7)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(8, 9))
			in, tgt := randomStream(rng, 2, 12, cfg.InputVocab)
			tgt[0][9] = NoTarget
			s, _ := m.NewStream(2)
			if _, err := s.Loss(cols(in, 0, 5), cols(tgt, 0, 5)); err != nil {
				t.Fatal(err)
			}
			start := s.State()
			c2in, c2tgt := cols(in, 5, 12), cols(tgt, 5, 12)
			_, g, err := s.Gradient(c2in, c2tgt)
			if err != nil {
				t.Fatal(err)
			}
			analytic := make([][]float64, len(g))
			for i := range g {
				analytic[i] = append([]float64(nil), g[i]...)
			}
			loss := func() float64 {
				if err := s.SetState(start); err != nil {
					t.Fatal(err)
				}
				l, err := s.Loss(c2in, c2tgt)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			checkFD(t, m, analytic, loss, 12)
		})
	}
}

// checkFD compares analytic gradients with central differences of loss
// for up to per elements of each parameter.
func checkFD(t *testing.T, m *Model, analytic [][]float64, loss func() float64, per int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	const h = 1e-5
	for pi, p := range m.Params() {
		data := p.Data()
		idx := rng.Perm(len(data))
		if len(idx) > per {
			idx = idx[:per]
		}
		for _, j := range idx {
			orig := data[j]
			data[j] = orig + h
			fp := loss()
			data[j] = orig - h
			fm := loss()
			data[j] = orig
			num := (fp - fm) / (2 * h)
			a := analytic[pi][j]
			if e := math.Abs(a-num) / math.Max(1e-4, math.Abs(a)+math.Abs(num)); e > 1e-5 || math.IsNaN(e) {
				t.Errorf("%s[%d]: analytic %.10g numeric %.10g", p.Name, j, a, num)
			}
		}
	}
}

// TestStreamRefusesUncarriable: models whose stack cannot carry its state
// have no streams, with an error and no panic.
func TestStreamRefusesUncarriable(t *testing.T) {
	for _, cfg := range []Config{
		{Kind: RNS, InputVocab: 3, OutputVocab: 3, Hidden: 4, States: 2, Symbols: 2},
		{Kind: JM, InputVocab: 3, OutputVocab: 3, Hidden: 4, StackEmbedding: 2},
		{Kind: Gref, InputVocab: 3, OutputVocab: 3, Hidden: 4, StackEmbedding: 2},
	} {
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.NewStream(2)
		if err == nil || !errors.Is(err, stacks.ErrNoCarry) {
			t.Errorf("%s: NewStream gave %v, want an error wrapping ErrNoCarry", cfg.Kind, err)
		}
	}
}

// TestStreamBadInput: malformed chunks are errors.
func TestStreamBadInput(t *testing.T) {
	cfg := streamConfigs()["rns-D3"]
	m, _ := New(cfg, 1)
	s, _ := m.NewStream(2)
	for i, c := range []struct{ in, tgt [][]int }{
		{[][]int{{1}}, [][]int{{1}}},
		{[][]int{{1, 2}, {1}}, [][]int{{1, 2}, {1}}},
		{[][]int{{1, 9}, {1, 2}}, [][]int{{1, 2}, {1, 2}}},
		{[][]int{{1, 2}, {1, 2}}, [][]int{{1, 2}, {1, -2}}},
		{[][]int{{}, {}}, [][]int{{}, {}}},
	} {
		if _, err := s.Loss(c.in, c.tgt); err == nil {
			t.Errorf("case %d: no error", i)
		} else if !strings.HasPrefix(err.Error(), "nsrnn: ") {
			t.Errorf("case %d: error %q lacks the package prefix", i, err)
		}
	}
	if _, err := m.NewStream(0); err == nil {
		t.Error("NewStream(0): no error")
	}
}

// TestHugeBatchRefused: a batch or length whose graph would not fit in
// memory is an error, not a crash.
func TestHugeBatchRefused(t *testing.T) {
	m, _ := New(Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 4, States: 3, Symbols: 3}, 1)
	w := make([]int, 2000)
	batch := make([][]int, 300)
	for i := range batch {
		batch[i] = w
	}
	if _, err := m.Loss(batch); err == nil || !strings.Contains(err.Error(), "GiB") {
		t.Errorf("a huge unlimited stack: %v", err)
	}
	big, _ := New(Config{Kind: LSTM, InputVocab: 3, OutputVocab: 1000000, Hidden: 4}, 1)
	// NewStream refuses the streams, or the chunk's graph is refused.
	s, err := big.NewStream(2000)
	if err == nil {
		in := make([][]int, 2000)
		for i := range in {
			in[i] = make([]int, 1000)
		}
		_, err = s.Loss(in, in)
	}
	if err == nil || !strings.Contains(err.Error(), "GiB") {
		t.Errorf("a huge output layer: %v", err)
	}
}

// TestStreamRecyclesStates: a stream writes its stack's final state into
// the memory of the state it left two chunks before when no one else holds
// that one; the losses are those of a stream that recycles nothing (every
// state handed out), bit for bit, and a state handed out stays as it was.
func TestStreamRecyclesStates(t *testing.T) {
	const batch, chunk = 2, 9
	for _, name := range []string{"rns-D3", "ns-D35", "rns-D3-fix"} {
		t.Run(name, func(t *testing.T) {
			cfg := streamConfigs()[name]
			// Two models of the same seed, so that the streams do not
			// share their stack layer's recycled state.
			m1, err := New(cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := New(cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, 6))
			in, tgt := randomStream(rng, batch, 6*chunk, cfg.InputVocab)
			recycling, keeping := mustStream(t, m1, batch), mustStream(t, m2, batch)
			var held *State
			var heldBytes []byte
			var second stacks.State
			for k := 0; k < 6; k++ {
				x, y := cols(in, k*chunk, (k+1)*chunk), cols(tgt, k*chunk, (k+1)*chunk)
				l1, err := recycling.Loss(x, y)
				if err != nil {
					t.Fatal(err)
				}
				l2, err := keeping.Loss(x, y)
				if err != nil {
					t.Fatal(err)
				}
				keeping.State() // handed out: never recycled
				if l1 != l2 {
					t.Fatalf("chunk %d: loss %.17g recycling, %.17g not", k+1, l1, l2)
				}
				switch k {
				case 0:
					held = recycling.State()
					if heldBytes, err = held.stack.MarshalBinary(); err != nil {
						t.Fatal(err)
					}
				case 1:
					second = recycling.state.stack
				case 3:
					// Chunk 3 recycled the state of chunk 2, and chunk 4
					// wrote its final state into it.
					if recycling.state.stack != second {
						t.Error("the stream did not reuse the memory of a spent state")
					}
				}
			}
			b, err := held.stack.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != string(heldBytes) {
				t.Error("a state handed out by State changed as the stream went on")
			}
		})
	}
}

func mustStream(t *testing.T, m *Model, batch int) *Stream {
	t.Helper()
	s, err := m.NewStream(batch)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
