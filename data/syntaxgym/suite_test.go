package syntaxgym

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// Types mirroring the suite file format, to build test suites.
type (
	tSuite struct {
		Meta        map[string]any    `json:"meta,omitempty"`
		RegionMeta  map[string]string `json:"region_meta,omitempty"`
		Predictions []tPrediction     `json:"predictions"`
		Items       []tItem           `json:"items"`
	}
	tPrediction struct {
		Type    string `json:"type,omitempty"`
		Formula string `json:"formula"`
	}
	tItem struct {
		Number     *int         `json:"item_number,omitempty"`
		Conditions []tCondition `json:"conditions"`
	}
	tCondition struct {
		Name    string    `json:"condition_name"`
		Regions []tRegion `json:"regions"`
	}
	tRegion struct {
		Number  int    `json:"region_number"`
		Content string `json:"content"`
	}
)

func intp(n int) *int { return &n }

func tCond(name string, contents ...string) tCondition {
	c := tCondition{Name: name}
	for i, s := range contents {
		c.Regions = append(c.Regions, tRegion{Number: i + 1, Content: s})
	}
	return c
}

// toySuite has two items of two conditions of three regions, and two
// predictions.
func toySuite() *tSuite {
	return &tSuite{
		Meta:       map[string]any{"name": "toy", "metric": "sum", "author": "nobody"},
		RegionMeta: map[string]string{"1": "subject", "2": "verb", "3": "end"},
		Predictions: []tPrediction{
			{Type: "formula", Formula: "(2;%good%) < (2;%bad%)"},
			{Type: "formula", Formula: "(*;%good%) < (*;%bad%)"},
		},
		Items: []tItem{
			{Number: intp(1), Conditions: []tCondition{
				tCond("good", "The cat", "sleeps", "."),
				tCond("bad", "The  Cat ", "sleep", ""),
			}},
			{Number: intp(7), Conditions: []tCondition{
				tCond("bad", "Dogs", "barks", "loudly ."),
				tCond("good", "Dogs", "bark", "loudly ."),
			}},
		},
	}
}

func (s *tSuite) read(t *testing.T, name string) (*Suite, error) {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return ReadSuite(strings.NewReader(string(b)), name)
}

func TestReadSuite(t *testing.T) {
	s, err := toySuite().read(t, "dir/toy.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "toy" || s.File != "dir/toy.json" || s.Metric != "sum" || s.BaseName() != "toy" {
		t.Errorf("name %q, file %q, metric %q, base name %q", s.Name, s.File, s.Metric, s.BaseName())
	}
	if s.RegionMeta["2"] != "verb" {
		t.Errorf("region_meta %v", s.RegionMeta)
	}
	if len(s.Predictions) != 2 || s.Predictions[1].Formula != "(*;%good%) < (*;%bad%)" ||
		!reflect.DeepEqual(s.Predictions[1].Expr, bin(Less, term(AllRegions, "good"), term(AllRegions, "bad"))) {
		t.Errorf("predictions %+v", s.Predictions)
	}
	if len(s.Items) != 2 || s.Items[1].Number != 7 || s.Items[1].Condition("good") != 1 || s.Items[1].Condition("ugly") != -1 {
		t.Errorf("items %+v", s.Items)
	}
	if !reflect.DeepEqual(s.Items[0].Conditions[1], Condition{Name: "bad", Regions: []string{"The  Cat ", "sleep", ""}}) {
		t.Errorf("condition %+v", s.Items[0].Conditions[1])
	}
	if s.Pairs() != 4 {
		t.Errorf("Pairs() = %d, want 4", s.Pairs())
	}

	want := []Sentence{
		{1, "good", "The cat sleeps .", []string{"the", "cat", "sleeps", "."}, []int{1, 1, 2, 3}},
		{1, "bad", "The  Cat  sleep", []string{"the", "cat", "sleep"}, []int{1, 1, 2}},
		{7, "bad", "Dogs barks loudly .", []string{"dogs", "barks", "loudly", "."}, []int{1, 2, 3, 3}},
		{7, "good", "Dogs bark loudly .", []string{"dogs", "bark", "loudly", "."}, []int{1, 2, 3, 3}},
	}
	if got := s.Sentences(); !reflect.DeepEqual(got, want) {
		t.Errorf("Sentences() =\n%+v\nwant\n%+v", got, want)
	}
}

