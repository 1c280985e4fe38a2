package autogradcounter_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/examples/autogradcounter"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// Train a model whose stack is written in gorgonia's operations alone:
// importing autogradcounter registers the kind "counter-autograd", which
// nsrnn.Train trains with the gradients gorgonia derives.
func Example() {
	task, err := data.NewTask(data.MarkedReversal)
	if err != nil {
		log.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 0))
	train, err := task.SampleBatches(60, 10, 5, 9, rng)
	if err != nil {
		log.Fatal(err)
	}
	valid, err := task.SampleBatches(20, 10, 5, 9, rng)
	if err != nil {
		log.Fatal(err)
	}
	cfg := nsrnn.Config{Kind: autogradcounter.Kind, InputVocab: len(task.Terminals()), OutputVocab: len(task.Vocabulary()),
		Hidden: 8, Options: nsrnn.MakeOptions(map[string]int{"counters": 2})}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		log.Fatal(err)
	}
	before, err := m.CrossEntropy(valid)
	if err != nil {
		log.Fatal(err)
	}
	res, err := nsrnn.Train(m, train, valid, nsrnn.TrainConfig{LR: 0.02, MaxEpochs: 3, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("parameters:", m.NumParams(), "epochs:", res.Epochs, "better:", res.BestValidCrossEntropy < before)
	// Output:
	// parameters: 534 epochs: 3 better: true
}
