package syntaxgym

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nsrnn/nsrnn/internal/readlimit"
)

// Suite is a SyntaxGym test suite.
type Suite struct {
	Name   string // meta.name
	File   string // the file the suite was read from, used in errors
	Metric string // meta.metric, always "sum"

	// RegionMeta maps region numbers, as strings, to region names.
	RegionMeta map[string]string

	Predictions []Prediction
	Items       []Item
}

// Prediction is one of a suite's predictions.
type Prediction struct {
	Formula string // the formula as written in the suite
	Expr    Expr   // the parsed formula, a boolean expression
}

// Item is one item of a suite: a set of minimally different sentences.
type Item struct {
	Number     int // item_number
	Conditions []Condition
}

// Condition is one sentence of an item.
type Condition struct {
	Name string
	// Regions holds the regions' contents: Regions[r] is the text of
	// region number r+1. An empty content is an empty region.
	Regions []string
}

// Condition returns the index in it.Conditions of the condition called
// name, or -1.
func (it *Item) Condition(name string) int {
	for i := range it.Conditions {
		if it.Conditions[i].Name == name {
			return i
		}
	}
	return -1
}

// jsonSuite is the file format of a suite.
type jsonSuite struct {
	Meta *struct {
		Name   string `json:"name"`
		Metric string `json:"metric"`
	} `json:"meta"`
	RegionMeta  map[string]string `json:"region_meta"`
	Predictions []struct {
		Type    string `json:"type"`
		Formula string `json:"formula"`
	} `json:"predictions"`
	Items []struct {
		ItemNumber *int `json:"item_number"`
		Conditions []struct {
			Name    string `json:"condition_name"`
			Regions []struct {
				Number  int    `json:"region_number"`
				Content string `json:"content"`
			} `json:"regions"`
		} `json:"conditions"`
	} `json:"items"`
}

// MaxSuiteBytes is the largest suite or circuits file that ReadSuite and
// ReadCircuits read: a larger one (or a stream that does not end) is an
// error naming it. SyntaxGym's suites are well under a megabyte.
const MaxSuiteBytes = 256 << 20

// ReadSuiteFile reads the suite in the JSON file at path. See ReadSuite.
func ReadSuiteFile(path string) (*Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("syntaxgym: %w", err)
	}
	defer f.Close()
	return ReadSuite(f, path)
}

// ReadSuite reads a suite in SyntaxGym's JSON format from r, parses its
// formulas and validates it (see the package documentation). name, usually
// the file name, is used in errors and recorded in the suite's File.
func ReadSuite(r io.Reader, name string) (*Suite, error) {
	b, err := readlimit.All(r, name, MaxSuiteBytes)
	if err != nil {
		return nil, err
	}
	var js jsonSuite
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, fmt.Errorf("%s: malformed JSON: %w", name, jsonErrorAt(b, err))
	}
	s := &Suite{File: name, RegionMeta: js.RegionMeta}
	if js.Meta == nil {
		return nil, fmt.Errorf("%s: no meta: not a SyntaxGym suite (a test suite's JSON has a \"meta\" object)", name)
	}
	s.Name, s.Metric = js.Meta.Name, js.Meta.Metric
	if s.Name == "" {
		return nil, fmt.Errorf("%s: meta.name is missing", name)
	}
	if s.Metric != "sum" {
		return nil, fmt.Errorf("%s: meta.metric %q is not supported: want \"sum\"", name, s.Metric)
	}
	if len(js.Predictions) == 0 {
		return nil, fmt.Errorf("%s: no predictions", name)
	}
	for i, jp := range js.Predictions {
		if jp.Type != "" && jp.Type != "formula" {
			return nil, fmt.Errorf("%s: predictions[%d]: type %q is not supported: want \"formula\"", name, i, jp.Type)
		}
		e, err := ParseFormula(jp.Formula)
		if err != nil {
			return nil, fmt.Errorf("%s: predictions[%d]: %w", name, i, err)
		}
		s.Predictions = append(s.Predictions, Prediction{Formula: jp.Formula, Expr: e})
	}
	if len(js.Items) == 0 {
		return nil, fmt.Errorf("%s: no items", name)
	}
	seen := map[int]bool{}
	for i, ji := range js.Items {
		if ji.ItemNumber == nil {
			return nil, fmt.Errorf("%s: items[%d]: item_number is missing", name, i)
		}
		it := Item{Number: *ji.ItemNumber}
		if seen[it.Number] {
			return nil, fmt.Errorf("%s: item %d: duplicate item number", name, it.Number)
		}
		seen[it.Number] = true
		if len(ji.Conditions) == 0 {
			return nil, fmt.Errorf("%s: item %d: no conditions", name, it.Number)
		}
		for _, jc := range ji.Conditions {
			if jc.Name == "" {
				return nil, fmt.Errorf("%s: item %d: condition without condition_name", name, it.Number)
			}
			if it.Condition(jc.Name) >= 0 {
				return nil, fmt.Errorf("%s: item %d: duplicate condition %q", name, it.Number, jc.Name)
			}
			if len(jc.Regions) == 0 {
				return nil, fmt.Errorf("%s: item %d, condition %q: no regions", name, it.Number, jc.Name)
			}
			c := Condition{Name: jc.Name, Regions: make([]string, len(jc.Regions))}
			for k, jr := range jc.Regions {
				if jr.Number != k+1 {
					return nil, fmt.Errorf("%s: item %d, condition %q: region %d of %d has region_number %d: regions must be numbered 1..%d in order",
						name, it.Number, jc.Name, k+1, len(jc.Regions), jr.Number, len(jc.Regions))
				}
				c.Regions[k] = jr.Content
			}
			it.Conditions = append(it.Conditions, c)
		}
		s.Items = append(s.Items, it)
	}
	if err := s.checkTerms(); err != nil {
		return nil, err
	}
	return s, nil
}