// spaces is an endless stream of spaces, as a device or a pipe that does
// not end would be.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestReadEndless: a suite or circuits file that does not end is refused
// once it passes MaxSuiteBytes, with an error naming it.
func TestReadEndless(t *testing.T) {
	if _, err := ReadSuite(spaces{}, "endless.json"); err == nil || !strings.Contains(err.Error(), "endless.json") || !strings.Contains(err.Error(), "256 MiB") {
		t.Errorf("ReadSuite: %v", err)
	}
	if _, err := ReadCircuits(spaces{}, "endless.json"); err == nil || !strings.Contains(err.Error(), "endless.json") || !strings.Contains(err.Error(), "256 MiB") {
		t.Errorf("ReadCircuits: %v", err)
	}
}

func TestSentencesEmptyRegions(t *testing.T) {
	ts := toySuite()
	ts.Items = ts.Items[:1]
	ts.Items[0].Conditions[0] = tCond("good", "", "  ", "A", "", "b c")
	ts.Items[0].Conditions[1] = tCond("bad", "", "", "")
	s, err := ts.read(t, "toy.json")
	if err != nil {
		t.Fatal(err)
	}
	sents := s.Sentences()
	want := []Sentence{
		{1, "good", "A b c", []string{"a", "b", "c"}, []int{3, 5, 5}},
		{1, "bad", "", []string{}, []int{}},
	}
	if !reflect.DeepEqual(sents, want) {
		t.Errorf("Sentences() = %+v, want %+v", sents, want)
	}
	regions, err := s.RegionSurprisals([][]float64{{1, 2, 4}, {}})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][][]float64{{{0, 0, 1, 0, 6}, {0, 0, 0}}}; !reflect.DeepEqual(regions, want) {
		t.Errorf("RegionSurprisals = %v, want %v", regions, want)
	}
	if _, err := s.RegionSurprisals([][]float64{{1, 2, 4}}); err == nil || !strings.Contains(err.Error(), "toy.json: 1 sentences") {
		t.Errorf("RegionSurprisals with a missing sentence: %v", err)
	}
	if _, err := s.RegionSurprisals([][]float64{{1, 2}, {}}); err == nil ||
		!strings.Contains(err.Error(), `toy.json: item 1, condition "good" (sentence 1): 2 token surprisals, want 3`) {
		t.Errorf("RegionSurprisals with a missing token: %v", err)
	}
}

