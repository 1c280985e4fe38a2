package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data/ptb"
)

// generateRun trains a tiny run on the tiny corpus (see train_test.go) and
// returns its directory and vocabulary.
func generateRun(t *testing.T) (string, *ptb.Vocab) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if _, e, code := runCmd(append([]string{"train", "--data", tinyCorpus(t), "--out", dir}, tinyModel...)...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	v, err := ptb.LoadVocab(filepath.Join(dir, VocabFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir, v
}

// generateLines runs generate and returns its lines, each split in words.
func generateLines(t *testing.T, args ...string) [][]string {
	t.Helper()
	out, e, code := runCmd(append([]string{"generate"}, args...)...)
	if code != 0 {
		t.Fatalf("generate %v: %s", args, e)
	}
	if !strings.Contains(e, "sentences") {
		t.Errorf("generate %v: no report on stderr: %q", args, e)
	}
	var lines [][]string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		lines = append(lines, strings.Fields(l))
	}
	return lines
}

// TestGenerate: the sentences are made of the run's words (never <eos>),
// begin with the prompt, come in the number asked for, and depend only on
// the seed; --words gives exactly that many words, a prefix of what more
// words give.
func TestGenerate(t *testing.T) {
	dir, v := generateRun(t)
	lines := generateLines(t, "--model", dir, "--sentences", "6", "--seed", "3")
	if len(lines) != 6 {
		t.Fatalf("--sentences 6 printed %d lines", len(lines))
	}
	words := 0
	for _, l := range lines {
		for _, w := range l {
			if id, ok := v.Lookup(w); !ok || id == v.EOS() {
				t.Errorf("generated word %q is not a word of the vocabulary %v", w, v.Words())
			}
			words++
		}
	}
	if words == 0 {
		t.Error("six empty sentences")
	}
	if again := generateLines(t, "--model", dir, "--sentences", "6", "--seed", "3"); !slices.EqualFunc(lines, again, slices.Equal) {
		t.Errorf("the same seed gave different text:\n%v\n%v", lines, again)
	}
	if other := generateLines(t, "--model", dir, "--sentences", "6", "--seed", "4"); slices.EqualFunc(lines, other, slices.Equal) {
		t.Errorf("seeds 3 and 4 gave the same text %v", lines)
	}

	for _, l := range generateLines(t, "--model", dir, "--sentences", "5", "--prompt", "the big", "--temperature", "0.5", "--top-k", "3") {
		if len(l) < 2 || l[0] != "the" || l[1] != "big" {
			t.Errorf("sentence %q does not begin with the prompt", strings.Join(l, " "))
		}
	}

	flat := func(lines [][]string) []string { return slices.Concat(lines...) }
	few := flat(generateLines(t, "--model", dir, "--words", "17", "--max-length", "12"))
	many := flat(generateLines(t, "--model", dir, "--words", "40", "--max-length", "12"))
	if len(few) != 17 || len(many) != 40 {
		t.Fatalf("--words 17 and 40 gave %d and %d words", len(few), len(many))
	}
	if !slices.Equal(few, many[:17]) {
		t.Errorf("--words 17 gave %v, not the beginning of --words 40's %v", few, many)
	}
	for _, l := range generateLines(t, "--model", dir, "--sentences", "8", "--max-length", "2") {
		if len(l) > 2 {
			t.Errorf("--max-length 2 gave the sentence %v", l)
		}
	}
}

// TestGenerateErrors: bad flags are refused naming the flag.
func TestGenerateErrors(t *testing.T) {
	dir, _ := generateRun(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--model"},
		{[]string{"--model", filepath.Join(dir, "nope")}, "--model"},
		{[]string{"--model", dir, "--words", "0"}, "--words"},
		{[]string{"--model", dir, "--sentences", "0"}, "--sentences"},
		{[]string{"--model", dir, "--words", "5", "--sentences", "2"}, "--sentences"},
		{[]string{"--model", dir, "--temperature", "0"}, "--temperature"},
		{[]string{"--model", dir, "--temperature", "-Inf"}, "--temperature"},
		{[]string{"--model", dir, "--top-k", "-1"}, "--top-k"},
		{[]string{"--model", dir, "--max-length", "0"}, "--max-length"},
		{[]string{"--model", dir, "--prompt", "the zebra"}, "--prompt"},
		{[]string{"--model", dir, "--prompt", "the <eos> cat"}, "--prompt"},
		{[]string{"--model", dir, "--prompt", "the cat", "--max-length", "2"}, "--prompt"},
	} {
		out, e, code := runCmd(append([]string{"generate"}, c.args...)...)
		if code == 0 || !strings.Contains(e, c.want) {
			t.Errorf("generate %v: code %d, stderr %q; want an error naming %s", c.args, code, e, c.want)
		}
		if out != "" {
			t.Errorf("generate %v printed %q", c.args, out)
		}
	}
}