// checkTerms checks that every prediction names only conditions and
// regions that every item has.
func (s *Suite) checkTerms() error {
	for i := range s.Items {
		it := &s.Items[i]
		for j, p := range s.Predictions {
			for _, t := range Terms(p.Expr) {
				if _, err := it.term(t); err != nil {
					return fmt.Errorf("%s: item %d: predictions[%d] %s: %w", s.File, it.Number, j, formulaString(p.Formula), err)
				}
			}
		}
	}
	return nil
}

// term returns the index of t's condition in it, after checking that the
// condition has t's region.
func (it *Item) term(t *Term) (int, error) {
	c := it.Condition(t.Condition)
	if c < 0 {
		return -1, fmt.Errorf("no condition %q in the item", t.Condition)
	}
	if n := len(it.Conditions[c].Regions); t.Region < 0 || t.Region > n {
		return -1, fmt.Errorf("term %v: condition %q has regions 1..%d", t, t.Condition, n)
	}
	return c, nil
}

// jsonErrorAt adds the line and column (1-based, in bytes) to JSON syntax
// and type errors.
func jsonErrorAt(b []byte, err error) error {
	var off int64 = -1
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		off = se.Offset
	} else if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		off = te.Offset
	}
	if off < 1 || off > int64(len(b)) {
		return err
	}
	// The decoder stops after the offending byte (a syntax error) or after
	// the offending value (a type error).
	pos := int(off) - 1
	line := 1 + bytes.Count(b[:pos], []byte("\n"))
	col := pos - bytes.LastIndexByte(b[:pos], '\n')
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// ReadSuiteDir reads every file named *.json in dir, except circuits.json,
// as a suite, in the order of the file names. Suite names must be unique.
func ReadSuiteDir(dir string) ([]*Suite, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("syntaxgym: %w", err)
	}
	sort.Strings(paths)
	var suites []*Suite
	names := map[string]string{}
	for _, p := range paths {
		if filepath.Base(p) == "circuits.json" {
			continue
		}
		s, err := ReadSuiteFile(p)
		if err != nil {
			return nil, err
		}
		if other, dup := names[s.Name]; dup {
			return nil, fmt.Errorf("%s: suite %q is also the name of %s", p, s.Name, other)
		}
		names[s.Name] = p
		suites = append(suites, s)
	}
	if len(suites) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("syntaxgym: %w", err)
		}
		return nil, fmt.Errorf("syntaxgym: no suites (*.json) in %s", dir)
	}
	return suites, nil
}

// BaseName returns the base name of the suite's file without its ".json"
// extension, for example "cleft" for "suites/cleft.json".
func (s *Suite) BaseName() string {
	return strings.TrimSuffix(filepath.Base(s.File), ".json")
}

// Pairs returns the number of (item, prediction) pairs of the suite.
func (s *Suite) Pairs() int { return len(s.Items) * len(s.Predictions) }

// Sentence is the text of one condition of one item, tokenized.
type Sentence struct {
	ItemNumber int
	Condition  string
	// Text is the contents of the non-empty regions joined by single
	// spaces.
	Text string
	// Tokens are the lowercased, whitespace-separated tokens of Text.
	Tokens []string
	// Region[k] is the number (from 1) of the region of Tokens[k].
	Region []int
}

// Sentences returns the sentences of the suite in suite order: the items
// in order, and within an item its conditions in order.
func (s *Suite) Sentences() []Sentence {
	var out []Sentence
	for _, it := range s.Items {
		for _, c := range it.Conditions {
			sent := Sentence{ItemNumber: it.Number, Condition: c.Name, Tokens: []string{}, Region: []int{}}
			var parts []string
			for r, content := range c.Regions {
				fs := strings.Fields(strings.ToLower(content))
				if len(fs) == 0 {
					continue
				}
				parts = append(parts, content)
				sent.Tokens = append(sent.Tokens, fs...)
				for range fs {
					sent.Region = append(sent.Region, r+1)
				}
			}
			sent.Text = strings.Join(parts, " ")
			out = append(out, sent)
		}
	}
	return out
}

// RegionSurprisals sums per-token surprisals into region surprisals.
// tokens[j][k] is the surprisal, in bits, of token k of sentence j of
// s.Sentences(). In the result, out[i][c][r] is the surprisal of region r+1
// of condition c of item i (indices into s.Items and Conditions): the sum
// over the region's tokens, 0 for an empty region.
func (s *Suite) RegionSurprisals(tokens [][]float64) ([][][]float64, error) {
	sents := s.Sentences()
	if len(tokens) != len(sents) {
		return nil, fmt.Errorf("%s: %d sentences of token surprisals, want %d", s.File, len(tokens), len(sents))
	}
	out := make([][][]float64, len(s.Items))
	j := 0
	for i, it := range s.Items {
		out[i] = make([][]float64, len(it.Conditions))
		for c, cond := range it.Conditions {
			sent := sents[j]
			if len(tokens[j]) != len(sent.Tokens) {
				return nil, fmt.Errorf("%s: item %d, condition %q (sentence %d): %d token surprisals, want %d",
					s.File, it.Number, cond.Name, j+1, len(tokens[j]), len(sent.Tokens))
			}
			regions := make([]float64, len(cond.Regions))
			for k, v := range tokens[j] {
				regions[sent.Region[k]-1] += v
			}
			out[i][c] = regions
			j++
		}
	}
	return out, nil
}