// TestEvaluate scores hand-made suites with known answers. Each item has
// the conditions a and b with two regions each.
func TestEvaluate(t *testing.T) {
	type item [2][2]float64 // [condition a, b][region 1, 2]
	for _, tc := range []struct {
		name        string
		predictions []string
		items       []item
		holds       [][]bool
	}{
		{
			name:        "less, with a tie",
			predictions: []string{"(2;%a%) < (2;%b%)"},
			items:       []item{{{0, 1}, {0, 2}}, {{0, 2}, {0, 2}}, {{0, 3}, {0, 2}}},
			holds:       [][]bool{{true}, {false}, {false}},
		},
		{
			name:        "greater, with a tie",
			predictions: []string{"(1;%a%) > (1;%b%)"},
			items:       []item{{{2, 0}, {1, 0}}, {{1, 0}, {1, 0}}},
			holds:       [][]bool{{true}, {false}},
		},
		{
			name:        "close",
			predictions: []string{"(1;%a%) = (1;%b%)", "(1;%a%) = 10"},
			items:       []item{{{10, 0}, {10.0009, 0}}, {{10, 0}, {10.002, 0}}, {{10.00105, 0}, {10, 0}}},
			holds:       [][]bool{{true, true}, {false, true}, {true, true}},
		},
		{
			name:        "all regions",
			predictions: []string{"(*;%a%) < (*;%b%)", "(*;%a%) - (1;%a%) = (2;%a%)"},
			items:       []item{{{1, 5}, {3, 4}}, {{1, 6}, {3, 4}}, {{1, 7}, {3, 4}}},
			holds:       [][]bool{{true, true}, {false, true}, {false, true}},
		},
		{
			name: "and, or, precedence and parentheses",
			predictions: []string{
				"(1;%a%) < (1;%b%) & (2;%a%) < (2;%b%)",
				"(1;%a%) < (1;%b%) | (2;%a%) < (2;%b%)",
				"(1;%a%) > 100 & (1;%a%) > 100 | (2;%a%) < (2;%b%)",
				"(1;%a%) > 100 & ((1;%a%) > 100 | (2;%a%) < (2;%b%))",
			},
			items: []item{{{1, 1}, {2, 2}}, {{1, 3}, {2, 2}}, {{3, 3}, {2, 2}}},
			holds: [][]bool{{true, true, true, false}, {false, true, false, false}, {false, false, false, false}},
		},
		{
			name:        "arithmetic",
			predictions: []string{"((2;%b%) - (2;%a%)) - ((1;%b%) - (1;%a%)) > 0", "(2;%b%) - (2;%a%) - (1;%b%) - (1;%a%) > 0"},
			items:       []item{{{1, 1}, {2, 4}}, {{1, 1}, {3, 2}}},
			holds:       [][]bool{{true, false}, {false, false}},
		},
	} {
		ts := toySuite()
		ts.Predictions = nil
		for _, p := range tc.predictions {
			ts.Predictions = append(ts.Predictions, tPrediction{Formula: p})
		}
		ts.Items = nil
		regions := make([][][]float64, len(tc.items))
		for i, it := range tc.items {
			ts.Items = append(ts.Items, tItem{Number: intp(i + 1), Conditions: []tCondition{tCond("a", "x", "y"), tCond("b", "x", "z")}})
			regions[i] = [][]float64{it[0][:], it[1][:]}
		}
		s, err := ts.read(t, "toy.json")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		res, err := s.Evaluate(regions)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(res.Holds, tc.holds) {
			t.Errorf("%s: holds %v, want %v", tc.name, res.Holds, tc.holds)
		}
		var correct, itemsCorrect int
		for _, h := range tc.holds {
			all := true
			for _, ok := range h {
				if ok {
					correct++
				} else {
					all = false
				}
			}
			if all {
				itemsCorrect++
			}
		}
		pairs := len(tc.items) * len(tc.predictions)
		want := &Result{
			Suite: "toy", Pairs: pairs, Correct: correct, Accuracy: float64(correct) / float64(pairs),
			Items: len(tc.items), ItemsCorrect: itemsCorrect, ItemAccuracy: float64(itemsCorrect) / float64(len(tc.items)),
			Holds: tc.holds,
		}
		if !reflect.DeepEqual(res, want) {
			t.Errorf("%s: result %+v, want %+v", tc.name, res, want)
		}
		if res.Score(PairLevel) != want.Accuracy || res.Score(ItemLevel) != want.ItemAccuracy {
			t.Errorf("%s: scores %v, %v", tc.name, res.Score(PairLevel), res.Score(ItemLevel))
		}
	}
}

// TestEvaluateTokens checks the path from token surprisals to the result,
// with the pair and item levels differing.
func TestEvaluateTokens(t *testing.T) {
	s, err := toySuite().read(t, "toy.json")
	if err != nil {
		t.Fatal(err)
	}
	// Sentences: good "the cat sleeps .", bad "the cat sleep",
	// bad "dogs barks loudly .", good "dogs bark loudly .".
	tokens := [][]float64{
		{1, 1, 2, 1}, // verb 2, total 5
		{1, 1, 3},    // verb 3, total 5: prediction 0 holds, 1 is a tie
		{1, 4, 1, 1}, // verb 4, total 7
		{1, 2, 1, 1}, // verb 2, total 5: both hold
	}
	res, err := s.EvaluateTokens(tokens)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pairs != 4 || res.Correct != 3 || res.Accuracy != 0.75 || res.Items != 2 || res.ItemsCorrect != 1 || res.ItemAccuracy != 0.5 {
		t.Errorf("result %+v", res)
	}
	if _, err := s.EvaluateTokens(tokens[:3]); err == nil {
		t.Error("EvaluateTokens with a missing sentence succeeded")
	}
}

