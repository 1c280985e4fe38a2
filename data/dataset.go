package data

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// errNilGrammar is the error for a nil *PCFG given as a Language.
var errNilGrammar = errors.New("data: nil grammar: Task.Grammar is nil for a task not defined by a grammar " +
	"(those of the 2023 release); give the Task itself, or use Task.SampleBatches and Task.TrueEntropy")

// checkLanguage returns an error for a nil Language, or one holding a nil
// *PCFG (the Grammar of a task without a grammar) or a nil *Task, whose
// methods would dereference it.
func checkLanguage(l Language) error {
	switch l := l.(type) {
	case nil:
		return errors.New("data: nil language")
	case *PCFG:
		if l == nil {
			return errNilGrammar
		}
	case *Task:
		if l == nil {
			return errors.New("data: nil task")
		}
	}
	return nil
}

// validLengthsNonEmpty returns the valid lengths in [minLen, maxLen], or an
// error if there are none or l is nil (checkLanguage).
func validLengthsNonEmpty(l Language, minLen, maxLen int) ([]int, error) {
	if err := checkLanguage(l); err != nil {
		return nil, err
	}
	ns, err := l.ValidLengths(minLen, maxLen)
	if err != nil {
		return nil, err
	}
	if len(ns) == 0 {
		what := "language has"
		if _, ok := l.(*PCFG); ok {
			what = "grammar generates"
		}
		return nil, fmt.Errorf("data: the %s no strings with length in [%d, %d]", what, minLen, maxLen)
	}
	return ns, nil
}

// MaxSampleWords is the most memory, in 8-byte words, that SampleStrings,
// SampleBatches and SampleTestSet may need for the strings they return,
// counting each string at the longest length asked for plus 3 words of
// overhead: 2^29 words, 4 GiB. A larger request is refused with an error
// (see CheckSampleSize) instead of exhausting memory.
const MaxSampleWords = 1 << 29

// CheckSampleSize returns an error if count strings of up to maxLen
// symbols would need more than MaxSampleWords words of memory, or if count
// or maxLen is negative.
func CheckSampleSize(count, maxLen int) error {
	if count < 0 || maxLen < 0 {
		return fmt.Errorf("data: %d strings of up to %d symbols: want non-negative sizes", count, maxLen)
	}
	if count > 0 && (maxLen > MaxSampleWords || count > MaxSampleWords/(maxLen+3)) {
		words := float64(count) * (float64(maxLen) + 3) // maxLen + 3 may overflow an int
		return fmt.Errorf("data: %d strings of up to %d symbols would take up to %.3g GiB, more than the limit of %d GiB",
			count, maxLen, words*8/(1<<30), MaxSampleWords*8>>30)
	}
	return nil
}

// SampleStrings returns count strings, each drawn by choosing a length
// uniformly from the valid lengths in [minLen, maxLen] and then a string
// from the language's distribution (p_G for a grammar) conditioned on that
// length.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func SampleStrings(g Language, count, minLen, maxLen int, rng *rand.Rand) ([][]int, error) {
	if count < 0 {
		return nil, fmt.Errorf("data: negative count %d", count)
	}
	if rng == nil {
		return nil, errors.New("data: nil random source")
	}
	if err := CheckSampleSize(count, maxLen); err != nil {
		return nil, err
	}
	ns, err := validLengthsNonEmpty(g, minLen, maxLen)
	if err != nil {
		return nil, err
	}
	ws := make([][]int, count)
	for i := range ws {
		if ws[i], err = g.Sample(ns[rng.IntN(len(ns))], rng); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

// SampleBatches returns numStrings strings in batches of batchSize (the
// last batch is smaller if batchSize does not divide numStrings). For each
// batch one length is drawn uniformly from the valid lengths in [minLen,
// maxLen], and every string of the batch is drawn from the language's
// distribution (p_G for a grammar) conditioned on that length. This is the
// paper's protocol for training and validation sets. A nil g (such as the
// nil Grammar of a task of the 2023 release) is an error: Task.SampleBatches
// samples every task.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func SampleBatches(g Language, numStrings, batchSize, minLen, maxLen int, rng *rand.Rand) ([][][]int, error) {
	if numStrings < 0 {
		return nil, fmt.Errorf("data: negative number of strings %d", numStrings)
	}
	if batchSize < 1 {
		return nil, fmt.Errorf("data: batch size %d must be positive", batchSize)
	}
	if rng == nil {
		return nil, errors.New("data: nil random source")
	}
	if err := CheckSampleSize(numStrings, maxLen); err != nil {
		return nil, err
	}
	ns, err := validLengthsNonEmpty(g, minLen, maxLen)
	if err != nil {
		return nil, err
	}
	var batches [][][]int
	for left := numStrings; left > 0; left -= batchSize {
		n := ns[rng.IntN(len(ns))]
		b := make([][]int, min(batchSize, left))
		for i := range b {
			if b[i], err = g.Sample(n, rng); err != nil {
				return nil, err
			}
		}
		batches = append(batches, b)
	}
	return batches, nil
}

// SampleTestSet returns perLength strings for every valid length in
// [minLen, maxLen], in order of increasing length, each drawn from the
// language's distribution (p_G for a grammar) conditioned on its length.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func SampleTestSet(g Language, perLength, minLen, maxLen int, rng *rand.Rand) ([][]int, error) {
	if perLength < 0 {
		return nil, fmt.Errorf("data: negative number of strings per length %d", perLength)
	}
	if rng == nil {
		return nil, errors.New("data: nil random source")
	}
	ns, err := validLengthsNonEmpty(g, minLen, maxLen)
	if err != nil {
		return nil, err
	}
	if perLength > 0 && len(ns) > MaxSampleWords/perLength {
		return nil, fmt.Errorf("data: %d strings for each of %d lengths would take more than the limit of %d GiB",
			perLength, len(ns), MaxSampleWords*8>>30)
	}
	if err := CheckSampleSize(perLength*len(ns), ns[len(ns)-1]); err != nil {
		return nil, err
	}
	ws := make([][]int, 0, perLength*len(ns))
	for _, n := range ns {
		for range perLength {
			w, err := g.Sample(n, rng)
			if err != nil {
				return nil, err
			}
			ws = append(ws, w)
		}
	}
	return ws, nil
}

// SplitBatches splits ws into consecutive batches of batchSize strings, the
// last possibly smaller. It inverts Flatten for sets made by SampleBatches.
func SplitBatches(ws [][]int, batchSize int) ([][][]int, error) {
	if batchSize < 1 {
		return nil, fmt.Errorf("data: batch size %d must be positive", batchSize)
	}
	var batches [][][]int
	for i := 0; i < len(ws); i += batchSize {
		batches = append(batches, ws[i:min(i+batchSize, len(ws))])
	}
	return batches, nil
}

// Flatten returns the strings of batches in order.
func Flatten(batches [][][]int) [][]int {
	var ws [][]int
	for _, b := range batches {
		ws = append(ws, b...)
	}
	return ws
}
