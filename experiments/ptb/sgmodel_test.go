package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/data/syntaxgym"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// toyRun writes a PTB run directory whose model ignores its context: every
// weight is zero but the output bias, so p(w) = softmax(bias)[w] for every
// prefix, with "is" likelier than "are".
func toyRun(t *testing.T) string {
	t.Helper()
	return toyRunOf(t, []string{ptb.EOSWord, "the", "cat", "is", "are", ptb.UnkWord})
}

// toyRunOf is toyRun with the six words of another vocabulary.
func toyRunOf(t *testing.T, words []string) string {
	t.Helper()
	dir := t.TempDir()
	v, err := ptb.NewVocab(words)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nsrnn.Config{Kind: nsrnn.RNS, InputVocab: 6, OutputVocab: 6, Embedding: 4, Hidden: 4, States: 1, Symbols: 2, Window: 35, InitRange: 0.05}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() {
		clear(p.Data())
	}
	bias := m.Params()[len(m.Params())-1].Data()
	copy(bias, []float64{0, 1, 1, 2, -1, 0})
	if err := m.Save(filepath.Join(dir, protocol.ModelFile)); err != nil {
		t.Fatal(err)
	}
	if err := v.Save(filepath.Join(dir, VocabFile)); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteJSON(filepath.Join(dir, protocol.RunFile), settings{Data: dir, Model: cfg, Batch: 2, BPTT: 5}); err != nil {
		t.Fatal(err)
	}
	return dir
}

const agreementSuite = `{
  "meta": {"name": "toy_agreement", "metric": "sum"},
  "region_meta": {"1": "subject", "2": "verb"},
  "predictions": [{"type": "formula", "formula": "(2;%mismatch%) > (2;%match%)"}],
  "items": [
    {"item_number": 1, "conditions": [
      {"condition_name": "match", "regions": [{"region_number": 1, "content": "The cat"}, {"region_number": 2, "content": "is"}]},
      {"condition_name": "mismatch", "regions": [{"region_number": 1, "content": "The cat"}, {"region_number": 2, "content": "are"}]}
    ]},
    {"item_number": 2, "conditions": [
      {"condition_name": "match", "regions": [{"region_number": 1, "content": "the dog"}, {"region_number": 2, "content": "is"}]},
      {"condition_name": "mismatch", "regions": [{"region_number": 1, "content": "the dog"}, {"region_number": 2, "content": "are"}]}
    ]}
  ]
}`

// TestSGModelPipeline scores a suite with a model whose surprisals are
// known in closed form, through the whole command: the surprisal
// convention gets the single-token agreement right, the released script's
// convention inverts it.
func TestSGModelPipeline(t *testing.T) {
	run := toyRun(t)
	suite := filepath.Join(t.TempDir(), "toy_agreement.json")
	if err := os.WriteFile(suite, []byte(agreementSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		convention string
		want       float64
	}{{"surprisal", 1}, {"released", 0}} {
		out, e, code := runCmd("sg", "--suite", suite, "--model", run, "--convention", c.convention, "--json")
		if code != 0 {
			t.Fatalf("%s: %s", c.convention, e)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res["accuracy"] != c.want || res["pairs"] != 2.0 {
			t.Errorf("%s: accuracy %v over %v pairs, want %v over 2", c.convention, res["accuracy"], res["pairs"], c.want)
		}
	}
	// The surprisals themselves: "dog" is unknown and scored as <unk>.
	src, err := modelSource(run, nsrnn.CPU, false, 3, false, newUnknownWords(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := syntaxgym.ReadSuiteFile(suite)
	if err != nil {
		t.Fatal(err)
	}
	got, err := src(s)
	if err != nil {
		t.Fatal(err)
	}
	bias := []float64{0, 1, 1, 2, -1, 0}
	z := 0.0
	for _, b := range bias {
		z += math.Exp(b)
	}
	ids := map[string]int{"the": 1, "cat": 2, "is": 3, "are": 4, "dog": 5}
	for i, sent := range s.Sentences() {
		for j, tok := range sent.Tokens {
			want := -(bias[ids[strings.ToLower(tok)]] - math.Log(z)) / math.Ln2
			if math.Abs(got[i][j]-want) > 1e-12 {
				t.Errorf("sentence %d token %q: %v bits, want %v", i, tok, got[i][j], want)
			}
		}
	}
	if _, e, code := runCmd("sg", "--suite", suite, "--model", run, "--convention", "bogus"); code == 0 || !strings.Contains(e, "--convention") {
		t.Errorf("bad --convention: %q", e)
	}
}

// TestSGModelCase: a suite's tokens are looked up as written where the
// run's vocabulary has them (a cased corpus), lowercased otherwise (the
// Penn Treebank's, all lowercase).
func TestSGModelCase(t *testing.T) {
	suite := filepath.Join(t.TempDir(), "toy_agreement.json")
	if err := os.WriteFile(suite, []byte(agreementSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := syntaxgym.ReadSuiteFile(suite)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		words   []string
		unknown []string // the unknown words, in order of first occurrence
		count   int
	}{
		// "The" read as "the"; "dog" (twice) unknown.
		{"lowercase", []string{ptb.EOSWord, "the", "cat", "is", "are", ptb.UnkWord}, []string{"dog"}, 2},
		// "The" as written; "the" (item 2, twice) and "dog" unknown.
		{"cased", []string{ptb.EOSWord, "The", "cat", "is", "are", ptb.UnkWord}, []string{"the", "dog"}, 4},
	} {
		unknown := newUnknownWords()
		src, err := modelSource(toyRunOf(t, tc.words), nsrnn.CPU, false, 3, false, unknown, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src(s); err != nil {
			t.Fatal(err)
		}
		if got := unknown.count[s.File]; got != tc.count || !slices.Equal(unknown.words[s.File], tc.unknown) {
			t.Errorf("%s: %d unknown tokens %q, want %d %q", tc.name, got, unknown.words[s.File], tc.count, tc.unknown)
		}
	}
}