func TestEvaluateErrors(t *testing.T) {
	s, err := toySuite().read(t, "toy.json")
	if err != nil {
		t.Fatal(err)
	}
	ok := [][][]float64{{{1, 2, 3}, {1, 2, 3}}, {{1, 2, 3}, {1, 2, 3}}}
	if _, err := s.Evaluate(ok); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		regions [][][]float64
		msg     string
	}{
		{ok[:1], "toy.json: surprisals for 1 items, want 2"},
		{[][][]float64{ok[0], ok[1][:1]}, "toy.json: item 7: surprisals for 1 conditions, want 2"},
		{[][][]float64{ok[0], {{1, 2}, {1, 2, 3}}}, `toy.json: item 7, condition "bad": surprisals for 2 regions, want 3`},
	} {
		if _, err := s.Evaluate(tc.regions); err == nil || err.Error() != tc.msg {
			t.Errorf("Evaluate: error %v, want %q", err, tc.msg)
		}
	}
	// A suite built by hand, without the checks of ReadSuite.
	s.Predictions = append(s.Predictions, Prediction{Formula: "(4;%good%) > 0", Expr: bin(Greater, term(4, "good"), num(0))})
	_, err = s.Evaluate(ok)
	if want := `toy.json: item 1: predictions[2] "(4;%good%) > 0": term (4;%good%): condition "good" has regions 1..3`; err == nil || err.Error() != want {
		t.Errorf("Evaluate: error %v, want %q", err, want)
	}
	if _, err := (&Suite{File: "empty.json"}).Evaluate(nil); err == nil || !strings.Contains(err.Error(), "empty.json: suite has 0 items and 0 predictions") {
		t.Errorf("Evaluate of an empty suite: %v", err)
	}
}

