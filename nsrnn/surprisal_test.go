package nsrnn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSurprisalsMatchStepByStep: batched surprisals equal those of running
// each sentence alone, token by token, with Next.
func TestSurprisalsMatchStepByStep(t *testing.T) {
	cfg := streamConfigs()["rns-D3"]
	m, _ := New(cfg, 2)
	rng := rand.New(rand.NewPCG(4, 5))
	var sents [][]int
	for i := 0; i < 11; i++ {
		w := make([]int, rng.IntN(7))
		for j := range w {
			w[j] = rng.IntN(cfg.InputVocab)
		}
		sents = append(sents, w)
	}
	got, err := m.Surprisals(sents, SurprisalOptions{Start: 4, Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := m.NewStream(1)
	for i, w := range sents {
		if len(got[i]) != len(w) {
			t.Fatalf("sentence %d: %d surprisals for %d tokens", i, len(got[i]), len(w))
		}
		s.Reset()
		prev := 4
		for j, x := range w {
			lp, err := s.Next([]int{prev})
			if err != nil {
				t.Fatal(err)
			}
			want := -lp[0][x] / math.Ln2
			if math.Abs(got[i][j]-want) > 1e-9*math.Max(1, want) {
				t.Errorf("sentence %d token %d: %v bits, step by step %v", i, j, got[i][j], want)
			}
			prev = x
		}
	}
}

// TestSurprisalsChunked: sentences longer than a chunk (run in chunks of
// 3 tokens, the state carried) get the surprisals of running them whole,
// to rounding, in both conventions, for every kind that streams.
func TestSurprisalsChunked(t *testing.T) {
	for name, cfg := range streamConfigs() {
		t.Run(name, func(t *testing.T) { testSurprisalsChunked(t, cfg) })
	}
}

func testSurprisalsChunked(t *testing.T, cfg Config) {
	m, err := New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 7))
	var sents [][]int
	for i := 0; i < 9; i++ {
		w := make([]int, 1+rng.IntN(12))
		for j := range w {
			w[j] = rng.IntN(cfg.InputVocab)
		}
		sents = append(sents, w)
	}
	orig := surprisalChunk
	defer func() { surprisalChunk = orig }()
	for _, raw := range []bool{false, true} {
		opt := SurprisalOptions{Start: 0, Batch: 4, RawLogit: raw}
		surprisalChunk = orig
		whole, err := m.Surprisals(sents, opt)
		if err != nil {
			t.Fatal(err)
		}
		surprisalChunk = 3
		chunked, err := m.Surprisals(sents, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i := range sents {
			if len(chunked[i]) != len(whole[i]) {
				t.Fatalf("raw %v, sentence %d: %d values, want %d", raw, i, len(chunked[i]), len(whole[i]))
			}
			for j := range whole[i] {
				if d := math.Abs(chunked[i][j] - whole[i][j]); d > 1e-12*math.Max(1, math.Abs(whole[i][j])) {
					t.Errorf("raw %v, sentence %d token %d: chunked %v, whole %v", raw, i, j, chunked[i][j], whole[i][j])
				}
			}
		}
	}
}

// TestSurprisalsClosedForm: with every weight zero but the output bias b,
// p(w) = softmax(b)[w] whatever the context, so the surprisal is
// −log₂ softmax(b)[w] and the released script's value is b[w]/ln 2; for
// two single-token continuations the two conventions disagree in sign.
func TestSurprisalsClosedForm(t *testing.T) {
	cfg := Config{Kind: LSTM, InputVocab: 4, OutputVocab: 4, Embedding: 3, Hidden: 3, InitRange: 0.05}
	m, _ := New(cfg, 1)
	for _, p := range m.Params() {
		clear(p.Data())
	}
	b := []float64{0.5, 2, -1, 0}
	copy(m.bhy.Data(), b)
	z := 0.0
	for _, v := range b {
		z += math.Exp(v)
	}
	sents := [][]int{{1}, {2}, {1, 2, 0}}
	sur, err := m.Surprisals(sents, SurprisalOptions{Start: 3})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := m.Surprisals(sents, SurprisalOptions{Start: 3, RawLogit: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range sents {
		for j, x := range w {
			want := -(b[x] - math.Log(z)) / math.Ln2
			if math.Abs(sur[i][j]-want) > 1e-12 {
				t.Errorf("surprisal of %d: %v, want %v", x, sur[i][j], want)
			}
			if math.Abs(raw[i][j]-b[x]/math.Ln2) > 1e-12 {
				t.Errorf("raw logit of %d: %v, want %v", x, raw[i][j], b[x]/math.Ln2)
			}
		}
	}
	// Token 1 is likelier than token 2: lower surprisal, higher raw value.
	if !(sur[0][0] < sur[1][0]) || !(raw[0][0] > raw[1][0]) {
		t.Errorf("surprisals %v vs %v, raw %v vs %v: the released convention should invert the comparison", sur[0][0], sur[1][0], raw[0][0], raw[1][0])
	}
}

// TestSurprisalsBoundGraphs: scoring sentences of many lengths keeps a few
// graphs at a time, not one per length (a graph holds a chunk times the
// output vocabulary: gigabytes over SyntaxGym's lengths at the Penn
// Treebank's), restores Model.MaxGraphs, and gives the surprisals of
// running each sentence token by token.
func TestSurprisalsBoundGraphs(t *testing.T) {
	cfg := streamConfigs()["rns-D3"]
	rng := rand.New(rand.NewPCG(6, 7))
	var sents [][]int
	for n := 1; n <= 30; n++ {
		for range 3 {
			w := make([]int, n)
			for j := range w {
				w[j] = rng.IntN(cfg.InputVocab)
			}
			sents = append(sents, w)
		}
	}
	m, _ := New(cfg, 2)
	got, err := m.Surprisals(sents, SurprisalOptions{Start: 4, Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	if m.Graphs() > 4 || m.MaxGraphs != 0 {
		t.Errorf("%d graphs kept after 30 lengths (want at most 4), MaxGraphs %d (want 0 restored)", m.Graphs(), m.MaxGraphs)
	}
	s, _ := m.NewStream(1)
	for i := 0; i < len(sents); i += 7 {
		s.Reset()
		prev := 4
		for j, x := range sents[i] {
			lp, err := s.Next([]int{prev})
			if err != nil {
				t.Fatal(err)
			}
			if want := -lp[0][x] / math.Ln2; math.Abs(got[i][j]-want) > 1e-9*math.Max(1, want) {
				t.Errorf("sentence %d token %d: %v bits, token by token %v", i, j, got[i][j], want)
			}
			prev = x
		}
	}
}
