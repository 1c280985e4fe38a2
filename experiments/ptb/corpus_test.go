package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/protocol"
)

// wikiCorpus writes the tiny corpus of tinyCorpus under WikiText-2's file
// names, with words of its own that --vocab-size leaves out.
func wikiCorpus(t *testing.T) (train, valid, test string) {
	t.Helper()
	src, dir := tinyCorpus(t), t.TempDir()
	for _, f := range []struct{ from, to string }{{ptb.TrainFile, "wiki.train.tokens"}, {ptb.ValidFile, "wiki.valid.tokens"}, {ptb.TestFile, "wiki.test.tokens"}} {
		b, err := os.ReadFile(filepath.Join(src, f.from))
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, "zebra quokka\n"...)
		if err := os.WriteFile(filepath.Join(dir, f.to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "wiki.train.tokens"), filepath.Join(dir, "wiki.valid.tokens"), filepath.Join(dir, "wiki.test.tokens")
}

// TestTrainOtherCorpus trains on a corpus of other file names with
// --vocab-size, evaluates it on the run's own files, generates from it,
// and refuses a resume on a changed file or with another --vocab-size.
func TestTrainOtherCorpus(t *testing.T) {
	train, valid, test := wikiCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	args := append([]string{"train", "--train", train, "--valid", valid, "--test", test, "--vocab-size", "8", "--out", out}, tinyModel...)
	if _, e, code := runCmd(append(args, "--epochs", "1")...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	v, err := ptb.LoadVocab(filepath.Join(out, VocabFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	// <eos>, the 8 most frequent types and <unk> (the tiny corpus has 12
	// types, <unk> among them, plus zebra and quokka).
	if v.Size() != 9 && v.Size() != 10 {
		t.Errorf("vocabulary of %d words: %q", v.Size(), v.Words())
	}
	for _, w := range []string{"zebra", "quokka"} {
		if _, ok := v.Lookup(w); ok {
			t.Errorf("the rare word %s is in the vocabulary", w)
		}
	}
	s, exists, err := readRunSettings(out)
	if err != nil || !exists || s.Files == nil || s.Data != "" || s.VocabSize != 8 || s.DataSHA256["train"] == "" || s.Files.Test != test {
		t.Fatalf("settings %+v, %v", s, err)
	}
	// eval defaults to the run's files; --test implies the test split.
	o, e, code := runCmd("eval", "--model", out, "--json")
	var res evalResult
	if code != 0 || json.Unmarshal([]byte(o), &res) != nil || res.Split != "valid" || !(res.Perplexity > 1) {
		t.Errorf("eval: code %d, %s%s", code, o, e)
	}
	o, e, code = runCmd("eval", "--model", out, "--test", test, "--json")
	if code != 0 || json.Unmarshal([]byte(o), &res) != nil || res.Split != "test" {
		t.Errorf("eval --test: code %d, %s%s", code, o, e)
	}
	if _, e, code := runCmd("generate", "--model", out, "--sentences", "2"); code != 0 {
		t.Errorf("generate: %s", e)
	}
	// Resuming with another --vocab-size, or on a changed file, is refused.
	if _, e, code := runCmd(append(args, "--epochs", "2", "--resume", "--vocab-size", "6")...); code == 0 || !strings.Contains(e, "--vocab-size") {
		t.Errorf("resume with another --vocab-size: code %d, %s", code, e)
	}
	if err := os.WriteFile(valid, []byte("the cat\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := runCmd(append(args, "--epochs", "2", "--resume")...); code == 0 || !strings.Contains(e, valid) {
		t.Errorf("resume on a changed file: code %d, %s", code, e)
	}
	if _, err := os.Stat(filepath.Join(out, protocol.ModelFile)); err != nil {
		t.Error(err)
	}
}

func TestTrainOtherCorpusErrors(t *testing.T) {
	train, valid, test := wikiCorpus(t)
	data := tinyCorpus(t)
	bad := filepath.Join(t.TempDir(), "bad.tokens")
	if err := os.WriteFile(bad, []byte("the cat\nzzz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, test := range []struct {
		name string
		args []string
		want string
	}{
		{"no test", []string{"--train", train, "--valid", valid}, "required together"},
		{"both", []string{"--data", data, "--train", train, "--valid", valid, "--test", test}, "not both"},
		{"negative size", []string{"--train", train, "--valid", valid, "--test", test, "--vocab-size", "-1"}, "--vocab-size -1"},
		{"strict unknown", []string{"--train", train, "--valid", bad, "--test", test, "--strict"}, bad + ":2"},
		{"missing", []string{"--train", train + ".none", "--valid", valid, "--test", test}, "wiki.train.tokens.none"},
	} {
		t.Run(test.name, func(t *testing.T) {
			args := append(append([]string{"train", "--out", filepath.Join(t.TempDir(), "run")}, test.args...), tinyModel...)
			if _, e, code := runCmd(args...); code == 0 || !strings.Contains(e, test.want) {
				t.Errorf("code %d, stderr %q; want %q", code, e, test.want)
			}
		})
	}
}