// TestReadSuiteErrors checks that every invalid suite is rejected with an
// error that names the file and, where it applies, the item and the
// prediction.
func TestReadSuiteErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(s *tSuite)
		want   []string // substrings of the error, after "bad.json: "
	}{
		{"no meta", func(s *tSuite) { s.Meta = nil }, []string{"no meta"}},
		{"no name", func(s *tSuite) { delete(s.Meta, "name") }, []string{"meta.name is missing"}},
		{"metric mean", func(s *tSuite) { s.Meta["metric"] = "mean" }, []string{`meta.metric "mean" is not supported: want "sum"`}},
		{"no metric", func(s *tSuite) { delete(s.Meta, "metric") }, []string{`meta.metric "" is not supported`}},
		{"no predictions", func(s *tSuite) { s.Predictions = nil }, []string{"no predictions"}},
		{"prediction type", func(s *tSuite) { s.Predictions[1].Type = "python" }, []string{`predictions[1]: type "python" is not supported`}},
		{"formula syntax", func(s *tSuite) { s.Predictions[1].Formula = "(2;%good%) < (2;%bad%" },
			[]string{`predictions[1]: formula "(2;%good%) < (2;%bad%": column 22: unexpected end of formula: want ")" closing the term`}},
		{"formula is a number", func(s *tSuite) { s.Predictions[0].Formula = "(2;%good%) - (2;%bad%)" },
			[]string{`predictions[0]: formula "(2;%good%) - (2;%bad%)": column 1: formula is a number`}},
		{"unknown condition", func(s *tSuite) { s.Predictions[1].Formula = "(2;%good%) < (2;%ugly%)" },
			[]string{`item 1: predictions[1] "(2;%good%) < (2;%ugly%)": no condition "ugly" in the item`}},
		{"condition missing from one item", func(s *tSuite) { s.Items[1].Conditions[1].Name = "fine" },
			[]string{`item 7: predictions[0] "(2;%good%) < (2;%bad%)": no condition "good" in the item`}},
		{"region out of range", func(s *tSuite) { s.Predictions[0].Formula = "(4;%good%) < (2;%bad%)" },
			[]string{`item 1: predictions[0] "(4;%good%) < (2;%bad%)": term (4;%good%): condition "good" has regions 1..3`}},
		{"region missing in one item", func(s *tSuite) {
			s.Items[1].Conditions[0] = tCond("bad", "Dogs", "barks")
			s.Predictions[1].Formula = "(3;%bad%) > 0"
		}, []string{`item 7: predictions[1] "(3;%bad%) > 0": term (3;%bad%): condition "bad" has regions 1..2`}},
		{"regions out of order", func(s *tSuite) {
			r := s.Items[1].Conditions[1].Regions
			r[1], r[2] = r[2], r[1]
		}, []string{`item 7, condition "good": region 2 of 3 has region_number 3: regions must be numbered 1..3 in order`}},
		{"regions from 0", func(s *tSuite) {
			for i := range s.Items[0].Conditions[0].Regions {
				s.Items[0].Conditions[0].Regions[i].Number--
			}
		}, []string{`item 1, condition "good": region 1 of 3 has region_number 0`}},
		{"region gap", func(s *tSuite) { s.Items[0].Conditions[1].Regions[2].Number = 4 },
			[]string{`item 1, condition "bad": region 3 of 3 has region_number 4`}},
		{"no regions", func(s *tSuite) { s.Items[0].Conditions[1].Regions = nil }, []string{`item 1, condition "bad": no regions`}},
		{"no items", func(s *tSuite) { s.Items = nil }, []string{"no items"}},
		{"no item number", func(s *tSuite) { s.Items[1].Number = nil }, []string{"items[1]: item_number is missing"}},
		{"duplicate item", func(s *tSuite) { s.Items[1].Number = intp(1) }, []string{"item 1: duplicate item number"}},
		{"no conditions", func(s *tSuite) { s.Items[1].Conditions = nil }, []string{"item 7: no conditions"}},
		{"duplicate condition", func(s *tSuite) { s.Items[1].Conditions[0].Name = "good" }, []string{`item 7: duplicate condition "good"`}},
		{"unnamed condition", func(s *tSuite) { s.Items[1].Conditions[0].Name = "" }, []string{"item 7: condition without condition_name"}},
	} {
		ts := toySuite()
		tc.change(ts)
		_, err := ts.read(t, "bad.json")
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "bad.json: ") {
			t.Errorf("%s: error %q does not start with the file name", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tc.name, err, w)
			}
		}
	}
}

func TestReadSuiteMalformedJSON(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"", "bad.json: malformed JSON: unexpected end of JSON input"},
		{"{\"meta\": {\"name\": \"x\",\n  \"metric\": \"sum\",}}", "bad.json: malformed JSON: line 2, column 19: invalid character '}'"},
		{"{\"items\": [{\"item_number\": \"1\"}]}", "bad.json: malformed JSON: line 1, column 30: json: cannot unmarshal string"},
		{"[1, 2]", "bad.json: malformed JSON: line 1, column 1: json: cannot unmarshal array"},
		{"{} {}", "bad.json: malformed JSON: line 1, column 4: invalid character '{' after top-level value"},
	} {
		_, err := ReadSuite(strings.NewReader(tc.src), "bad.json")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ReadSuite(%q): error %v, want prefix %q", tc.src, err, tc.want)
		}
	}
}

