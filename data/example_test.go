package data_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nsrnn/nsrnn/data"
)

// Sample strings of marked reversal, w # wᴿ, and the exact probability of
// one given its length: each symbol of w is 0 or 1 with probability 1/2,
// so a string of length 2k+1 has probability 2^−k given its length.
func ExampleTask_Sample() {
	t, err := data.NewTask(data.MarkedReversal)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3 {
		w, err := t.Sample(7, rng)
		if err != nil {
			panic(err)
		}
		lp, err := t.LogProbGivenLength(w)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s  p(w | n = 7) = %.4f\n", data.FormatString(w, t.Terminals()), math.Exp(lp))
	}
	// Output:
	// 1 1 1 # 1 1 1  p(w | n = 7) = 0.1250
	// 0 0 1 # 1 0 0  p(w | n = 7) = 0.1250
	// 1 1 1 # 1 1 1  p(w | n = 7) = 0.1250
}

// The lower bound of a test set: the per-symbol cross-entropy of the
// source distribution, which gives each valid length in the range the
// same probability. Here the valid lengths of marked reversal in 5–9 are
// 5, 7 and 9, and a string of length 2k+1 has probability 2^−k/3, so the
// bound is Σ (k log 2 + log 3) / Σ (2k + 2) over the strings.
func ExampleComputeLowerBound() {
	t, err := data.NewTask(data.MarkedReversal)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ws, err := data.SampleTestSet(t, 10, 5, 9, rng) // 10 strings per valid length
	if err != nil {
		panic(err)
	}
	lb, err := data.ComputeLowerBound(t, ws, 5, 9)
	if err != nil {
		panic(err)
	}
	closed := (10*(2+3+4)*math.Log(2) + 30*math.Log(3)) / (10 * (6 + 8 + 10))
	fmt.Printf("%d strings, %d valid lengths, %.4f nats per symbol (closed form %.4f)\n", lb.Strings, lb.ValidLengths, lb.Entropy, closed)
	// Output:
	// 30 strings, 3 valid lengths, 0.3973 nats per symbol (closed form 0.3973)
}
