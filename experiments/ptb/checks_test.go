package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/protocol"
)

// TestTrainBadCheckpointEvery: a negative --checkpoint-every is refused
// naming the flag, before anything is written.
func TestTrainBadCheckpointEvery(t *testing.T) {
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	_, e, code := runCmd(append(append([]string{"train", "--data", data, "--out", out}, tinyModel...), "--checkpoint-every", "-1s")...)
	if code == 0 || !strings.Contains(e, "--checkpoint-every -1s") {
		t.Errorf("code %d, stderr %q; want a refusal naming --checkpoint-every", code, e)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the run directory was created")
	}
}

// TestTrainRefusesCheckpointOfOtherSeed: a checkpoint copied from a run
// with another seed is refused, naming the file and the seed, though the
// run's run.json agrees with its flags.
func TestTrainRefusesCheckpointOfOtherSeed(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	args := func(out, seed string) []string {
		return append(append([]string{"train", "--data", data, "--out", out, "--checkpoint-every", "1ns"}, tinyModel...), "--seed", seed)
	}
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for out, seed := range map[string]string{a: "7", b: "8"} {
		if _, e, code := runCmd(append(args(out, seed), "--stop-after-steps", "5")...); code != 0 {
			t.Fatalf("train: %s", e)
		}
	}
	ckpt := filepath.Join(b, protocol.CheckpointFile)
	raw, err := os.ReadFile(filepath.Join(a, protocol.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ckpt, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, e, code := runCmd(append(args(b, "8"), "--resume")...)
	if code == 0 || !strings.Contains(e, ckpt) || !strings.Contains(e, "settings.seed: 7 in the checkpoint, now 8") {
		t.Errorf("code %d, stderr %q; want a refusal naming %s and the seed", code, e, ckpt)
	}
}

// TestGenerateHugeCounts: generate writes its sentences as it draws them,
// so a --sentences or --words beyond memory runs until its output fails,
// and its first sentences are those of a small count.
func TestGenerateHugeCounts(t *testing.T) {
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	if _, e, code := runCmd(append(append([]string{"train", "--data", data, "--out", out}, tinyModel...), "--epochs", "1")...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	small, e, code := runCmd("generate", "--model", out, "--sentences", "30")
	if code != 0 {
		t.Fatalf("--sentences 30: %s", e)
	}
	for _, c := range []struct{ flag, n string }{
		{"--sentences", "1099511627776"}, {"--words", "1099511627776"},
		{"--words", "576460752303423489"}, // 16 × it overflows an int
	} {
		w := &cutWriter{room: len(small)}
		err := runGenerate([]string{"--model", out, c.flag, c.n}, w, io.Discard)
		if !errors.Is(err, errNoRoom) || w.kept.String() != small {
			t.Errorf("%s %s: error %v, wrote %q; want the writer's error after %q", c.flag, c.n, err, w.kept.String(), small)
		}
	}
}

// cutWriter keeps the first room bytes written to it and fails every write
// after them. (It has no WriteString, which io.WriteString would call
// instead of Write.)
type cutWriter struct {
	kept strings.Builder
	room int
}

var errNoRoom = errors.New("no room")

func (w *cutWriter) Write(p []byte) (int, error) {
	if len(p) > w.room {
		k := w.room
		w.room = 0
		w.kept.Write(p[:k])
		return k, errNoRoom
	}
	w.room -= len(p)
	return w.kept.Write(p)
}

// TestEvalHugeBatch: an eval --batch beyond the memory rules is refused
// naming the flag, before anything is evaluated.
func TestEvalHugeBatch(t *testing.T) {
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	if _, e, code := runCmd(append(append([]string{"train", "--data", data, "--out", out}, tinyModel...), "--epochs", "1")...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	stdout, e, code := runCmd("eval", "--model", out, "--data", data, "--batch", "16777216")
	if code == 0 || !strings.Contains(e, "--batch 16777216") || !strings.Contains(e, "GiB") || stdout != "" {
		t.Errorf("code %d, stdout %q, stderr %q; want a refusal naming --batch", code, stdout, e)
	}
	// Flags that would be ignored are refused.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--valid", filepath.Join(data, "ptb.valid.txt"), "--split", "test"}, "--valid with --split test"},
		{[]string{"--test", filepath.Join(data, "ptb.test.txt"), "--split", "valid"}, "--test with --split valid"},
		{[]string{"--batch", "-5"}, "--batch -5"},
		{[]string{"--bptt", "-5"}, "--bptt -5"},
	} {
		stdout, e, code := runCmd(append([]string{"eval", "--model", out}, c.args...)...)
		if code == 0 || !strings.Contains(e, c.want) || stdout != "" {
			t.Errorf("eval %v: code %d, stdout %q, stderr %q; want a refusal with %q", c.args, code, stdout, e, c.want)
		}
	}
	// The run copied without its model (as results directories keep
	// runs), then without its summary too (a run that has not finished).
	cp := filepath.Join(t.TempDir(), "copy")
	for _, name := range []string{protocol.RunFile, protocol.SummaryFile, VocabFile} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(cp, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"the run has finished, but its model file is missing", "the run has not finished and has no checkpoint yet"} {
		stdout, e, code := runCmd("eval", "--model", cp, "--data", data)
		if code == 0 || !strings.Contains(e, want) || !strings.Contains(e, cp) || stdout != "" {
			t.Errorf("eval of a run without its model: code %d, stdout %q, stderr %q; want a refusal with %q", code, stdout, e, want)
		}
		os.Remove(filepath.Join(cp, protocol.SummaryFile))
	}
}

// A run stopped in its second epoch has no model yet: eval names its
// checkpoint, and eval and generate given that file use the best model so
// far, the model a run of one epoch ends with; a checkpoint from before
// the first validation is refused.
func TestEvalCheckpoint(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	one, part, early := filepath.Join(root, "one"), filepath.Join(root, "part"), filepath.Join(root, "early")
	mustTrain(t, trainArgs(data, one, "--epochs", "1")...)
	mustTrain(t, trainArgs(data, part, "--checkpoint-every", "1ns", "--stop-after-steps", "100")...)
	mustTrain(t, trainArgs(data, early, "--checkpoint-every", "1ns", "--stop-after-steps", "3")...)
	ckpt := filepath.Join(part, protocol.CheckpointFile)
	if _, e, code := runCmd("eval", "--model", part); code == 0 || !strings.Contains(e, "after 1 epoch (") || !strings.Contains(e, ckpt+": give that file") {
		t.Errorf("eval of the stopped run: code %d, %s", code, e)
	}
	want, e, code := runCmd("eval", "--model", one, "--json")
	if code != 0 {
		t.Fatalf("eval of the one-epoch run: %s", e)
	}
	got, e, code := runCmd("eval", "--model", ckpt, "--json")
	var g, w evalResult
	if code != 0 || json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		t.Fatalf("eval of the checkpoint: code %d, %s\n%s", code, e, got)
	}
	if g.CrossEntropy != w.CrossEntropy || g.Targets != w.Targets || g.Targets == 0 {
		t.Errorf("eval of the checkpoint: %s\nwant the one-epoch run's\n%s", got, want)
	}
	if out, e, code := runCmd("generate", "--model", ckpt, "--words", "5", "--seed", "2"); code != 0 || len(strings.Fields(out)) == 0 {
		t.Errorf("generate from the checkpoint: code %d, %q, %s", code, out, e)
	}
	if _, e, code := runCmd("eval", "--model", filepath.Join(early, protocol.CheckpointFile)); code == 0 || !strings.Contains(e, "no epoch has been validated yet") {
		t.Errorf("eval of a checkpoint before the first validation: code %d, %s", code, e)
	}
	if _, e, code := runCmd("eval", "--model", early); code == 0 || !strings.Contains(e, "once an epoch has been validated") {
		t.Errorf("eval of a run in its first epoch: code %d, %s", code, e)
	}
}

// TestTrainRefusesHugeChunks checks that a chunk length, window or depth
// limit beyond the memory rules is refused before anything is written,
// with an error naming the flags, and that the longest chunk, not --bptt
// itself, is what counts (a tiny corpus's rows are shorter than --bptt).
func TestTrainRefusesHugeChunks(t *testing.T) {
	data := tinyCorpus(t)
	with := func(flag, value string) []string {
		args := append([]string(nil), tinyModel...)
		for i := range args {
			if args[i] == flag {
				args[i+1] = value
				return args
			}
		}
		return append(args, flag, value)
	}
	jm := []string{"--model", "jm", "--hidden", "6", "--stack-embedding", "3", "--depth-limit", "268435456",
		"--batch", "3", "--bptt", "5", "--lr", "0.5", "--clip", "0.5", "--epochs", "1"}
	for _, c := range []struct {
		name string
		args []string
		want string // "" for a run that starts
	}{
		{"window 2^26", with("--window", "67108864"), "--window 67108864"},
		{"depth limit 2^28", jm, "--depth-limit 268435456"},
		{"bptt 2^30 on a tiny corpus", append(with("--bptt", "1073741824"), "--epochs", "1"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			_, e, code := runCmd(append([]string{"train", "--data", data, "--out", out}, c.args...)...)
			_, statErr := os.Stat(out)
			switch {
			case c.want == "" && code != 0:
				t.Errorf("code %d: %s", code, e)
			case c.want != "" && (code == 0 || !strings.Contains(e, c.want) || !strings.Contains(e, "GiB")):
				t.Errorf("code %d, stderr %q; want a refusal naming %s", code, e, c.want)
			case c.want != "" && !errors.Is(statErr, os.ErrNotExist):
				t.Errorf("the refused run left %s behind (%v)", out, statErr)
			}
		})
	}
}

// TestResumeDamagedRunFile: a resumed run whose run.json holds a setting
// no run can have is refused naming the file, not a flag the command line
// did not give.
func TestResumeDamagedRunFile(t *testing.T) {
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	args := append([]string{"train", "--data", data, "--out", out, "--checkpoint-every", "1ns"}, tinyModel...)
	if _, e, code := runCmd(append(args, "--stop-after-steps", "3")...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	path := filepath.Join(out, protocol.RunFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := strings.Replace(string(b), `"batch": 3`, `"batch": -1`, 1)
	if damaged == string(b) {
		t.Fatalf("no batch of 3 in %s", b)
	}
	if err := os.WriteFile(path, []byte(damaged), 0o644); err != nil {
		t.Fatal(err)
	}
	_, e, code := runCmd("train", "--out", out, "--resume")
	if code == 0 || !strings.Contains(e, path) || !strings.Contains(e, "damaged") || strings.Contains(e, "--batch") {
		t.Errorf("code %d, stderr %q; want a refusal naming %s", code, e, path)
	}
}

// TestResumeDamagedVocabDigest: a run whose run.json records a vocabulary
// digest that its corpus does not give (and that has no vocab.txt yet to
// compare) is refused at the resume, before it trains a run that every
// later command would refuse.
func TestResumeDamagedVocabDigest(t *testing.T) {
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	args := append([]string{"train", "--data", data, "--out", out, "--checkpoint-every", "1ns"}, tinyModel...)
	if _, e, code := runCmd(append(args, "--stop-after-steps", "3")...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	var s settings
	readJSON(t, filepath.Join(out, protocol.RunFile), &s)
	s.VocabSHA256 = strings.Repeat("0", 64)
	raw, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(out, protocol.RunFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, VocabFile)); err != nil {
		t.Fatal(err)
	}
	_, e, code := runCmd("train", "--out", out, "--resume")
	if code == 0 || !strings.Contains(e, "vocabulary") || !strings.Contains(e, "damaged") {
		t.Errorf("code %d, stderr %q; want the vocabulary digest refused", code, e)
	}
}

// TestEvalOldRunReorderedVocab: a run from before the vocabulary's digest
// was recorded, whose vocab.txt has its words in another order, is
// refused while its training file is there to compare with; in order, it
// evaluates.
func TestEvalOldRunReorderedVocab(t *testing.T) {
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", out}, tinyModel...)...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	var raw map[string]any
	readJSON(t, filepath.Join(out, protocol.RunFile), &raw)
	delete(raw, "vocab_sha256")
	b, _ := json.Marshal(raw)
	if err := os.WriteFile(filepath.Join(out, protocol.RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := runCmd("eval", "--model", out); code != 0 {
		t.Fatalf("eval of the old run: %s", e)
	}
	vp := filepath.Join(out, VocabFile)
	lines := strings.Split(strings.TrimSuffix(readFile(t, vp), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("vocab.txt of %d lines", len(lines))
	}
	lines[1], lines[2] = lines[2], lines[1]
	if err := os.WriteFile(vp, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, e, code := runCmd("eval", "--model", out)
	if code == 0 || !strings.Contains(e, vp) || !strings.Contains(e, "order") {
		t.Errorf("eval with vocab.txt reordered: code %d, stderr %q", code, e)
	}
}
