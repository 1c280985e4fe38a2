package syntaxgym

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/nsrnn/nsrnn/internal/readlimit"
)

// Level is the unit that a suite's score counts.
type Level int

const (
	// PairLevel counts (item, prediction) pairs: a suite's score is the
	// fraction of pairs whose prediction holds. This is the SG score of
	// DuSell & Chiang.
	PairLevel Level = iota
	// ItemLevel counts items, the convention of Hu et al. (2020): an item
	// is correct only when all of the suite's predictions hold on it, and
	// a suite's score is the fraction of correct items.
	ItemLevel
)

// String returns "pair" or "item".
func (l Level) String() string {
	switch l {
	case PairLevel:
		return "pair"
	case ItemLevel:
		return "item"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Result is the score of one suite.
type Result struct {
	Suite    string  `json:"suite"`    // suite name
	Pairs    int     `json:"pairs"`    // number of (item, prediction) pairs
	Correct  int     `json:"correct"`  // number of pairs whose prediction holds
	Accuracy float64 `json:"accuracy"` // Correct / Pairs

	Items        int     `json:"items"`         // number of items
	ItemsCorrect int     `json:"items_correct"` // items on which all predictions hold
	ItemAccuracy float64 `json:"item_accuracy"` // ItemsCorrect / Items

	// Holds[i][p] reports whether prediction p holds on item i (indices
	// into the suite's Items and Predictions).
	Holds [][]bool `json:"-"`
}

// Score returns r.Accuracy for PairLevel and r.ItemAccuracy for ItemLevel.
func (r *Result) Score(l Level) float64 {
	if l == ItemLevel {
		return r.ItemAccuracy
	}
	return r.Accuracy
}

// Evaluate scores the suite's predictions on region surprisals:
// regions[i][c][r] is the surprisal in bits of region r+1 of condition c of
// item i (indices into s.Items and their Conditions), as RegionSurprisals
// returns. Errors name the suite file, the item and the prediction.
func (s *Suite) Evaluate(regions [][][]float64) (*Result, error) {
	if len(s.Items) == 0 || len(s.Predictions) == 0 {
		return nil, fmt.Errorf("%s: suite has %d items and %d predictions: nothing to score", s.File, len(s.Items), len(s.Predictions))
	}
	if len(regions) != len(s.Items) {
		return nil, fmt.Errorf("%s: surprisals for %d items, want %d", s.File, len(regions), len(s.Items))
	}
	res := &Result{Suite: s.Name, Pairs: s.Pairs(), Items: len(s.Items), Holds: make([][]bool, len(s.Items))}
	for i := range s.Items {
		it := &s.Items[i]
		if len(regions[i]) != len(it.Conditions) {
			return nil, fmt.Errorf("%s: item %d: surprisals for %d conditions, want %d", s.File, it.Number, len(regions[i]), len(it.Conditions))
		}
		for c, cond := range it.Conditions {
			if len(regions[i][c]) != len(cond.Regions) {
				return nil, fmt.Errorf("%s: item %d, condition %q: surprisals for %d regions, want %d",
					s.File, it.Number, cond.Name, len(regions[i][c]), len(cond.Regions))
			}
		}
		value := func(t *Term) (float64, error) {
			c, err := it.term(t)
			if err != nil {
				return 0, err
			}
			if t.Region != AllRegions {
				return regions[i][c][t.Region-1], nil
			}
			var sum float64
			for _, v := range regions[i][c] {
				sum += v
			}
			return sum, nil
		}
		res.Holds[i] = make([]bool, len(s.Predictions))
		all := true
		for p, pred := range s.Predictions {
			ok, err := Holds(pred.Expr, value)
			if err != nil {
				return nil, fmt.Errorf("%s: item %d: predictions[%d] %s: %w", s.File, it.Number, p, formulaString(pred.Formula), err)
			}
			res.Holds[i][p] = ok
			if ok {
				res.Correct++
			} else {
				all = false
			}
		}
		if all {
			res.ItemsCorrect++
		}
	}
	res.Accuracy = float64(res.Correct) / float64(res.Pairs)
	res.ItemAccuracy = float64(res.ItemsCorrect) / float64(res.Items)
	return res, nil
}

// EvaluateTokens scores the suite on per-token surprisals:
// tokens[j][k] is the surprisal in bits of token k of sentence j of
// s.Sentences(). It is RegionSurprisals followed by Evaluate.
func (s *Suite) EvaluateTokens(tokens [][]float64) (*Result, error) {
	regions, err := s.RegionSurprisals(tokens)
	if err != nil {
		return nil, err
	}
	return s.Evaluate(regions)
}

// SGScore returns the unweighted mean over the results of their scores at
// level l, or NaN when there are no results.
func SGScore(results []*Result, l Level) float64 {
	if len(results) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, r := range results {
		sum += r.Score(l)
	}
	return sum / float64(len(results))
}

// Circuit is a named group of suites.
type Circuit struct {
	Name   string   `json:"name"`
	Suites []string `json:"suites"` // suite names (meta.name)
}

// ReadCircuitsFile reads the circuits in the JSON file at path. See
// ReadCircuits.
func ReadCircuitsFile(path string) ([]Circuit, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("syntaxgym: %w", err)
	}
	defer f.Close()
	return ReadCircuits(f, path)
}

// ReadCircuits reads circuits from r, a JSON object
//
//	{"circuits": [{"name": "Agreement", "suites": ["number_orc", ...]}, ...]}
//
// Circuit names must be unique and non-empty, and every circuit must name
// at least one suite, none twice. name is used in errors.
func ReadCircuits(r io.Reader, name string) ([]Circuit, error) {
	b, err := readlimit.All(r, name, MaxSuiteBytes)
	if err != nil {
		return nil, err
	}
	var js struct {
		Circuits []Circuit `json:"circuits"`
	}
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, fmt.Errorf("%s: malformed JSON: %w", name, jsonErrorAt(b, err))
	}
	if len(js.Circuits) == 0 {
		return nil, fmt.Errorf("%s: no circuits", name)
	}
	seen := map[string]bool{}
	for i, c := range js.Circuits {
		if c.Name == "" {
			return nil, fmt.Errorf("%s: circuits[%d]: no name", name, i)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("%s: circuit %q: duplicate name", name, c.Name)
		}
		seen[c.Name] = true
		if len(c.Suites) == 0 {
			return nil, fmt.Errorf("%s: circuit %q: no suites", name, c.Name)
		}
		in := map[string]bool{}
		for _, s := range c.Suites {
			if in[s] {
				return nil, fmt.Errorf("%s: circuit %q: suite %q named twice", name, c.Name, s)
			}
			in[s] = true
		}
	}
	return js.Circuits, nil
}

