package syntaxgym

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sharedDir holds the 33 suites of the paper's SG score and circuits.json.
const sharedDir = "../../../shared/data/syntaxgym"

func sharedSuites(t *testing.T) []*Suite {
	t.Helper()
	if _, err := os.Stat(sharedDir); err != nil {
		t.Skipf("shared suites not available: %v", err)
	}
	suites, err := ReadSuiteDir(sharedDir)
	if err != nil {
		t.Fatal(err)
	}
	return suites
}

// TestSharedSuites reads the 33 shared suites, checks their counts, and
// checks that every formula round-trips through String.
func TestSharedSuites(t *testing.T) {
	suites := sharedSuites(t)
	if len(suites) != 33 {
		t.Errorf("%d suites, want 33", len(suites))
	}
	var predictions, pairs, sentences int
	for _, s := range suites {
		if s.BaseName() != s.Name {
			t.Errorf("%s: suite name %q differs from the file name", s.File, s.Name)
		}
		predictions += len(s.Predictions)
		pairs += s.Pairs()
		for i, p := range s.Predictions {
			again, err := ParseFormula(p.Expr.String())
			if err != nil {
				t.Errorf("%s: predictions[%d] %q: String %q does not parse: %v", s.File, i, p.Formula, p.Expr, err)
				continue
			}
			if !reflect.DeepEqual(again, p.Expr) {
				t.Errorf("%s: predictions[%d] %q does not round-trip through %q", s.File, i, p.Formula, p.Expr)
			}
			if len(Terms(p.Expr)) < 2 {
				t.Errorf("%s: predictions[%d] %q has %d terms", s.File, i, p.Formula, len(Terms(p.Expr)))
			}
		}
		sents := s.Sentences()
		sentences += len(sents)
		for _, sent := range sents {
			if len(sent.Tokens) == 0 || len(sent.Tokens) != len(sent.Region) || strings.Join(sent.Tokens, " ") != strings.ToLower(sent.Text) {
				t.Errorf("%s: item %d, condition %q: sentence %+v", s.File, sent.ItemNumber, sent.Condition, sent)
			}
		}
		// Scoring with every token's surprisal equal to 1 gives a result
		// of the right shape.
		tokens := make([][]float64, len(sents))
		for j, sent := range sents {
			tokens[j] = make([]float64, len(sent.Tokens))
			for k := range tokens[j] {
				tokens[j][k] = 1
			}
		}
		res, err := s.EvaluateTokens(tokens)
		if err != nil {
			t.Errorf("%s: %v", s.File, err)
		} else if res.Pairs != s.Pairs() || res.Items != len(s.Items) || res.Correct > res.Pairs {
			t.Errorf("%s: result %+v", s.File, res)
		}
	}
	if predictions != 72 || pairs != 1850 {
		t.Errorf("%d predictions and %d (item, prediction) pairs, want 72 and 1850", predictions, pairs)
	}
	t.Logf("%d suites, %d predictions, %d pairs, %d sentences", len(suites), predictions, pairs, sentences)
}

// TestSharedCircuits checks that the shared circuits cover each suite
// exactly once.
func TestSharedCircuits(t *testing.T) {
	suites := sharedSuites(t)
	circuits, err := ReadCircuitsFile(filepath.Join(sharedDir, "circuits.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(circuits) != 6 {
		t.Errorf("%d circuits, want 6", len(circuits))
	}
	var inCircuits, names []string
	results := make([]*Result, len(suites))
	for i, s := range suites {
		names = append(names, s.Name)
		results[i] = &Result{Suite: s.Name, Accuracy: 1, ItemAccuracy: 1}
	}
	for _, c := range circuits {
		inCircuits = append(inCircuits, c.Suites...)
	}
	slices.Sort(inCircuits)
	if !slices.Equal(inCircuits, names) {
		t.Errorf("the circuits' suites %v are not the suites %v", inCircuits, names)
	}
	scores, err := CircuitScores(circuits, results, PairLevel)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range scores {
		if c.Score != 1 {
			t.Errorf("circuit %q: score %v, want 1", c.Name, c.Score)
		}
	}
}

func TestReadSuiteDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadSuiteDir(dir); err == nil || !strings.Contains(err.Error(), "no suites") {
		t.Errorf("ReadSuiteDir of an empty directory: %v", err)
	}
	if _, err := ReadSuiteDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("ReadSuiteDir of a missing directory succeeded")
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("circuits.json", `{"circuits": [{"name": "c", "suites": ["a", "b"]}]}`)
	write("notes.txt", "not a suite")
	a := `{"meta": {"name": "NAME", "metric": "sum"}, "predictions": [{"formula": "(1;%x%) > 0"}],
		"items": [{"item_number": 1, "conditions": [{"condition_name": "x", "regions": [{"region_number": 1, "content": "hi"}]}]}]}`
	write("b.json", strings.Replace(a, "NAME", "b", 1))
	write("a.json", strings.Replace(a, "NAME", "a", 1))
	suites, err := ReadSuiteDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) != 2 || suites[0].Name != "a" || suites[1].Name != "b" || suites[0].File != filepath.Join(dir, "a.json") {
		t.Errorf("suites %v", suites)
	}
	write("c.json", strings.Replace(a, "NAME", "a", 1))
	if _, err := ReadSuiteDir(dir); err == nil || !strings.Contains(err.Error(), `c.json: suite "a" is also the name of `) {
		t.Errorf("ReadSuiteDir with a duplicate name: %v", err)
	}
	write("c.json", strings.Replace(a, `"x", "regions"`, `"y", "regions"`, 1))
	if _, err := ReadSuiteDir(dir); err == nil || !strings.Contains(err.Error(), `c.json: item 1: predictions[0] "(1;%x%) > 0": no condition "x"`) {
		t.Errorf("ReadSuiteDir with a bad suite: %v", err)
	}
}
