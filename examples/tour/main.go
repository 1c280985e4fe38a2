// Command tour makes, as one program, the calls that the README's "Using
// the library" shows: a model of the marked reversal task, its
// log-probability of a string and its gradient on a batch, three epochs
// of training against the task's true entropy, the stack's best run of a
// string, samples, and a language model run as 32 streams, a chunk and a
// token at a time. It prints what each call returns, and takes about ten
// seconds on two CPU cores.
//
// The README's lines appear here as they are (a test checks it), each
// followed by the check of its error that the README leaves out.
//
//	go run ./examples/tour
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func main() {
	if err := tour(); err != nil {
		fmt.Fprintln(os.Stderr, "tour:", err)
		os.Exit(1)
	}
}

func tour() error {
	batch := nsrnn.Batch{{0, 1, 2, 1, 0}, {1, 1, 2, 1, 1}}
	// README: begin
	task, err := data.NewTask(data.MarkedReversal) // any of data.AllTaskNames(): its language, terminals and EOS
	if err != nil {
		return err
	}
	terminals := len(task.Terminals()) // symbols 0 … terminals−1; EOS is the next id
	cfg := nsrnn.Config{Kind: nsrnn.RNS, InputVocab: terminals, OutputVocab: terminals + 1, Hidden: 20, States: 2, Symbols: 3}
	m, err := nsrnn.New(cfg, 1) // parameters drawn from seed 1
	if err != nil {
		return err
	}
	logp, err := m.LogProb([]int{0, 1, 2, 1, 0}) // log p(w · EOS)
	if err != nil {
		return err
	}
	loss, grads, err := m.Gradient(batch) // batch: sequences of one length
	if err != nil {
		return err
	}
	fmt.Printf("log p(0 1 # 1 0 · EOS) = %.4f; loss of the batch %.4f nats per symbol, gradients of %d parameter tensors\n", logp, loss, len(grads))
	rng := rand.New(rand.NewPCG(1, 0))                      // math/rand/v2, wherever a *rand.Rand is taken
	train, err := task.SampleBatches(1000, 10, 40, 80, rng) // [][][]int is a []nsrnn.Batch
	if err != nil {
		return err
	}
	valid, err := task.SampleBatches(100, 10, 40, 80, rng)
	if err != nil {
		return err
	}
	bound, err := task.TrueEntropy(valid, 40, 80) // the lower bound: the data's true entropy
	if err != nil {
		return err
	}
	res, err := nsrnn.Train(m, train, valid, nsrnn.TrainConfig{LR: 0.005, LowerBound: bound, MaxEpochs: 3,
		Recorder: nsrnn.TextLog(os.Stderr, 0)}) // a line per epoch (Train prints nothing without a Recorder)
	if err != nil {
		return err
	}
	fmt.Printf("after %d epochs: %.4f nats per symbol above the lower bound (best epoch %d)\n", res.Epochs, res.BestValidDifference, res.BestEpoch)
	w := []int{0, 1, 2, 1, 0}
	run, err := m.Viterbi(w) // the stack's best run: push, replace, pop
	if err != nil {
		return err
	}
	names := make([]string, len(w))
	for i, x := range w {
		names[i] = task.Terminals()[x]
	}
	err = run.WriteTable(os.Stdout, names) // … as a table beside the string's symbols
	if err != nil {
		return err
	}
	gs, err := m.Sample(10, nsrnn.SampleOptions{Seed: 1, MaxLength: 100})
	if err != nil {
		return err
	}
	fmt.Printf("%d samples; the first: %q (complete: %v; log-probability %.4f)\n",
		len(gs), data.FormatString(gs[0].Symbols, task.Terminals()), gs[0].Complete, gs[0].LogProb)

	// Stream mode (language modeling): B streams, chunk by chunk, state carried.
	lm, err := nsrnn.New(nsrnn.Config{Kind: nsrnn.RNS, InputVocab: 10000, OutputVocab: 10000, Embedding: 256,
		Hidden: 256, States: 1, Symbols: 2, Window: 35, InitRange: 0.05}, 1)
	if err != nil {
		return err
	}
	s, err := lm.NewStream(32)
	if err != nil {
		return err
	}
	inputs, targets, tokens := chunk(rng, 32, 35, 10000)
	sloss, sgrads, err := s.Gradient(inputs, targets) // a chunk per stream (32 rows of token ids), gradients truncated at its start
	if err != nil {
		return err
	}
	next, err := s.Next(tokens) // one token per stream: next[b][v], log-probabilities of each stream's next token
	if err != nil {
		return err
	}
	// README: end
	fmt.Printf("a chunk of 32×35 tokens: %.4f nats per token (ln 10000 = %.4f at initialization), gradients of %d tensors; the next token's distribution sums to %.6f\n",
		sloss, math.Log(10000), len(sgrads), sumExp(next[0]))
	return nil
}

// chunk draws B streams' inputs and targets for one chunk of T tokens
// (the targets are the inputs shifted by one, as in a corpus) and the
// token that follows each stream.
func chunk(rng *rand.Rand, B, T, V int) (inputs, targets [][]int, next []int) {
	for range B {
		row := make([]int, T+1)
		for i := range row {
			row[i] = rng.IntN(V)
		}
		inputs, targets, next = append(inputs, row[:T]), append(targets, row[1:]), append(next, row[T])
	}
	return inputs, targets, next
}

func sumExp(lp []float64) float64 {
	s := 0.0
	for _, v := range lp {
		s += math.Exp(v)
	}
	return s
}
