package nsrnn_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// Train an RNS-RNN on data sampled from a task: the batches of
// data.SampleBatches go to Train as they are, and the task's TrueEntropy
// of the validation batches is the lower bound that each epoch's
// validation cross-entropy is compared with.
func ExampleTrain() {
	task, err := data.NewTask(data.MarkedReversal)
	if err != nil {
		log.Fatal(err)
	}
	const minLen, maxLen = 5, 9
	rng := rand.New(rand.NewPCG(1, 0)) // math/rand/v2
	train, err := data.SampleBatches(task.Grammar(), 100, 10, minLen, maxLen, rng)
	if err != nil {
		log.Fatal(err)
	}
	valid, err := data.SampleBatches(task.Grammar(), 20, 10, minLen, maxLen, rng)
	if err != nil {
		log.Fatal(err)
	}
	bound, err := task.TrueEntropy(valid, minLen, maxLen)
	if err != nil {
		log.Fatal(err)
	}
	m, err := nsrnn.New(nsrnn.Config{
		Kind:       nsrnn.RNS,
		InputVocab: len(task.Terminals()), OutputVocab: len(task.Vocabulary()),
		Hidden: 10, States: 2, Symbols: 2,
	}, 1)
	if err != nil {
		log.Fatal(err)
	}
	res, err := nsrnn.Train(m, train, valid, nsrnn.TrainConfig{LR: 0.01, MaxEpochs: 3, LowerBound: bound})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("epochs:", res.Epochs)
	fmt.Println("bound is the true entropy:", res.LowerBound == bound)
	fmt.Println("above the bound:", res.BestValidDifference > 0)
	// Output:
	// epochs: 3
	// bound is the true entropy: true
	// above the bound: true
}

// Score a string: log p(w · EOS), in nats.
func ExampleModel_LogProb() {
	m, err := nsrnn.New(exampleConfig(), 1)
	if err != nil {
		log.Fatal(err)
	}
	lp, err := m.LogProb([]int{0, 1, 2, 1, 0}) // 01#10
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("a probability:", lp < 0)
	// Output:
	// a probability: true
}

// Decode the highest-weight run of the stack on a string: one operation
// per stack update, naming the state it goes to and the symbol it pushes.
func ExampleModel_Viterbi() {
	m, err := nsrnn.New(exampleConfig(), 1)
	if err != nil {
		log.Fatal(err)
	}
	w := []int{0, 1, 2, 1, 0} // 01#10
	run, err := m.Viterbi(w)
	if err != nil {
		log.Fatal(err)
	}
	// The stack is updated after w_1 … w_{n−1}; the first update
	// pushes (the paper's initial bottom can never be replaced or
	// uncovered).
	fmt.Println("updates:", len(run.Ops), "first:", run.Ops[0].Kind)
	// Output:
	// updates: 4 first: push
}

// Sample strings from a model: each ends when the model draws EOS, or is
// cut at MaxLength.
func ExampleModel_Sample() {
	m, err := nsrnn.New(exampleConfig(), 1)
	if err != nil {
		log.Fatal(err)
	}
	gs, err := m.Sample(3, nsrnn.SampleOptions{Seed: 1, MaxLength: 20})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("strings:", len(gs))
	for _, g := range gs {
		if len(g.Symbols) > 20 {
			fmt.Println("too long")
		}
	}
	// Output:
	// strings: 3
}

// Draw strings one at a time, without holding them all: here until one
// longer than 5 symbols comes.
func ExampleModel_SampleEach() {
	m, err := nsrnn.New(exampleConfig(), 1)
	if err != nil {
		log.Fatal(err)
	}
	drawn := 0
	err = m.SampleEach(-1, nsrnn.SampleOptions{Seed: 1, MaxLength: 20}, func(i int, g nsrnn.Generated) bool {
		drawn = i + 1
		return len(g.Symbols) <= 5 && drawn < 1000
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stopped:", drawn < 1000)
	// Output:
	// stopped: true
}
