package nsrnn_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// exampleConfig is an RNS-RNN sized for the marked reversal task: input
// symbols 0, 1 and the marker # (2); output symbols the same plus EOS (3).
func exampleConfig() nsrnn.Config {
	return nsrnn.Config{
		Kind:       nsrnn.RNS,
		InputVocab: 3, OutputVocab: 4,
		Hidden: 20,
		States: 2, Symbols: 3,
	}
}

// Build an RNS-RNN from a seed and score a string of the marked reversal
// language, w # reverse(w).
func Example() {
	m, err := nsrnn.New(exampleConfig(), 1)
	if err != nil {
		log.Fatal(err)
	}
	// LSTM 4·20·(3+6+20) + 2·4·20 (input one-hot and a reading of
	// |Q||Γ| = 6, PyTorch's two biases), actions 84·(20+1), output 4·(20+1).
	fmt.Println("parameters:", m.NumParams())
	w := []int{0, 1, 1, 2, 1, 1, 0} // 011#110
	lp, err := m.LogProb(w)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("log p(011#110 EOS) = %.4f\n", lp)
	// The model makes n+1 predictions, each a distribution over the
	// output vocabulary.
	lps, err := m.LogProbs([][]int{w})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("predictions:", len(lps[0]), "of", len(lps[0][0]), "symbols")
	// Output:
	// parameters: 4328
	// log p(011#110 EOS) = -11.2680
	// predictions: 8 of 4 symbols
}

// One training step: the gradient of a batch's loss, clipped, applied with
// Adam.
func ExampleModel_Gradient() {
	m, err := nsrnn.New(exampleConfig(), 1)
	if err != nil {
		log.Fatal(err)
	}
	batch := [][]int{
		{0, 1, 2, 1, 0},
		{1, 1, 2, 1, 1},
	}
	var sizes []int
	for _, p := range m.Params() {
		sizes = append(sizes, p.Size())
	}
	opt := nsrnn.NewAdam(0.005, sizes)
	before, grads, err := m.Gradient(batch)
	if err != nil {
		log.Fatal(err)
	}
	nsrnn.ClipGradNorm(grads, 5)
	opt.Update(m.Params(), grads)
	after, err := m.Loss(batch)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("loss went down:", after < before)
	// Output:
	// loss went down: true
}

// Save a model to a file and load it back: the loaded model scores
// strings exactly as the saved one.
func ExampleModel_Save() {
	dir, err := os.MkdirTemp("", "nsrnn-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	m, err := nsrnn.New(exampleConfig(), 7)
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(dir, "rns.model")
	if err := m.Save(path); err != nil {
		log.Fatal(err)
	}
	l, err := nsrnn.Load(path)
	if err != nil {
		log.Fatal(err)
	}
	w := []int{1, 0, 2, 0, 1}
	a, _ := m.LogProb(w)
	b, _ := l.LogProb(w)
	fmt.Println(l.Config().Kind, l.NumParams() == m.NumParams(), a == b)
	// Output:
	// rns true true
}

// ExamplePerplexityPlateau shows the authors' Penn Treebank rule beside
// Plateau with the same threshold on the cross-entropy: a validation
// cross-entropy falling from 4.85849 to 4.85803 nats (perplexity 128.83 to
// 128.77) makes the best parameters and keeps the learning rate under the
// authors' rule, and does neither under Plateau's.
func ExamplePerplexityPlateau() {
	authors := nsrnn.PerplexityPlateau{Factor: 1 / 1.5, Patience: 0, Threshold: 1e-4}
	crossEntropy := nsrnn.Plateau{Factor: 1 / 1.5, Patience: 0, Threshold: 1e-4}
	best, score := 4.85849, 4.85803
	fmt.Println("authors: best epoch", authors.Improves(score, best), "keeps the rate", authors.RateImproves(score, best))
	fmt.Println("cross-entropy: best epoch and keeps the rate", crossEntropy.Improves(score, best))
	// Output:
	// authors: best epoch true keeps the rate true
	// cross-entropy: best epoch and keeps the rate false
}
