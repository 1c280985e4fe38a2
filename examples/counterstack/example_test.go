package counterstack_test

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/examples/counterstack"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// Train a model of a kind defined outside package nsrnn: importing
// counterstack registers the kind "counter", which Config.Validate, New,
// Train and streams then treat like the library's own.
func Example() {
	task, err := data.NewTask(data.MarkedReversal)
	if err != nil {
		log.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 0))
	train, err := data.SampleBatches(task.Grammar(), 60, 10, 5, 9, rng)
	if err != nil {
		log.Fatal(err)
	}
	valid, err := data.SampleBatches(task.Grammar(), 20, 10, 5, 9, rng)
	if err != nil {
		log.Fatal(err)
	}
	cfg := nsrnn.Config{Kind: counterstack.Kind, InputVocab: len(task.Terminals()), OutputVocab: len(task.Vocabulary()),
		Hidden: 8, Options: nsrnn.MakeOptions(map[string]int{"counters": 2})}
	n, err := nsrnn.CountParams(cfg)
	if err != nil {
		log.Fatal(err)
	}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("parameters:", n, n == m.NumParams())

	// The declaration's checks: a field the kind does not declare, and
	// the one it requires.
	bad := cfg
	bad.States, bad.Options = 2, ""
	fmt.Println(bad.Validate())

	before, err := m.CrossEntropy(valid)
	if err != nil {
		log.Fatal(err)
	}
	res, err := nsrnn.Train(m, train, valid, nsrnn.TrainConfig{LR: 0.02, MaxEpochs: 3, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("epochs:", res.Epochs, "better:", res.BestValidCrossEntropy < before)

	// As a stream: one sequence in two chunks, the counters carried from
	// the first to the second, scores exactly as in one chunk.
	w := valid[0][0]
	inputs, targets := w[:len(w)-1], w[1:]
	whole, err := m.NewStream(1)
	if err != nil {
		log.Fatal(err)
	}
	all, err := whole.Loss([][]int{inputs}, [][]int{targets})
	if err != nil {
		log.Fatal(err)
	}
	chunked, err := m.NewStream(1)
	if err != nil {
		log.Fatal(err)
	}
	h := len(inputs) / 2
	first, err := chunked.Loss([][]int{inputs[:h]}, [][]int{targets[:h]})
	if err != nil {
		log.Fatal(err)
	}
	second, err := chunked.Loss([][]int{inputs[h:]}, [][]int{targets[h:]})
	if err != nil {
		log.Fatal(err)
	}
	mean := (first*float64(h) + second*float64(len(inputs)-h)) / float64(len(inputs))
	fmt.Println("chunks agree:", math.Abs(mean-all) < 1e-12)
	// Output:
	// parameters: 534 true
	// nsrnn: invalid model configuration: states apply only to ns, ns+s, ns+u, rns, vrns, not counter; model counter needs a number of counters (--counters) ≥ 1, got 0
	// epochs: 3 better: true
	// chunks agree: true
}
