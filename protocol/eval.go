package protocol

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// LengthResult is the evaluation of the strings of one length, or of all
// of them (then Length is 0 and omitted from the JSON). Cross-entropies
// are in nats per symbol, EOS included.
type LengthResult struct {
	Length  int `json:"length,omitempty"`
	Strings int `json:"strings"`
	// Symbols counts the predictions: the strings' symbols and one EOS
	// per string.
	Symbols      int     `json:"symbols"`
	CrossEntropy float64 `json:"cross_entropy"`
	// LowerBound is the cross-entropy of the true distribution on the
	// same strings, and Difference is CrossEntropy − LowerBound, the
	// paper's measure (0 is perfect).
	LowerBound float64 `json:"lower_bound"`
	Difference float64 `json:"cross_entropy_diff"`
	// NoLowerBound marks the result of strings of no known distribution
	// (a task without one, data.Task.HasDistribution): LowerBound and
	// Difference are 0 and mean nothing, and the JSON form leaves them out
	// for Perplexity, exp(CrossEntropy).
	NoLowerBound bool    `json:"no_lower_bound,omitempty"`
	Perplexity   float64 `json:"perplexity,omitempty"`
}

// lengthResultJSON has LengthResult's fields without its methods.
type lengthResultJSON LengthResult

// MarshalJSON writes the result, without "lower_bound" and
// "cross_entropy_diff" when it has NoLowerBound.
func (r LengthResult) MarshalJSON() ([]byte, error) {
	if !r.NoLowerBound {
		return json.Marshal(lengthResultJSON(r))
	}
	return json.Marshal(struct {
		lengthResultJSON
		LowerBound *float64 `json:"lower_bound,omitempty"`
		Difference *float64 `json:"cross_entropy_diff,omitempty"`
	}{lengthResultJSON: lengthResultJSON(r)})
}

// Report is an evaluation by length (the output of cfl eval).
type Report struct {
	Task string `json:"task"`
	// Grammar is the task's definition where it has one (the lower
	// bounds depend on it): paper or released.
	Grammar data.Grammar `json:"grammar,omitempty"`
	// NoLowerBound is set for strings of no known distribution: there is
	// no lower bound, and the results have perplexities instead.
	NoLowerBound bool `json:"no_lower_bound,omitempty"`
	// TaskParams are the task's parameters not at their defaults.
	TaskParams data.Params `json:"task_params,omitempty"`
	// Model names the evaluated model (cfl eval puts its run directory
	// there); EvaluateByLength leaves it empty.
	Model string `json:"model"`
	// Run and Test say what was evaluated, wherever the run's directory
	// is later moved: the selected run (its settings and summary) and
	// the test set. Selection.Evaluate sets them, so that a later
	// selection can use the report again instead of evaluating the same
	// run on the same test set once more (TestOptions.Reuse);
	// EvaluateByLength leaves them nil.
	Run  *Selected `json:"run,omitempty"`
	Test *TestSpec `json:"test,omitempty"`
	// ValidLengths is K, the number of valid lengths of the true
	// distribution, which gives each of them probability 1/K (see
	// EvaluateByLength); 0 with NoLowerBound, and in the reports of
	// versions before it was recorded.
	ValidLengths int            `json:"valid_lengths,omitempty"`
	Overall      LengthResult   `json:"overall"`
	ByLength     []LengthResult `json:"by_length"`
}

// DifferenceGivenLength returns r's difference from the lower bound of
// the true distribution given each string's length, −log p(w | |w|),
// instead of −log p(w) = −log p(w | |w|) + log K: Difference +
// Strings·log K/Symbols, which is Difference + log K/(n+1) for the
// strings of one length n. This is the measure of the paper's Figure 2,
// each length against its own distribution. validLengths is K
// (Report.ValidLengths); it panics if validLengths < 1.
func (r LengthResult) DifferenceGivenLength(validLengths int) float64 {
	if validLengths < 1 {
		panic(fmt.Sprintf("protocol: DifferenceGivenLength(%d): want at least 1 valid length", validLengths))
	}
	return r.Difference + float64(r.Strings)*math.Log(float64(validLengths))/float64(r.Symbols)
}

