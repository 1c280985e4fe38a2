package protocol

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/internal/boundjson"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// Summary is summary.json, the outcome of a finished training run.
type Summary struct {
	Task string `json:"task"`
	// Grammar is the task's definition where it has one (the lower bound
	// depends on it); empty in summaries written before it was recorded
	// and for tasks without a grammar.
	Grammar    data.Grammar `json:"grammar,omitempty"`
	Model      nsrnn.Config `json:"model"`
	Parameters int          `json:"parameters"`
	// Epochs is the number of epochs run and BestEpoch the one whose
	// parameters were kept.
	Epochs    int `json:"epochs"`
	BestEpoch int `json:"best_epoch"`
	// BestValidCrossEntropy is the best epoch's validation cross-entropy,
	// ValidLowerBound the validation set's lower bound, and
	// BestValidCrossEntropyDiff their difference, in nats per symbol.
	BestValidCrossEntropy     float64 `json:"best_valid_cross_entropy"`
	ValidLowerBound           float64 `json:"valid_lower_bound"`
	BestValidCrossEntropyDiff float64 `json:"best_valid_cross_entropy_diff"`
	// ElapsedSeconds is the training time, over all epochs and resumptions.
	ElapsedSeconds  float64 `json:"elapsed_seconds"`
	SecondsPerEpoch float64 `json:"seconds_per_epoch"`
	// NoLowerBound is set for a run on strings of no known distribution
	// (the user's text files): ValidLowerBound and
	// BestValidCrossEntropyDiff are 0 and mean nothing, and are written
	// null, and BestValidPerplexity, exp(BestValidCrossEntropy), is set.
	NoLowerBound        bool    `json:"no_lower_bound,omitempty"`
	BestValidPerplexity float64 `json:"best_valid_perplexity,omitempty"`
	// BLAS is the implementation of the matrix products the run finished
	// with (nsrnn.BLAS): results under two implementations differ by
	// rounding. Empty in summaries written before it was recorded.
	BLAS string `json:"blas,omitempty"`
}

// summaryJSON has Summary's fields without its methods.
type summaryJSON Summary

// MarshalJSON writes the summary, with a null "valid_lower_bound" and
// "best_valid_cross_entropy_diff" when it has NoLowerBound.
func (s Summary) MarshalJSON() ([]byte, error) {
	if !s.NoLowerBound {
		return json.Marshal(summaryJSON(s))
	}
	return boundjson.Marshal(summaryJSON(s), nil, []string{"valid_lower_bound", "best_valid_cross_entropy_diff"})
}

// NewSummary is the summary of a training run of task with model m and
// result res; lowerBound is the validation set's lower bound, which is not
// used for a result with NoLowerBound.
func NewSummary(task string, m *nsrnn.Model, res *nsrnn.TrainResult, lowerBound float64) Summary {
	if res.NoLowerBound {
		return Summary{
			Task: task, Model: m.Config(), Parameters: m.NumParams(), Epochs: res.Epochs, BestEpoch: res.BestEpoch,
			BestValidCrossEntropy: res.BestValidCrossEntropy, ElapsedSeconds: res.ElapsedSeconds,
			SecondsPerEpoch: res.ElapsedSeconds / float64(max(res.Epochs, 1)),
			NoLowerBound:    true, BestValidPerplexity: math.Exp(res.BestValidCrossEntropy), BLAS: nsrnn.BLAS,
		}
	}
	return Summary{
		Task: task, Model: m.Config(), Parameters: m.NumParams(), Epochs: res.Epochs, BestEpoch: res.BestEpoch,
		BestValidCrossEntropy: res.BestValidCrossEntropy, ValidLowerBound: lowerBound,
		BestValidCrossEntropyDiff: res.BestValidDifference, ElapsedSeconds: res.ElapsedSeconds,
		SecondsPerEpoch: res.ElapsedSeconds / float64(max(res.Epochs, 1)), BLAS: nsrnn.BLAS,
	}
}

// ReadSummary reads the summary.json of the run in dir. The error for an
// unfinished run, which has none, wraps os.ErrNotExist; a summary that no
// run writes (a best epoch outside 1 … epochs, a value that is not
// finite) is an error naming the file.
func ReadSummary(dir string) (*Summary, error) {
	var s Summary
	path := filepath.Join(dir, SummaryFile)
	if err := readJSON(path, &s); err != nil {
		return nil, err
	}
	// A summary no run writes (a damaged or hand-edited file) is refused
	// rather than selected or printed.
	switch {
	case s.Epochs < 1 || s.BestEpoch < 1 || s.BestEpoch > s.Epochs:
		return nil, fmt.Errorf("%s: best epoch %d of %d epochs: the file is damaged", path, s.BestEpoch, s.Epochs)
	case !finite(s.BestValidCrossEntropy, s.ValidLowerBound, s.BestValidCrossEntropyDiff, s.ElapsedSeconds, s.BestValidPerplexity):
		return nil, fmt.Errorf("%s: a value is not finite: the file is damaged", path)
	}
	return &s, nil
}

// finite reports whether every x is a finite number.
func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// ReadLog reads a training log (a run's log.jsonl): one record per epoch,
// in order. Blank lines are skipped; an undecodable line, a record that
// is not of the next epoch (1, 2, … in order) and a time that is negative
// or not finite are errors naming the file and the line (the file is
// damaged), and so is a path that is not a regular file.
func ReadLog(path string) ([]nsrnn.EpochRecord, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		// A named pipe would block the open, a device never end.
		return nil, fmt.Errorf("%s: not a regular file (%v)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []nsrnn.EpochRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var r nsrnn.EpochRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		switch {
		case r.Epoch != len(recs)+1:
			return nil, fmt.Errorf("%s:%d: a record of epoch %d where epoch %d was expected: the file is damaged", path, line, r.Epoch, len(recs)+1)
		case !finite(r.ElapsedSeconds, r.EpochSeconds) || r.ElapsedSeconds < 0 || r.EpochSeconds < 0:
			return nil, fmt.Errorf("%s:%d: epoch %d's times (%g s elapsed, %g s for the epoch) are not finite and non-negative: the file is damaged", path, line, r.Epoch, r.ElapsedSeconds, r.EpochSeconds)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}