// CircuitScore is the score of a circuit.
type CircuitScore struct {
	Name   string   `json:"name"`
	Suites []string `json:"suites"`
	Score  float64  `json:"score"` // the mean of the suites' scores
}

// CircuitScores returns the score of each circuit at level l: the
// unweighted mean of the scores of its suites, looked up by name in
// results. It returns an error when a circuit names a suite that has no
// result, or when two results have the same suite name.
func CircuitScores(circuits []Circuit, results []*Result, l Level) ([]CircuitScore, error) {
	byName := make(map[string]*Result, len(results))
	for _, r := range results {
		if _, dup := byName[r.Suite]; dup {
			return nil, fmt.Errorf("syntaxgym: two results for suite %q", r.Suite)
		}
		byName[r.Suite] = r
	}
	out := make([]CircuitScore, len(circuits))
	for i, c := range circuits {
		if len(c.Suites) == 0 {
			return nil, fmt.Errorf("syntaxgym: circuit %q has no suites", c.Name)
		}
		var sum float64
		for _, name := range c.Suites {
			r, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("syntaxgym: circuit %q: suite %q was not scored", c.Name, name)
			}
			sum += r.Score(l)
		}
		out[i] = CircuitScore{Name: c.Name, Suites: c.Suites, Score: sum / float64(len(c.Suites))}
	}
	return out, nil
}