// EvaluateByLength computes the cross-entropy of model m on the strings of
// task t, the true distribution's lower bound and their difference, for
// every length present and overall (symbol-weighted). The true
// distribution is t's source distribution over its valid lengths in
// [minLen, maxLen]: p(w) = p(w | |w|)/K, K the number of valid lengths.
// Strings are scored batchSize at a time, each batch of one length. A
// string outside the language or the lengths is an error wrapping a
// *data.StringError with its index.
//
// For a task without a distribution (the user's strings,
// data.Task.HasDistribution false) there is no lower bound: every string
// is scored whatever its length, minLen and maxLen are not used, and the
// results are marked NoLowerBound and carry perplexities instead.
//
// The lengths are scored one after another, and a length's graphs are not
// needed after it, so while it runs the model keeps at most the graphs of
// one length (two batch sizes, each in Model.Workers parts; see
// Model.MaxGraphs): the memory does not grow with the number of lengths.
// The graphs of the last length are kept (Model.ReleaseGraphs drops them),
// and m.MaxGraphs is restored on return.
func EvaluateByLength(m *nsrnn.Model, t *data.Task, strs [][]int, minLen, maxLen, batchSize int) (*Report, error) {
	defer m.KeepGraphs(2 * max(m.Workers, 1))()
	switch cfg := m.Config(); {
	case batchSize < 1:
		return nil, fmt.Errorf("protocol: batch size %d; want at least 1", batchSize)
	case len(strs) == 0:
		return nil, fmt.Errorf("protocol: no strings to evaluate")
	case cfg.InputVocab != len(t.Terminals()) || cfg.OutputVocab != len(t.Vocabulary()):
		return nil, fmt.Errorf("protocol: the model has a vocabulary of %d symbols, task %s has %d", cfg.OutputVocab, t.Name(), len(t.Vocabulary()))
	}
	bound := t.HasDistribution()
	lb := data.LowerBound{ValidLengths: 1, LogProbsGivenLength: make([]float64, len(strs))}
	if bound {
		var err error
		if lb, err = data.ComputeLowerBound(t, strs, minLen, maxLen); err != nil {
			return nil, err
		}
	}
	k := float64(lb.ValidLengths)
	byLen := map[int][]int{} // length → indices into strs
	for i, w := range strs {
		byLen[len(w)] = append(byLen[len(w)], i)
	}
	ls := make([]int, 0, len(byLen))
	for l := range byLen {
		ls = append(ls, l)
	}
	sort.Ints(ls)
	rep := &Report{Task: t.Name(), TaskParams: t.Params(), NoLowerBound: !bound}
	if t.HasDistribution() {
		rep.Grammar = t.Definition()
	}
	if bound {
		rep.ValidLengths = lb.ValidLengths
	}
	all := LengthResult{NoLowerBound: !bound}
	for _, l := range ls {
		idx := byLen[l]
		r := LengthResult{Length: l, Strings: len(idx), Symbols: len(idx) * (l + 1), NoLowerBound: !bound}
		model, truth := 0.0, 0.0
		for start := 0; start < len(idx); start += batchSize {
			var b nsrnn.Batch
			for _, i := range idx[start:min(start+batchSize, len(idx))] {
				b = append(b, strs[i])
				// −log p(w·EOS) of the true distribution, p(w) = p(w | |w|)/K.
				truth += -(lb.LogProbsGivenLength[i] - math.Log(k))
			}
			loss, err := m.Loss(b)
			if err != nil {
				return nil, err
			}
			model += loss * float64(len(b))
		}
		r.CrossEntropy = model / float64(r.Symbols)
		r.setBound(truth / float64(r.Symbols))
		rep.ByLength = append(rep.ByLength, r)
		all.Strings += r.Strings
		all.Symbols += r.Symbols
		all.CrossEntropy += model
		all.LowerBound += truth
	}
	all.CrossEntropy /= float64(all.Symbols)
	all.setBound(all.LowerBound / float64(all.Symbols))
	rep.Overall = all
	return rep, nil
}

// setBound sets the lower bound and the difference from it, or, with
// NoLowerBound, the perplexity.
func (r *LengthResult) setBound(lb float64) {
	if r.NoLowerBound {
		r.LowerBound, r.Perplexity = 0, math.Exp(r.CrossEntropy)
		return
	}
	r.LowerBound, r.Difference = lb, r.CrossEntropy-lb
}

// WriteCSV writes the report as CSV: a header (length, strings, symbols,
// cross_entropy, lower_bound, cross_entropy_diff, and, when the report
// has ValidLengths, cross_entropy_diff_given_length, the
// LengthResult.DifferenceGivenLength of the paper's Figure 2; for a
// report with NoLowerBound, length, strings, symbols, cross_entropy,
// perplexity), a row per length, and a last row, labelled "all", for the
// overall result.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := []string{"length", "strings", "symbols", "cross_entropy", "lower_bound", "cross_entropy_diff"}
	if r.ValidLengths > 0 {
		header = append(header, "cross_entropy_diff_given_length")
	}
	if r.NoLowerBound {
		header = []string{"length", "strings", "symbols", "cross_entropy", "perplexity"}
	}
	cw.Write(header)
	row := func(l string, lr LengthResult) {
		f := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
		rec := []string{l, strconv.Itoa(lr.Strings), strconv.Itoa(lr.Symbols), f(lr.CrossEntropy), f(lr.LowerBound), f(lr.Difference)}
		switch {
		case r.NoLowerBound:
			rec = append(rec[:4], f(lr.Perplexity))
		case r.ValidLengths > 0:
			rec = append(rec, f(lr.DifferenceGivenLength(r.ValidLengths)))
		}
		cw.Write(rec)
	}
	for _, lr := range r.ByLength {
		row(strconv.Itoa(lr.Length), lr)
	}
	row("all", r.Overall)
	cw.Flush()
	return cw.Error()
}
