package nsrnn

import (
	"fmt"
	"math"
	"sort"
)

// SurprisalOptions control Model.Surprisals.
type SurprisalOptions struct {
	// Start is the first input of every sentence (the language model's
	// sentence separator, <eos> for the Penn Treebank).
	Start int
	// Batch is the number of sentences run together (default 32).
	Batch int
	// RawLogit, instead of the surprisal, returns each token's raw output
	// score divided by ln 2 (no log-softmax, no negation). It reproduces
	// a defect of a released evaluation script and is not a surprisal:
	// see Model.Surprisals.
	RawLogit bool
	// Progress, when set, is called after each batch with the number of
	// sentences done and their total.
	Progress func(done, total int)
}

// surprisalChunk is the longest chunk of tokens that Surprisals runs as
// one graph.
var surprisalChunk = 256

// Surprisals scores sentences one by one, each from a fresh state, in
// stream mode: the inputs are Start, w_1, …, w_{n−1} and out[i][j] is the
// surprisal of token j of sentence i, −log₂ p(w_j | Start, w_1 … w_{j−1}),
// in bits. Sentences are grouped by length into batches. The model must be
// able to run as a stream (see NewStream).
//
// With RawLogit the values are y[w_j]/ln 2, the raw output score of the
// token in bits, as the evaluation script released with the paper's
// SyntaxGym results computed them. That is not a surprisal: a token the
// model finds more likely gets a larger value, so comparisons between
// single tokens come out inverted. It exists only to reproduce those
// numbers.
func (m *Model) Surprisals(sents [][]int, opt SurprisalOptions) ([][]float64, error) {
	if opt.Batch == 0 {
		opt.Batch = 32
	}
	if opt.Batch < 1 {
		return nil, fmt.Errorf("nsrnn: surprisal batch size %d < 1", opt.Batch)
	}
	if opt.Start < 0 || opt.Start >= m.cfg.InputVocab {
		return nil, fmt.Errorf("nsrnn: start symbol %d outside the input vocabulary", opt.Start)
	}
	for i, w := range sents {
		if err := m.checkSymbols(w, "sentence", i, true); err != nil {
			return nil, err
		}
	}
	order := make([]int, len(sents))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(sents[order[a]]) < len(sents[order[b]]) })
	// The batches come in increasing length, and a length's graphs are
	// not needed after it: the model keeps a few graphs at a time (a
	// batch's chunks, of two batch sizes), not one per length, each the
	// size of a chunk times the output vocabulary.
	defer m.KeepGraphs(4)()
	out := make([][]float64, len(sents))
	streams := map[int]*Stream{}
	for lo := 0; lo < len(order); lo += opt.Batch {
		idx := order[lo:min(lo+opt.Batch, len(order))]
		T := len(sents[idx[len(idx)-1]])
		if T == 0 {
			for _, i := range idx {
				out[i] = []float64{}
			}
			continue
		}
		s := streams[len(idx)]
		if s == nil {
			var err error
			if s, err = m.NewStream(len(idx)); err != nil {
				return nil, err
			}
			streams[len(idx)] = s
		}
		s.Reset()
		in := make([][]int, len(idx))
		for b, i := range idx {
			w := sents[i]
			row := make([]int, T)
			row[0] = opt.Start
			for j := 1; j < T; j++ {
				row[j] = opt.Start
				if j-1 < len(w) {
					row[j] = w[j-1]
				}
			}
			in[b] = row
		}
		// The batch runs in chunks of at most surprisalChunk tokens, the
		// state carried from one to the next, so that a long sentence
		// takes a few graphs of bounded length (the time to build a
		// graph grows faster than its length).
		scores := make([][][]float64, len(idx))
		for c0 := 0; c0 < T; c0 += surprisalChunk {
			c1 := min(c0+surprisalChunk, T)
			chunk := make([][]int, len(idx))
			for b := range in {
				chunk[b] = in[b][c0:c1]
			}
			r, err := s.run(chunk, nil, pass{logProbs: !opt.RawLogit, logits: opt.RawLogit})
			if err != nil {
				return nil, err
			}
			sc := r.lp
			for b := range scores {
				scores[b] = append(scores[b], sc[b]...)
			}
		}
		for b, i := range idx {
			w := sents[i]
			out[i] = make([]float64, len(w))
			for j, x := range w {
				v := scores[b][j][x] / math.Ln2
				if !opt.RawLogit {
					v = -v
				}
				out[i][j] = v
			}
		}
		if opt.Progress != nil {
			opt.Progress(min(lo+opt.Batch, len(order)), len(order))
		}
	}
	return out, nil
}