func TestSGScoreAndCircuits(t *testing.T) {
	results := []*Result{
		{Suite: "s1", Accuracy: 1, ItemAccuracy: 0.5},
		{Suite: "s2", Accuracy: 0.5, ItemAccuracy: 0},
		{Suite: "s3", Accuracy: 0.25, ItemAccuracy: 0.25},
	}
	if got := SGScore(results, PairLevel); got != 1.75/3 {
		t.Errorf("SGScore(pair) = %v", got)
	}
	if got := SGScore(results, ItemLevel); got != 0.75/3 {
		t.Errorf("SGScore(item) = %v", got)
	}
	if !math.IsNaN(SGScore(nil, PairLevel)) {
		t.Error("SGScore(nil) is not NaN")
	}
	circuits, err := ReadCircuits(strings.NewReader(`{"circuits": [{"name": "A", "suites": ["s1", "s2"]}, {"name": "B", "suites": ["s3"]}]}`), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := CircuitScores(circuits, results, PairLevel)
	if err != nil {
		t.Fatal(err)
	}
	want := []CircuitScore{{"A", []string{"s1", "s2"}, 0.75}, {"B", []string{"s3"}, 0.25}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CircuitScores = %+v, want %+v", got, want)
	}
	got, err = CircuitScores(circuits, results, ItemLevel)
	if err != nil || got[0].Score != 0.25 || got[1].Score != 0.25 {
		t.Errorf("CircuitScores(item) = %+v, %v", got, err)
	}
	if _, err := CircuitScores(circuits, results[:2], PairLevel); err == nil || err.Error() != `syntaxgym: circuit "B": suite "s3" was not scored` {
		t.Errorf("CircuitScores with a missing suite: %v", err)
	}
	if _, err := CircuitScores(circuits, append(results, results[0]), PairLevel); err == nil || !strings.Contains(err.Error(), `two results for suite "s1"`) {
		t.Errorf("CircuitScores with a duplicate suite: %v", err)
	}

	for _, tc := range []struct{ src, want string }{
		{`{"circuits": []}`, "c.json: no circuits"},
		{`{"circuits": [{"name": "", "suites": ["a"]}]}`, "c.json: circuits[0]: no name"},
		{`{"circuits": [{"name": "A", "suites": ["a"]}, {"name": "A", "suites": ["b"]}]}`, `c.json: circuit "A": duplicate name`},
		{`{"circuits": [{"name": "A", "suites": []}]}`, `c.json: circuit "A": no suites`},
		{`{"circuits": [{"name": "A", "suites": ["a", "a"]}]}`, `c.json: circuit "A": suite "a" named twice`},
		{`{"circuits": [}`, "c.json: malformed JSON: line 1, column 15"},
	} {
		if _, err := ReadCircuits(strings.NewReader(tc.src), "c.json"); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ReadCircuits(%s): error %v, want %q", tc.src, err, tc.want)
		}
	}
}

// FuzzReadSuite reads arbitrary suite files. A file is refused with an
// error naming it, or gives a suite whose sentences can be scored: token
// surprisals of 1 bit each sum to regions of their token counts, and
// Evaluate scores every (item, prediction) pair.
func FuzzReadSuite(f *testing.F) {
	b, err := json.Marshal(toySuite())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"meta":{"name":"x","metric":"sum"},"predictions":[{"formula":"(1;%a%) > 0"}],"items":[{"item_number":1,"conditions":[{"condition_name":"a","regions":[{"region_number":1,"content":"w"}]}]}]}`))
	f.Add([]byte(`{"meta":{"name":"x","metric":"sum"},"predictions":[],"items":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadSuite(strings.NewReader(string(b)), "fuzz.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		sents := s.Sentences()
		tokens := make([][]float64, len(sents))
		for i, sent := range sents {
			tokens[i] = make([]float64, len(sent.Tokens))
			for k := range tokens[i] {
				tokens[i][k] = 1
			}
		}
		regions, err := s.RegionSurprisals(tokens)
		if err != nil {
			t.Fatalf("RegionSurprisals: %v", err)
		}
		j := 0
		for i, it := range s.Items {
			for c, cond := range it.Conditions {
				total := 0.0
				for _, v := range regions[i][c] {
					total += v
				}
				if len(regions[i][c]) != len(cond.Regions) || total != float64(len(sents[j].Tokens)) {
					t.Fatalf("item %d condition %q: regions %v for %d tokens", it.Number, cond.Name, regions[i][c], len(sents[j].Tokens))
				}
				j++
			}
		}
		res, err := s.Evaluate(regions)
		if err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
		if res == nil {
			t.Fatal("Evaluate: no result")
		}
	})
}
