package data

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// ErrNotInLanguage is the error, wrapped with the string's index in a
// *StringError where there is a set, for a string that is not in the
// task's language: one whose probability is asked for (SourceLogProb,
// ComputeLowerBound) but is 0.
var ErrNotInLanguage = errors.New("string not in the language")

// StringError is an error about one string of a set.
type StringError struct {
	Index int // 0-based index of the string in the set
	Err   error
}

// Error returns "string index: message".
func (e *StringError) Error() string { return fmt.Sprintf("string %d: %v", e.Index, e.Err) }

// Unwrap returns the underlying error.
func (e *StringError) Unwrap() error { return e.Err }

// LowerBound is the per-symbol cross-entropy of the source distribution on a
// set of strings, the lower bound for a model's cross-entropy on that set.
type LowerBound struct {
	Strings      int     `json:"strings"`       // number of strings
	Symbols      int     `json:"symbols"`       // Σ (|w| + 1), counting EOS
	ValidLengths int     `json:"valid_lengths"` // K, valid lengths in the range
	Entropy      float64 `json:"lower_bound"`   // H, nats per symbol
	// LogProbsGivenLength holds log p(w | |w|) (for a grammar,
	// log(p_G(w)/p_G(|w|))) for each string, in order.
	LogProbsGivenLength []float64 `json:"log_probs_given_length"`
}

// logProbGivenLengthIn returns log p(w | |w|), or an error if |w| is
// outside [minLen, maxLen] or w is not in the language.
func logProbGivenLengthIn(g Language, w []int, minLen, maxLen int) (float64, error) {
	if len(w) < minLen || len(w) > maxLen {
		return 0, fmt.Errorf("length %d outside the range [%d, %d]", len(w), minLen, maxLen)
	}
	lp, err := g.LogProbGivenLength(w)
	if err != nil {
		return 0, err
	}
	if math.IsInf(lp, -1) {
		return 0, ErrNotInLanguage
	}
	return lp, nil
}

// SourceLogProb returns log p(w) under the source distribution of the
// paper's CFL experiments, p(w) = (1/K)·p(w | |w|), where K is the number
// of valid lengths in [minLen, maxLen] and p(w | |w|) is the language's
// (p_G(w)/p_G(|w|) for a grammar, 1/N(|w|) for a uniform language). Since
// EOS always follows w, this is also log p(w·EOS). It returns an error if
// |w| is outside the range or w is not in the language.
func SourceLogProb(g Language, w []int, minLen, maxLen int) (float64, error) {
	ns, err := validLengthsNonEmpty(g, minLen, maxLen)
	if err != nil {
		return 0, err
	}
	lp, err := logProbGivenLengthIn(g, w, minLen, maxLen)
	if err != nil {
		return 0, fmt.Errorf("data: %w", err)
	}
	return lp - math.Log(float64(len(ns))), nil
}

// ComputeLowerBound returns the per-symbol cross-entropy of the source
// distribution p(w) = (1/K)·p(w | |w|) on ws (p_G(w)/p_G(|w|) for a
// grammar, 1/N(|w|) for a uniform language; see SourceLogProb),
//
//	H = -Σ log p(w·EOS) / Σ (|w| + 1),
//
// in nats, with K the number of valid lengths in [minLen, maxLen]. It
// returns a *StringError for the first string whose length is outside the
// range or that is not in the language, and an error if ws is empty.
// Strings are parsed concurrently.
func ComputeLowerBound(g Language, ws [][]int, minLen, maxLen int) (LowerBound, error) {
	ns, err := validLengthsNonEmpty(g, minLen, maxLen)
	if err != nil {
		return LowerBound{}, err
	}
	if len(ws) == 0 {
		return LowerBound{}, errors.New("data: lower bound of an empty set of strings")
	}
	lps := make([]float64, len(ws))
	errs := make([]error, len(ws))
	workers := min(runtime.GOMAXPROCS(0), len(ws))
	var wg sync.WaitGroup
	for k := range workers {
		wg.Go(func() {
			for i := k; i < len(ws); i += workers {
				lps[i], errs[i] = logProbGivenLengthIn(g, ws[i], minLen, maxLen)
			}
		})
	}
	wg.Wait()
	lb := LowerBound{Strings: len(ws), ValidLengths: len(ns), LogProbsGivenLength: lps}
	logK := math.Log(float64(len(ns)))
	var sum float64
	for i, w := range ws {
		if errs[i] != nil {
			return LowerBound{}, &StringError{Index: i, Err: errs[i]}
		}
		sum += lps[i] - logK
		lb.Symbols += len(w) + 1
	}
	lb.Entropy = -sum / float64(lb.Symbols)
	return lb, nil
}
