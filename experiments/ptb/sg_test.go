package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data/syntaxgym"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func sgRun(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	status := prog.Main(append([]string{"sg"}, args...), &stdout, &stderr)
	return status, stdout.String(), stderr.String()
}

func sgWrite(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sgSuiteJSON returns a suite of agreement items: each item is [subject,
// matching verb, mismatching verb], and the prediction is that the matching
// verb is less surprising.
func sgSuiteJSON(name string, items [][3]string) string {
	type region struct {
		N       int    `json:"region_number"`
		Content string `json:"content"`
	}
	type cond struct {
		Name    string   `json:"condition_name"`
		Regions []region `json:"regions"`
	}
	type item struct {
		N          int    `json:"item_number"`
		Conditions []cond `json:"conditions"`
	}
	s := map[string]any{
		"meta":        map[string]string{"name": name, "metric": "sum"},
		"region_meta": map[string]string{"1": "subject", "2": "verb"},
		"predictions": []map[string]string{
			{"type": "formula", "formula": "(2;%match%) < (2;%mismatch%)"},
			{"type": "formula", "formula": "(*;%match%) < (*;%mismatch%)"},
		},
	}
	var its []item
	for i, it := range items {
		its = append(its, item{N: i + 1, Conditions: []cond{
			{"match", []region{{1, it[0]}, {2, it[1]}}},
			{"mismatch", []region{{1, it[0]}, {2, it[2]}}},
		}})
	}
	s["items"] = its
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// sgLengthSurprisals is a fake language model: a token's surprisal is its
// length in bits, so a prediction holds when the matching verb is shorter.
func sgLengthSurprisals(s *syntaxgym.Suite) ([][]float64, error) {
	sents := s.Sentences()
	out := make([][]float64, len(sents))
	for j, sent := range sents {
		out[j] = make([]float64, len(sent.Tokens))
		for k, tok := range sent.Tokens {
			out[j][k] = float64(len(tok))
		}
	}
	return out, nil
}

// sgWriteTSV writes the fake model's surprisals of the suite in file.
func sgWriteTSV(t *testing.T, suiteFile, tsvFile string) {
	t.Helper()
	s, err := syntaxgym.ReadSuiteFile(suiteFile)
	if err != nil {
		t.Fatal(err)
	}
	surprisals, _ := sgLengthSurprisals(s)
	var b bytes.Buffer
	if err := syntaxgym.WriteSurprisals(&b, s.Sentences(), surprisals); err != nil {
		t.Fatal(err)
	}
	sgWrite(t, tsvFile, b.String())
}

// The fixture: three suites with known scores under the fake model.
//
//	agree: items 1 and 2 hold both predictions, item 3 neither, item 4 is a
//	  tie (neither): pairs 4/8, items 2/4.
//	refl: item 1 holds both, item 2 neither: pairs 2/4, items 1/2.
//	all: both items hold both: pairs 4/4, items 2/2.
var sgFixture = []struct {
	name  string
	items [][3]string
}{
	{"agree", [][3]string{{"The dogs", "bark", "barks"}, {"The cat", "runs", "runned"}, {"The cat", "sleeps", "sleep"}, {"It", "is", "am"}}},
	{"refl", [][3]string{{"He saw", "him", "herself"}, {"She saw", "herself", "her"}}},
	{"all", [][3]string{{"A", "b", "cc"}, {"D", "e", "ff"}}},
}

// sgSetup writes the fixture's suites under dir/suites, its surprisals
// under dir/tsv and circuits in dir/circuits.json.
func sgSetup(t *testing.T) (dir string) {
	dir = t.TempDir()
	for _, f := range sgFixture {
		suite := sgWrite(t, filepath.Join(dir, "suites", f.name+".json"), sgSuiteJSON(f.name, f.items))
		sgWriteTSV(t, suite, filepath.Join(dir, "tsv", f.name+".tsv"))
	}
	sgWrite(t, filepath.Join(dir, "circuits.json"),
		`{"circuits": [{"name": "Agreement", "suites": ["agree"]}, {"name": "Other", "suites": ["refl", "all"]}]}`)
	return dir
}

func TestSGSuite(t *testing.T) {
	dir := sgSetup(t)
	suite := filepath.Join(dir, "suites", "agree.json")
	tsv := filepath.Join(dir, "tsv", "agree.tsv")
	for _, tc := range []struct {
		args  []string
		level string
		score float64
	}{
		{nil, "pair", 0.5},
		{[]string{"--item-level"}, "item", 0.5},
	} {
		status, out, errOut := sgRun(append([]string{"--suite", suite, "--surprisals", tsv, "--json"}, tc.args...)...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", tc.args, status, errOut)
		}
		if strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("output is not one line: %q", out)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		want := map[string]any{
			"suite": "agree", "file": suite, "pairs": 8.0, "correct": 4.0, "accuracy": 0.5,
			"items": 4.0, "items_correct": 2.0, "item_accuracy": 0.5, "level": tc.level, "score": tc.score,
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%v: %q is %v, want %v", tc.args, k, got[k], v)
			}
		}
	}

	status, out, errOut := sgRun("--suite", filepath.Join(dir, "suites", "refl.json"), "--surprisals", filepath.Join(dir, "tsv", "refl.tsv"), "--item-level")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	for _, line := range []string{"suite          refl (", "pairs          4\n", "correct pairs  2\n", "accuracy       0.5000\n", "item accuracy  0.5000\n", "score          0.5000 (item level)\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("output\n%s\ndoes not contain %q", out, line)
		}
	}
}

func TestSGSuites(t *testing.T) {
	dir := sgSetup(t)
	args := []string{"--suites", filepath.Join(dir, "suites"), "--surprisals", filepath.Join(dir, "tsv"), "--circuits", filepath.Join(dir, "circuits.json")}
	for _, tc := range []struct {
		level    string
		scores   []float64 // agree, all, refl: the order of the file names
		sg       float64
		circuits []float64
	}{
		{"pair", []float64{0.5, 1, 0.5}, 2.0 / 3, []float64{0.5, 0.75}},
		{"item", []float64{0.5, 1, 0.5}, 2.0 / 3, []float64{0.5, 0.75}},
	} {
		a := append(args, "--json")
		if tc.level == "item" {
			a = append(a, "--item-level")
		}
		status, out, errOut := sgRun(a...)
		if status != 0 {
			t.Fatalf("status %d: %s", status, errOut)
		}
		var got struct {
			Level  string `json:"level"`
			Suites []struct {
				Suite    string  `json:"suite"`
				Pairs    int     `json:"pairs"`
				Accuracy float64 `json:"accuracy"`
				Score    float64 `json:"score"`
			} `json:"suites"`
			SGScore  float64 `json:"sg_score"`
			Circuits []struct {
				Name   string   `json:"name"`
				Suites []string `json:"suites"`
				Score  float64  `json:"score"`
			} `json:"circuits"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		if got.Level != tc.level || len(got.Suites) != 3 || len(got.Circuits) != 2 {
			t.Fatalf("output %s", out)
		}
		for i, name := range []string{"agree", "all", "refl"} {
			if s := got.Suites[i]; s.Suite != name || s.Score != tc.scores[i] {
				t.Errorf("%s level: suite %d: %+v, want %s with score %v", tc.level, i, s, name, tc.scores[i])
			}
		}
		if math.Abs(got.SGScore-tc.sg) > 1e-15 {
			t.Errorf("%s level: SG score %v, want %v", tc.level, got.SGScore, tc.sg)
		}
		for i, c := range got.Circuits {
			if c.Score != tc.circuits[i] {
				t.Errorf("%s level: circuit %+v, want score %v", tc.level, c, tc.circuits[i])
			}
		}
	}

	// The pair and item levels differ on a suite where one of its two
	// predictions holds: the verb a (1 bit) is less surprising than bb (2),
	// but the sentences Xx a and X bb tie (3 bits).
	mixed := sgSuiteJSON("mixed", [][3]string{{"Xx", "a", "bb"}})
	mixed = strings.Replace(mixed, `{"condition_name":"mismatch","regions":[{"region_number":1,"content":"Xx"}`, `{"condition_name":"mismatch","regions":[{"region_number":1,"content":"X"}`, 1)
	sgWrite(t, filepath.Join(dir, "suites", "mixed.json"), mixed)
	sgWriteTSV(t, filepath.Join(dir, "suites", "mixed.json"), filepath.Join(dir, "tsv", "mixed.tsv"))
	for _, tc := range []struct {
		flags []string
		sg    string
	}{
		// SG score: (0.5 + 1 + 0.5 + 0.5)/4 at the pair level, (0.5 + 1 + 0 + 0.5)/4 at the item level.
		{nil, "0.6250 (pair level, mean over 4 suites)"},
		{[]string{"--item-level"}, "0.5000 (item level, mean over 4 suites)"},
	} {
		a := append([]string{"--suites", filepath.Join(dir, "suites"), "--surprisals", filepath.Join(dir, "tsv")}, tc.flags...)
		status, out, errOut := sgRun(a...)
		if status != 0 {
			t.Fatalf("status %d: %s", status, errOut)
		}
		if !strings.Contains(out, "\nmixed         1      2        1    0.5000              0         0.0000\n") {
			t.Errorf("%v: output\n%s\nhas no row for mixed", tc.flags, out)
		}
		if !strings.Contains(out, "\nSG score  "+tc.sg) {
			t.Errorf("%v: output\n%s\ndoes not contain %q", tc.flags, out, tc.sg)
		}
		if strings.Contains(out, "circuit") {
			t.Errorf("circuits printed without --circuits:\n%s", out)
		}
	}

	// The text table with circuits.
	status, out, errOut := sgRun(args...)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	for _, s := range []string{"suite      items  pairs  correct  accuracy", "\nagree          4      8        4    0.5000              2         0.5000\n", "circuit", "\nAgreement       1  0.5000\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("output\n%s\ndoes not contain %q", out, s)
		}
	}
}

func TestSGErrors(t *testing.T) {
	dir := sgSetup(t)
	suite := filepath.Join(dir, "suites", "agree.json")
	suites := filepath.Join(dir, "suites")
	tsv := filepath.Join(dir, "tsv", "agree.tsv")
	tsvs := filepath.Join(dir, "tsv")
	bad := t.TempDir()
	// A surprisal file with a wrong token on line 3.
	b, err := os.ReadFile(tsv)
	if err != nil {
		t.Fatal(err)
	}
	wrong := sgWrite(t, filepath.Join(bad, "wrong.tsv"), strings.Replace(string(b), "\tdogs\t", "\tcats\t", 1))
	// A directory missing refl.tsv.
	partial := filepath.Join(bad, "partial")
	sgWrite(t, filepath.Join(partial, "agree.tsv"), string(b))
	badSuite := sgWrite(t, filepath.Join(bad, "bad.json"), strings.Replace(sgSuiteJSON("bad", sgFixture[0].items), `"sum"`, `"mean"`, 1))
	badCircuits := sgWrite(t, filepath.Join(bad, "circuits.json"), `{"circuits": [{"name": "X", "suites": ["agree", "nope"]}]}`)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--suite or --suites is required"},
		{[]string{"--suite", suite, "--suites", suites, "--surprisals", tsv}, "--suite and --suites are mutually exclusive"},
		{[]string{"--suite", suite}, "--surprisals or --model is required"},
		{[]string{"--suite", suite, "--surprisals", tsv, "--model", dir}, "--surprisals and --model are mutually exclusive"},
		{[]string{"--suite", suite, "--surprisals", tsv, "--batch", "-4"}, "go with --model"},
		{[]string{"--suite", suite, "--surprisals", tsv, "--convention", "bogus"}, "go with --model"},
		{[]string{"--suite", suite, "--model", dir}, "ptb sg: --model " + dir + ": not a ptb run"},
		{[]string{"--suites", suites, "--model", dir}, "ptb sg: --model " + dir + ": not a ptb run"},
		{[]string{"--suite", suite, "--surprisals", tsv, "--circuits", badCircuits}, "--circuits needs --suites"},
		{[]string{"--suite", suite, "--surprisals", tsv, "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"--suite", suite, "--surprisals", tsv, "--bogus"}, "bogus"},
		{[]string{"--suite", suite, "--surprisals", tsvs}, "--surprisals: " + tsvs + " is a directory"},
		{[]string{"--suites", suites, "--surprisals", tsv}, "--surprisals: " + tsv + " is not a directory"},
		{[]string{"--suite", suite, "--surprisals", filepath.Join(bad, "none.tsv")}, "--surprisals: stat " + filepath.Join(bad, "none.tsv")},
		{[]string{"--suite", filepath.Join(bad, "none.json"), "--surprisals", tsv}, "--suite: syntaxgym: open " + filepath.Join(bad, "none.json")},
		{[]string{"--suite", badSuite, "--surprisals", tsv}, "--suite: " + badSuite + `: meta.metric "mean" is not supported`},
		{[]string{"--suite", suite, "--surprisals", wrong}, "--surprisals: " + wrong + `:3: sentence 1 (item 1, condition "match"), token 2: "cats", want "dogs"`},
		{[]string{"--suite", filepath.Join(dir, "suites", "refl.json"), "--surprisals", tsv}, "--surprisals: " + tsv + `:2: sentence 1 (item 1, condition "match"), token 1: "the", want "he"`},
		{[]string{"--suites", suites, "--surprisals", partial}, "--surprisals: suite all: syntaxgym: open " + filepath.Join(partial, "all.tsv")},
		{[]string{"--suites", suites, "--surprisals", tsvs, "--circuits", badCircuits}, `circuit "X" names suite "nope", which is not among the suites of --suites`},
		{[]string{"--suites", suites, "--surprisals", tsvs, "--circuits", filepath.Join(bad, "none.json")}, "--circuits: syntaxgym: open"},
		{[]string{"--suites", bad, "--surprisals", tsvs}, "--suites: " + badSuite + ": meta.metric"},
		{[]string{"--suites", t.TempDir(), "--surprisals", tsvs}, "--suites: syntaxgym: no suites"},
	} {
		status, out, errOut := sgRun(tc.args...)
		if status == 0 {
			t.Errorf("%v: succeeded", tc.args)
		}
		if out != "" {
			t.Errorf("%v: printed %q on stdout", tc.args, out)
		}
		if !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: error %q does not contain %q", tc.args, errOut, tc.want)
		}
	}
}

// TestModelHook checks that the --model hook is separate from the TSV
// sources: scoring goes through a surprisalSource.
func TestModelHook(t *testing.T) {
	if _, err := modelSource(t.TempDir(), nsrnn.CPU, false, 32, false, newUnknownWords(), nil); err == nil || !strings.Contains(err.Error(), "not a ptb run") {
		t.Errorf("modelSource: %v", err)
	}
	dir := sgSetup(t)
	suites, err := syntaxgym.ReadSuiteDir(filepath.Join(dir, "suites"))
	if err != nil {
		t.Fatal(err)
	}
	fromModel, err := scoreSuites(suites, nil, sgLengthSurprisals, syntaxgym.PairLevel)
	if err != nil {
		t.Fatal(err)
	}
	fromTSV, err := scoreSuites(suites, nil, tsvDirSource(filepath.Join(dir, "tsv")), syntaxgym.PairLevel)
	if err != nil {
		t.Fatal(err)
	}
	if fromModel.SGScore != fromTSV.SGScore || fromModel.SGScore != 2.0/3 {
		t.Errorf("SG scores %v and %v, want 2/3", fromModel.SGScore, fromTSV.SGScore)
	}
}

// TestSGShared scores the 33 shared suites on the fake model's surprisals
// written as TSV files.
func TestSGShared(t *testing.T) {
	shared := "../../../shared/data/syntaxgym"
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("shared suites not available: %v", err)
	}
	suites, err := syntaxgym.ReadSuiteDir(shared)
	if err != nil {
		t.Fatal(err)
	}
	tsvs := t.TempDir()
	for _, s := range suites {
		sgWriteTSV(t, s.File, filepath.Join(tsvs, s.BaseName()+".tsv"))
	}
	status, out, errOut := sgRun("--suites", shared, "--surprisals", tsvs, "--circuits", filepath.Join(shared, "circuits.json"), "--json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	var got struct {
		Suites []struct {
			Pairs int     `json:"pairs"`
			Score float64 `json:"score"`
		} `json:"suites"`
		SGScore  float64 `json:"sg_score"`
		Circuits []struct {
			Score float64 `json:"score"`
		} `json:"circuits"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	pairs, mean := 0, 0.0
	for _, s := range got.Suites {
		pairs += s.Pairs
		mean += s.Score / float64(len(got.Suites))
	}
	if len(got.Suites) != 33 || pairs != 1850 || len(got.Circuits) != 6 {
		t.Errorf("%d suites, %d pairs, %d circuits; want 33, 1850, 6", len(got.Suites), pairs, len(got.Circuits))
	}
	if math.Abs(got.SGScore-mean) > 1e-12 || got.SGScore <= 0 || got.SGScore >= 1 {
		t.Errorf("SG score %v, mean of the suites' scores %v", got.SGScore, mean)
	}
	t.Logf("SG score of token length as surprisal: %.4f", got.SGScore)
}
