package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// tinyCorpus writes a small corpus with the PTB file names: sentences of
// a toy grammar over 12 words.
func tinyCorpus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	words := []string{"the", "a", "cat", "dog", "sees", "likes", "big", "small", "<unk>", "and", "runs", "N"}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, lines := range map[string]int{"ptb.train.txt": 120, "ptb.valid.txt": 30, "ptb.test.txt": 30} {
		var b strings.Builder
		for i := 0; i < lines; i++ {
			n := 3 + rng.IntN(6)
			for j := 0; j < n; j++ {
				b.WriteString(" " + words[rng.IntN(len(words))])
			}
			b.WriteString(" \n")
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runCmd(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := prog.Main(args, &out, &errb)
	return out.String(), errb.String(), code
}

var tinyModel = []string{"--model", "rns", "--hidden", "6", "--states", "2", "--symbols", "2", "--window", "4",
	"--batch", "3", "--bptt", "5", "--lr", "0.5", "--clip", "0.5", "--epochs", "3", "--seed", "7"}

// TestTrainResumeBitIdentical kills a run in the middle of its second
// epoch, right after a checkpoint, resumes it, and checks that it ends with
// exactly the model and log of an uninterrupted run.
func TestTrainResumeBitIdentical(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	whole, part := filepath.Join(root, "whole"), filepath.Join(root, "part")
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", whole}, tinyModel...)...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	args := append([]string{"train", "--data", data, "--out", part, "--checkpoint-every", "1ns"}, tinyModel...)
	_, e, code := runCmd(append(args, "--stop-after-steps", "40")...)
	if code != 0 || !strings.Contains(e, "--resume") {
		t.Fatalf("stopped run: code %d, %s", code, e)
	}
	if _, err := os.Stat(filepath.Join(part, protocol.ModelFile)); err == nil {
		t.Fatal("a stopped run wrote its model")
	}
	if _, e, code := runCmd(args...); code == 0 {
		t.Fatal("re-running into a started run without --resume succeeded")
	} else if !strings.Contains(e, "--out") {
		t.Errorf("error %q does not name --out", e)
	}
	// A damaged vocab.txt is written again from the corpus on resume.
	if err := os.WriteFile(filepath.Join(part, VocabFile), []byte("<eos>\n<unk>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, e, code = runCmd(append(args, "--resume")...)
	if code != 0 {
		t.Fatalf("resume: %s", e)
	}
	if !strings.Contains(e, "resuming at epoch") {
		t.Errorf("resumed run does not say where it continues: %s", e)
	}
	if !strings.Contains(e, "written again from the corpus") {
		t.Errorf("resume did not report the damaged vocab.txt: %s", e)
	}
	if va, vb := readFile(t, filepath.Join(whole, VocabFile)), readFile(t, filepath.Join(part, VocabFile)); va != vb {
		t.Errorf("vocab.txt after resume:\n%s\nwant\n%s", vb, va)
	}
	a, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	b, _ := os.ReadFile(filepath.Join(part, protocol.ModelFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the resumed run's model differs from the uninterrupted run's")
	}
	la, _ := protocol.ReadLog(filepath.Join(whole, protocol.LogFile))
	lb, _ := protocol.ReadLog(filepath.Join(part, protocol.LogFile))
	for i := range la {
		la[i].ElapsedSeconds, la[i].EpochSeconds = 0, 0
	}
	for i := range lb {
		lb[i].ElapsedSeconds, lb[i].EpochSeconds = 0, 0
	}
	if len(la) == 0 || !reflect.DeepEqual(la, lb) {
		t.Errorf("logs differ:\n%+v\n%+v", la, lb)
	}
	// A corpus has no known lower bound, and the log says so rather than
	// give a bound of 0 and the cross-entropy as the difference from it.
	if log := readFile(t, filepath.Join(whole, protocol.LogFile)); !strings.Contains(log, `"no_lower_bound":true`) || strings.Contains(log, `"lower_bound":0`) {
		t.Errorf("log.jsonl does not mark the records as without a lower bound:\n%s", log)
	}
	// eval gives the summary's best validation perplexity.
	out, e, code := runCmd("eval", "--model", whole, "--data", data, "--split", "valid", "--json")
	if code != 0 {
		t.Fatal(e)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var sum summary
	raw, _ := os.ReadFile(filepath.Join(whole, protocol.SummaryFile))
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if p, ok := res["perplexity"].(float64); !ok || math.Abs(p-sum.BestValidPerplexity) > 1e-9*p {
		t.Errorf("eval perplexity %v, summary's best %v", res["perplexity"], sum.BestValidPerplexity)
	}
	if _, e, code := runCmd("eval", "--model", whole, "--data", data, "--split", "test"); code != 0 {
		t.Error(e)
	}
}

// TestTrainBadInput: bad flags and data are refused naming the flag or
// file, before anything is written.
func TestTrainBadInput(t *testing.T) {
	data := tinyCorpus(t)
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "ptb.train.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	base := func(out string, extra ...string) []string {
		return append(append([]string{"train", "--data", data, "--out", out}, tinyModel...), extra...)
	}
	for i, c := range []struct {
		args []string
		want string
	}{
		{base("", "--lr", "0"), "--lr"},
		{base("", "--lr", "NaN"), "--lr"},
		{base("", "--lr", "-1"), "--lr"},
		{base("", "--clip", "Inf"), "--clip"},
		{base("", "--batch", "0"), "--batch"},
		{base("", "--report-every", "-1s"), "--report-every"},
		{base("", "--stop-after-steps", "-5"), "--stop-after-steps"},
		{base("", "--precision", "float16"), "--precision"},
		{base("", "--model", "gref", "--states", "0", "--symbols", "0", "--window", "0", "--stack-embedding", "3"), "carr"},
		{append([]string{"train", "--data", empty, "--out", "x"}, tinyModel...), "ptb.train.txt"},
		{append([]string{"train", "--data", filepath.Join(data, "nope"), "--out", "x"}, tinyModel...), "--data"},
	} {
		out := filepath.Join(t.TempDir(), fmt.Sprint("run", i))
		args := c.args
		for j := range args {
			if args[j] == "--out" && args[j+1] == "" {
				args[j+1] = out
			}
		}
		_, e, code := runCmd(args...)
		if code == 0 || !strings.Contains(e, c.want) {
			t.Errorf("case %d %v: code %d, stderr %q, want an error with %q", i, args, code, e, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("case %d: %s was created", i, out)
		}
	}
}

// TestTrainPrecision: run.json records the output precision, a resumed run
// must keep it, and evaluation uses the run's unless told otherwise, the
// two agreeing to float32 accuracy.
func TestTrainPrecision(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	runs := map[string]string{}
	for _, prec := range []string{"float32", "float64"} {
		out := filepath.Join(root, prec)
		runs[prec] = out
		args := append([]string{"train", "--data", data, "--out", out, "--precision", prec}, tinyModel...)
		if _, e, code := runCmd(append(args, "--epochs", "1")...); code != 0 {
			t.Fatalf("train: %s", e)
		}
		var s settings
		raw, _ := os.ReadFile(filepath.Join(out, protocol.RunFile))
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"float32": "float32", "float64": ""}[prec]; s.Precision != want {
			t.Errorf("%s: run.json precision %q, want %q", prec, s.Precision, want)
		}
	}
	other := append([]string{"train", "--data", data, "--out", runs["float32"], "--precision", "float64", "--resume"}, tinyModel...)
	if _, e, code := runCmd(other...); code == 0 || !strings.Contains(e, "precision") {
		t.Errorf("resuming a float32 run in float64: code %d, stderr %q; want a refusal naming precision", code, e)
	}
	ppl := func(run string, extra ...string) float64 {
		out, e, code := runCmd(append([]string{"eval", "--model", run, "--data", data, "--json"}, extra...)...)
		if code != 0 {
			t.Fatal(e)
		}
		var res evalResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		return res.Perplexity
	}
	var sum summary
	raw, _ := os.ReadFile(filepath.Join(runs["float32"], protocol.SummaryFile))
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	p32, p64 := ppl(runs["float32"]), ppl(runs["float32"], "--precision", "float64")
	if p32 != sum.BestValidPerplexity {
		t.Errorf("eval of a float32 run: perplexity %v, the run's validation %v (same arithmetic)", p32, sum.BestValidPerplexity)
	}
	if p32 == p64 || math.Abs(p32-p64) > 1e-5*p64 {
		t.Errorf("float32 perplexity %v, float64 %v: want different but within 1e-5", p32, p64)
	}
	if _, e, code := runCmd("eval", "--model", runs["float32"], "--data", data, "--precision", "half"); code == 0 || !strings.Contains(e, "--precision") {
		t.Errorf("eval --precision half: code %d, %q", code, e)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTrainResumeWithoutCheckpoint: --resume of a run that has its
// run.json and log but neither a checkpoint nor a summary (a process
// killed before its first checkpoint) is refused with an error naming
// the directory and the missing checkpoint, before anything is written;
// an absent --out with --resume starts a new run, and a finished run
// resumes as before.
func TestTrainResumeWithoutCheckpoint(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	out := filepath.Join(root, "run")
	args := append([]string{"train", "--data", data, "--out", out, "--epochs", "1"}, tinyModel[:len(tinyModel)-4]...)
	if _, e, code := runCmd(args...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	if _, e, code := runCmd(append(args, "--resume")...); code != 0 {
		t.Fatalf("--resume of a finished run: %s", e)
	}
	for _, f := range []string{protocol.CheckpointFile, protocol.SummaryFile, protocol.ModelFile} {
		if err := os.Remove(filepath.Join(out, f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	before := snapshot(t, out)
	_, e, code := runCmd(append(args, "--resume")...)
	if code == 0 {
		t.Fatal("--resume of a run without its checkpoint: no error")
	}
	for _, want := range []string{"--resume", out, protocol.CheckpointFile, "remove " + out, "drop --resume"} {
		if !strings.Contains(e, want) {
			t.Errorf("stderr %q does not say %q", e, want)
		}
	}
	if after := snapshot(t, out); !reflect.DeepEqual(before, after) {
		t.Errorf("the refused resume changed the directory:\n%v\nwas\n%v", after, before)
	}
	fresh := filepath.Join(root, "fresh")
	freshArgs := append([]string{"train", "--data", data, "--out", fresh, "--epochs", "1", "--resume"}, tinyModel[:len(tinyModel)-4]...)
	if _, e, code := runCmd(freshArgs...); code != 0 {
		t.Fatalf("--resume with an absent --out: %s", e)
	}
}

// snapshot maps each file of dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, en := range entries {
		m[en.Name()] = readFile(t, filepath.Join(dir, en.Name()))
	}
	return m
}

// The pure-Go build says, before computing on the CPU, how much faster
// the OpenBLAS build is and how to get it; the OpenBLAS build does not.
func TestPureGoBuildNote(t *testing.T) {
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	_, e, code := runCmd(append([]string{"train", "--data", data, "--out", out, "--epochs", "1"}, tinyModel[:len(tinyModel)-4]...)...)
	if code != 0 {
		t.Fatalf("train: %s", e)
	}
	_, ev, code := runCmd("eval", "--model", out)
	if code != 0 {
		t.Fatalf("eval: %s", ev)
	}
	for cmd, stderr := range map[string]string{"train": e, "eval": ev} {
		got := strings.Count(stderr, pureGoNote)
		want := 0
		if nsrnn.BLAS == "gonum" {
			want = 1
		}
		if got != want {
			t.Errorf("%s with BLAS %s printed the note %d times, want %d:\n%s", cmd, nsrnn.BLAS, got, want, stderr)
		}
	}
}

// TestTrainLike trains a run again from another's run.json (--like): the
// same model bit for bit; flags given override the run's settings; the
// corpus flags count as one; a corpus other than the run's, or one that is
// not on the machine, is refused before anything is written.
func TestTrainLike(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	first := filepath.Join(root, "first")
	model := append([]string{}, tinyModel...)
	model[len(model)-3] = "2" // --epochs 2
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", first}, model...)...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	// By its directory and by its run.json.
	for i, like := range []string{first, filepath.Join(first, protocol.RunFile)} {
		again := filepath.Join(root, fmt.Sprint("again", i))
		if _, e, code := runCmd("train", "--like", like, "--out", again); code != 0 {
			t.Fatalf("train --like %s: %s", like, e)
		}
		a, b := readFile(t, filepath.Join(first, protocol.ModelFile)), readFile(t, filepath.Join(again, protocol.ModelFile))
		if a == "" || a != b {
			t.Errorf("--like %s: the model differs from the run's", like)
		}
		var s0, s1 settings
		readJSON(t, filepath.Join(first, protocol.RunFile), &s0)
		readJSON(t, filepath.Join(again, protocol.RunFile), &s1)
		if !reflect.DeepEqual(s0, s1) {
			t.Errorf("--like %s: run.json %+v, want the run's %+v", like, s1, s0)
		}
	}

	// A committed run: its run.json alone, its corpus elsewhere.
	committed := filepath.Join(root, "committed")
	if err := os.MkdirAll(committed, 0o755); err != nil {
		t.Fatal(err)
	}
	var s settings
	readJSON(t, filepath.Join(first, protocol.RunFile), &s)
	s.Data = filepath.Join(root, "gone")
	raw, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(committed, protocol.RunFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	other := tinyCorpus(t)
	if err := os.WriteFile(filepath.Join(other, "ptb.train.txt"), []byte(" the cat runs \n"+readFile(t, filepath.Join(data, "ptb.train.txt"))), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name string
		args []string
		want []string
	}{
		{"corpus not here", []string{"--like", committed}, []string{"--like", "not on this machine", "--data"}},
		{"other corpus", []string{"--like", committed, "--data", other}, []string{"--like", "corpus differs", "ptb.train.txt"}},
		{"no run", []string{"--like", root}, []string{"--like", "no run there"}},
		{"files and like's data", []string{"--like", committed, "--train", filepath.Join(other, "ptb.train.txt")}, []string{"--train, --valid and --test are required together"}},
	}
	for i, c := range bad {
		out := filepath.Join(root, fmt.Sprint("bad", i))
		_, e, code := runCmd(append([]string{"train", "--out", out}, c.args...)...)
		if code == 0 {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(e, w) {
				t.Errorf("%s: error %q does not say %q", c.name, e, w)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: wrote %s", c.name, out)
		}
	}
	// --data in place of the run's, and a flag that overrides a setting.
	over := filepath.Join(root, "over")
	if _, e, code := runCmd("train", "--like", committed, "--data", data, "--epochs", "1", "--out", over); code != 0 {
		t.Fatalf("train --like --data --epochs: %s", e)
	}
	var so settings
	readJSON(t, filepath.Join(over, protocol.RunFile), &so)
	if so.Epochs != 1 || so.LR != s.LR || so.Clip != s.Clip || so.Seed != s.Seed || so.Model != s.Model || so.Data != data {
		t.Errorf("run.json %+v: want the run's settings with epochs 1 and data %s", so, data)
	}

	// The run's corpus as three files of other names (--train, --valid,
	// --test): the same digests, so accepted; then a run made so, liked
	// with the corpus given by --data, accepted too.
	copies := t.TempDir()
	var files []string
	for i, name := range splitFiles {
		f := filepath.Join(copies, fmt.Sprint(i, ".txt"))
		if err := os.WriteFile(f, []byte(readFile(t, filepath.Join(data, name))), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	byFiles := filepath.Join(root, "by-files")
	if _, e, code := runCmd("train", "--like", committed, "--train", files[0], "--valid", files[1], "--test", files[2], "--epochs", "1", "--out", byFiles); code != 0 {
		t.Fatalf("train --like with the run's corpus as --train, --valid, --test: %s", e)
	}
	if _, e, code := runCmd("train", "--like", byFiles, "--data", data, "--out", filepath.Join(root, "by-data")); code != 0 {
		t.Fatalf("train --like (a run on --train files) --data (the same corpus): %s", e)
	}
	if _, e, code := runCmd("train", "--like", byFiles, "--data", other, "--out", filepath.Join(root, "by-other")); code == 0 || !strings.Contains(e, "corpus differs") || strings.Contains(e, "was none") {
		t.Errorf("train --like (a run on --train files) --data (another corpus): exit %d, error %q; want the corpus refused, naming the run's digest", code, e)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// eval refuses the run's own split file when it changed since the run
// was trained (the run recorded its SHA-256) and evaluates it when given
// by name; a cfl run, a missing directory and a directory without a run
// are refused naming what they are; a resume with another model kind
// names the flag given.
func TestEvalChecksItsFiles(t *testing.T) {
	data := tinyCorpus(t)
	run := filepath.Join(t.TempDir(), "run")
	model := append([]string{}, tinyModel...)
	model[len(model)-3] = "1" // --epochs 1
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", run}, model...)...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	valid := filepath.Join(data, "ptb.valid.txt")
	if err := os.WriteFile(valid, []byte(readFile(t, valid)+" the cat runs \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := runCmd("eval", "--model", run); code == 0 || !strings.Contains(e, "has changed since the run was trained") || !strings.Contains(e, "ptb.valid.txt") {
		t.Errorf("eval on a changed split: code %d, %s", code, e)
	}
	if _, e, code := runCmd("eval", "--model", run, "--valid", valid); code != 0 {
		t.Errorf("eval --valid of the changed file: %s", e)
	}
	if _, e, code := runCmd("eval", "--model", run, "--split", "test"); code != 0 {
		t.Errorf("eval of the unchanged test split: %s", e)
	}
	cfl := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfl, protocol.RunFile), []byte(`{"task": "marked-reversal", "model": {"kind": "rns"}, "files": {"train": {"path": "x", "sha256": "y"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--model", cfl}, "not a ptb train run"},
		{[]string{"eval", "--model", filepath.Join(cfl, "none")}, "not a run directory"},
		{[]string{"eval", "--model", t.TempDir()}, "no run.json"},
		{[]string{"train", "--like", cfl, "--out", filepath.Join(t.TempDir(), "x")}, "not a ptb train run"},
		// A model flag against the run's is named, not one it implies.
		{[]string{"train", "--out", run, "--resume", "--model", "lstm"}, "--model lstm (the run's rns)"},
	} {
		if _, e, code := runCmd(c.args...); code == 0 || !strings.Contains(e, c.want) {
			t.Errorf("%v: code %d, %q, want %q", c.args, code, e, c.want)
		}
	}
}
