package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// trainArgs are the arguments of a tiny training run of data into out.
func trainArgs(data, out string, extra ...string) []string {
	return append(append([]string{"train", "--data", data, "--out", out}, tinyModel...), extra...)
}

// mustTrain runs ptb train and fails the test unless it succeeds.
func mustTrain(t *testing.T, args ...string) string {
	t.Helper()
	_, e, code := runCmd(args...)
	if code != 0 {
		t.Fatalf("%v: status %d: %s", args, code, e)
	}
	return e
}

// editFile rewrites the file at path with edit.
func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// oldRunJSON rewrites the run.json of dir as the code before data and
// vocabulary digests wrote it: the same settings without them.
func oldRunJSON(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, protocol.RunFile)
	var m map[string]any
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m["data_sha256"] == nil || m["vocab_sha256"] == nil {
		t.Fatalf("a new run.json lacks the digests: %s", raw)
	}
	delete(m, "data_sha256")
	delete(m, "vocab_sha256")
	if err := protocol.WriteJSON(path, m); err != nil {
		t.Fatal(err)
	}
}

// TestVocabTiedToModel: eval, sg and generate refuse a vocab.txt that is
// not the run's: another run's, or a truncated one; a run made before the
// digest was recorded is checked by size and otherwise accepted.
func TestVocabTiedToModel(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	run, other := filepath.Join(root, "run"), filepath.Join(root, "other")
	mustTrain(t, trainArgs(data, run, "--epochs", "1")...)
	// Another corpus with the same number of words, other words.
	data2 := t.TempDir()
	for _, f := range splitFiles {
		b, _ := os.ReadFile(filepath.Join(data, f))
		if err := os.WriteFile(filepath.Join(data2, f), []byte(strings.ReplaceAll(string(b), "cat", "cow")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustTrain(t, trainArgs(data2, other, "--epochs", "1")...)
	vocabPath := filepath.Join(run, VocabFile)
	own, _ := os.ReadFile(vocabPath)
	otherVocab, _ := os.ReadFile(filepath.Join(other, VocabFile))
	if bytes.Equal(own, otherVocab) || bytes.Count(own, []byte("\n")) != bytes.Count(otherVocab, []byte("\n")) {
		t.Fatal("the two runs should have vocabularies of one size with other words")
	}
	suite := sgWrite(t, filepath.Join(t.TempDir(), "agr.json"), sgSuiteJSON("agr", [][3]string{{"the cat", "sees", "runs"}}))
	commands := [][]string{
		{"eval", "--model", run, "--data", data},
		{"sg", "--suite", suite, "--model", run},
		{"generate", "--model", run, "--sentences", "2"},
	}
	works := func(when string) {
		t.Helper()
		for _, c := range commands {
			if _, e, code := runCmd(c...); code != 0 {
				t.Errorf("%s: %v: status %d: %s", when, c, code, e)
			}
		}
	}
	refused := func(when, want string) {
		t.Helper()
		for _, c := range commands {
			out, e, code := runCmd(c...)
			if code == 0 || !strings.Contains(e, vocabPath) || !strings.Contains(e, want) || out != "" {
				t.Errorf("%s: %v: status %d, stdout %q, stderr %q; want a refusal naming %s (%s)", when, c, code, out, e, vocabPath, want)
			}
		}
	}
	works("the run's own vocabulary")
	truncated := own[:bytes.LastIndexByte(own[:len(own)-1], '\n')+1]
	for _, c := range []struct {
		name    string
		content []byte
	}{{"another run's vocabulary", otherVocab}, {"a truncated vocabulary", truncated}} {
		if err := os.WriteFile(vocabPath, c.content, 0o644); err != nil {
			t.Fatal(err)
		}
		refused(c.name, "not the vocabulary the run was trained with")
	}
	// A run made before the digest: its own vocabulary works, a truncated
	// one is refused by its size; one of the same size cannot be told.
	oldRunJSON(t, run)
	if err := os.WriteFile(vocabPath, own, 0o644); err != nil {
		t.Fatal(err)
	}
	works("an old run with its own vocabulary")
	if err := os.WriteFile(vocabPath, truncated, 0o644); err != nil {
		t.Fatal(err)
	}
	refused("an old run with a truncated vocabulary", "words")
}

// TestUnknownWords: words not in the vocabulary are counted and reported
// at training, evaluation and SG time (stderr, and a JSON field), and
// --strict refuses them naming the file and line.
func TestUnknownWords(t *testing.T) {
	data := tinyCorpus(t)
	validPath := filepath.Join(data, ptb.ValidFile)
	editFile(t, validPath, func(s string) string { return "the zebra sees a yak\n" + s })
	run := filepath.Join(t.TempDir(), "run")
	e := mustTrain(t, trainArgs(data, run, "--epochs", "1")...)
	if !strings.Contains(e, "2 words not in the vocabulary of ptb.train.txt were read as <unk>") || !strings.Contains(e, validPath) || !strings.Contains(e, `"zebra" at line 1`) {
		t.Errorf("train does not report the unknown words:\n%s", e)
	}
	strictOut := filepath.Join(t.TempDir(), "strict")
	if _, e, code := runCmd(trainArgs(data, strictOut, "--strict")...); code == 0 || !strings.Contains(e, validPath+":1:") || !strings.Contains(e, `"zebra"`) {
		t.Errorf("train --strict: status %d, %q; want a refusal naming %s:1 and zebra", code, e, validPath)
	}
	if _, err := os.Stat(strictOut); err == nil {
		t.Error("a refused run created its directory")
	}

	// A test file of unknown words only.
	evalData := t.TempDir()
	testPath := filepath.Join(evalData, ptb.TestFile)
	if err := os.WriteFile(testPath, []byte("the cat\nquux quuz corge\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, e, code := runCmd("eval", "--model", run, "--data", evalData, "--split", "test", "--json")
	var res evalResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.UnknownWords != 3 {
		t.Errorf("eval --json: status %d, %s; want unknown_words 3", code, out)
	}
	if !strings.Contains(e, "3 words not in the run's vocabulary were read as <unk>") || !strings.Contains(e, `"quux" at line 2`) {
		t.Errorf("eval does not report the unknown words: %q", e)
	}
	if out, _, _ := runCmd("eval", "--model", run, "--data", data, "--json"); !strings.Contains(out, `"unknown_words": 2`) {
		t.Errorf("eval of the validation split: %s; want unknown_words 2", out)
	}
	if _, e, code := runCmd("eval", "--model", run, "--data", evalData, "--split", "test", "--strict"); code == 0 || !strings.Contains(e, testPath+":2:") || !strings.Contains(e, `"quux"`) {
		t.Errorf("eval --strict: status %d, %q; want a refusal naming %s:2 and quux", code, e, testPath)
	}

	suite := sgWrite(t, filepath.Join(t.TempDir(), "agr.json"), sgSuiteJSON("agr", [][3]string{{"the cat", "sees", "runs"}, {"the gnu", "sees", "runs"}}))
	code, out, e = sgRun("--suite", suite, "--model", run, "--json")
	var sres map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &sres) != nil || sres["unknown_words"] != 2.0 {
		t.Errorf("sg --json: status %d, %s, %s; want unknown_words 2 (gnu in two conditions)", code, out, e)
	}
	if !strings.Contains(e, "2 words not in the run's vocabulary") || !strings.Contains(e, suite) {
		t.Errorf("sg does not report the unknown words: %q", e)
	}
	if code, _, e := sgRun("--suite", suite, "--model", run, "--strict"); code == 0 || !strings.Contains(e, suite) || !strings.Contains(e, `"gnu" in item 2`) {
		t.Errorf("sg --strict: status %d, %q; want a refusal naming the suite and the item", code, e)
	}
	dir := filepath.Dir(suite)
	code, out, _ = sgRun("--suites", dir, "--model", run, "--json")
	if code != 0 || !strings.Contains(out, `"unknown_words":2`) {
		t.Errorf("sg --suites --json: status %d, %s; want unknown_words 2", code, out)
	}
}

// TestResumeOtherData: a resume on a corpus other than the run's is
// refused naming the file; a run.json written before the digests (as the
// runs in flight have) still resumes, and ends as an uninterrupted run.
func TestResumeOtherData(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	whole, part := filepath.Join(root, "whole"), filepath.Join(root, "part")
	mustTrain(t, trainArgs(data, whole)...)
	args := trainArgs(data, part, "--checkpoint-every", "1ns")
	mustTrain(t, append(args, "--stop-after-steps", "20")...)

	// Two training lines swapped, in place: the same vocabulary, other
	// data.
	trainPath := filepath.Join(data, ptb.TrainFile)
	original, _ := os.ReadFile(trainPath)
	editFile(t, trainPath, func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		lines[0], lines[1] = lines[1], lines[0]
		return strings.Join(lines, "")
	})
	before := vocabAndRun(t, part)
	for _, a := range [][]string{append(slices.Clone(args), "--resume"), {"train", "--out", part, "--resume"}} {
		if _, e, code := runCmd(a...); code == 0 || !strings.Contains(e, trainPath) || strings.Contains(e, ptb.ValidFile) {
			t.Errorf("resume on other data: status %d, %q; want a refusal naming %s alone", code, e, trainPath)
		}
	}
	if after := vocabAndRun(t, part); after != before {
		t.Error("a refused resume changed run.json or vocab.txt")
	}

	// An old run: its run.json has no digests, nor have its checkpoints
	// (the run is started from such a run.json, as the runs in flight
	// were). A corpus whose vocabulary differs is refused all the same;
	// on its data it resumes.
	if err := os.WriteFile(trainPath, original, 0o644); err != nil {
		t.Fatal(err)
	}
	part = filepath.Join(root, "old")
	args = trainArgs(data, part, "--checkpoint-every", "1ns")
	if err := os.MkdirAll(part, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{protocol.RunFile, VocabFile} {
		b, err := os.ReadFile(filepath.Join(whole, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(part, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	oldRunJSON(t, part)
	mustTrain(t, append(args, "--resume", "--stop-after-steps", "20")...)
	old, _ := os.ReadFile(filepath.Join(part, protocol.RunFile))
	if err := os.WriteFile(trainPath, bytes.ReplaceAll(original, []byte("cat"), []byte("cow")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := runCmd(append(slices.Clone(args), "--resume")...); code == 0 || !strings.Contains(e, VocabFile) || !strings.Contains(e, trainPath) {
		t.Errorf("old run resumed on a corpus with another vocabulary: status %d, %q", code, e)
	}
	if err := os.WriteFile(trainPath, original, 0o644); err != nil {
		t.Fatal(err)
	}
	mustTrain(t, append(args, "--resume")...)
	if now, _ := os.ReadFile(filepath.Join(part, protocol.RunFile)); !bytes.Equal(now, old) {
		t.Errorf("resuming an old run rewrote its run.json:\n%s\n%s", old, now)
	}
	a, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	b, _ := os.ReadFile(filepath.Join(part, protocol.ModelFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the old run, resumed, ended on another model than an uninterrupted run")
	}
	// And an old finished run still evaluates.
	if _, e, code := runCmd("eval", "--model", part, "--data", data); code != 0 {
		t.Errorf("eval of an old run: %s", e)
	}
}

// vocabAndRun is the content of a run's run.json and vocab.txt.
func vocabAndRun(t *testing.T, dir string) string {
	t.Helper()
	a, _ := os.ReadFile(filepath.Join(dir, protocol.RunFile))
	b, _ := os.ReadFile(filepath.Join(dir, VocabFile))
	return string(a) + "\x00" + string(b)
}

// TestInterruptAndPrintedResume: SIGINT stops ptb train after the current
// chunk with a checkpoint and exit status 130, printing a resume command
// that works as printed (every setting from run.json), and the resumed run
// ends exactly as an uninterrupted one. Flags given on resume that differ
// from run.json are refused by name; those that agree are accepted.
func TestInterruptAndPrintedResume(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	whole, part := filepath.Join(root, "whole"), filepath.Join(root, "part")
	mustTrain(t, trainArgs(data, whole)...)

	defer func(f func(chan<- os.Signal)) { notifySignals = f }(notifySignals)
	notifySignals = func(ch chan<- os.Signal) { ch <- os.Interrupt }
	_, e, code := runCmd(trainArgs(data, part)...)
	notifySignals = func(chan<- os.Signal) {}
	if code == 0 {
		t.Skip("the run finished before the interrupt reached it")
	}
	_, cmd, found := strings.Cut(e, "resume with: ")
	if code != 130 || !found {
		t.Fatalf("interrupted: status %d, stderr %q; want 130 and a resume command", code, e)
	}
	if _, err := os.Stat(filepath.Join(part, protocol.CheckpointFile)); err != nil {
		t.Fatalf("no checkpoint after the interrupt: %v", err)
	}
	words := strings.Fields(cmd)
	i := slices.Index(words, "train")
	if i < 0 || !slices.Equal(words[i:], []string{"train", "--out", part, "--resume"}) {
		t.Fatalf("resume command %q; want ... train --out %s --resume", cmd, part)
	}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--lr", "0.3"}, "--lr 0.5 → 0.3"},
		{[]string{"--hidden", "7"}, "--hidden"},
		{[]string{"--window", "5"}, "--window"},
		{[]string{"--precision", "float64"}, "--precision"},
		{[]string{"--seed", "8"}, "--seed"},
		{[]string{"--data", t.TempDir()}, "--data"},
	} {
		before := vocabAndRun(t, part)
		_, e, code := runCmd(append(slices.Clone(words[i:]), c.flags...)...)
		if code == 0 || !strings.Contains(e, c.want) {
			t.Errorf("resume with %v: status %d, %q; want a refusal naming %s", c.flags, code, e, c.want)
		}
		if vocabAndRun(t, part) != before {
			t.Errorf("resume with %v changed the run", c.flags)
		}
	}
	// The printed command, as printed, with flags that agree too.
	e = mustTrain(t, append(slices.Clone(words[i:]), "--lr", "0.5", "--model", "rns", "--window", "4")...)
	if !strings.Contains(e, "resuming at epoch") {
		t.Errorf("the resumed run does not say where it continues: %s", e)
	}
	a, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	b, _ := os.ReadFile(filepath.Join(part, protocol.ModelFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the interrupted and resumed run ended on another model than an uninterrupted run")
	}
}

// TestFailedNewRunRemoved: a new run that fails before its first
// checkpoint leaves nothing, so that the same command can run again; a
// resumed run removes the temporary files of a killed write.
func TestFailedNewRunRemoved(t *testing.T) {
	data := tinyCorpus(t)
	for _, existed := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "run")
		if existed {
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		args := trainArgs(data, out)
		if _, e, code := runCmd(append(slices.Clone(args), "--lr", "1e30")...); code == 0 || !strings.Contains(e, "loss") {
			t.Fatalf("--lr 1e30: status %d, %q; want a diverged run", code, e)
		}
		entries, err := os.ReadDir(out)
		if existed && (err != nil || len(entries) != 0) || !existed && err == nil {
			t.Errorf("existed %v: the failed run left %v (%v)", existed, entries, err)
		}
		mustTrain(t, append(args, "--epochs", "1")...)
	}

	out := filepath.Join(t.TempDir(), "run")
	args := trainArgs(data, out, "--checkpoint-every", "1ns")
	mustTrain(t, append(slices.Clone(args), "--stop-after-steps", "5")...)
	stale := []string{".checkpoint.tmp0123456789abcdef", ".model.tmpfedcba9876543210", ".vocab.txt.tmp00000000000000aa"}
	for _, n := range stale {
		if err := os.WriteFile(filepath.Join(out, n), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if e := mustTrain(t, append(args, "--resume")...); !strings.Contains(e, "removed 3 temporary files") {
		t.Errorf("the resume does not say it removed the temporary files: %s", e)
	}
	for _, n := range append(stale, protocol.LockFile) {
		if _, err := os.Stat(filepath.Join(out, n)); err == nil {
			t.Errorf("%s left after the run", n)
		}
	}
}

// TestStopAfterStepsResumes: --stop-after-steps stops as an interrupt
// does, with a checkpoint of the state after that step (without
// --checkpoint-every), within an epoch and at an epoch's last step alike,
// and the resumed run ends on the model of an uninterrupted one.
func TestStopAfterStepsResumes(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	e := mustTrain(t, trainArgs(data, whole)...)
	want, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	var targets, chunks int
	if i := strings.Index(e, " training targets in "); i < 0 {
		t.Fatalf("no chunk count in %q", e)
	} else if _, err := fmt.Sscanf(e[strings.LastIndex(e[:i], " ")+1:], "%d training targets in %d chunks", &targets, &chunks); err != nil || chunks < 3 {
		t.Fatalf("chunk count in %q: %d, %v", e, chunks, err)
	}
	for _, steps := range []string{"2", strconv.Itoa(chunks)} { // within the first epoch; its last step
		part := filepath.Join(root, "part"+steps)
		e := mustTrain(t, trainArgs(data, part, "--stop-after-steps", steps)...)
		if !strings.Contains(e, "continue with") {
			t.Errorf("--stop-after-steps %s: %s; want a resume command", steps, e)
		}
		if _, err := os.Stat(filepath.Join(part, protocol.CheckpointFile)); err != nil {
			t.Fatalf("--stop-after-steps %s: no checkpoint: %v", steps, err)
		}
		mustTrain(t, "train", "--out", part, "--resume")
		if got, _ := os.ReadFile(filepath.Join(part, protocol.ModelFile)); len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("--stop-after-steps %s, resumed: another model than the uninterrupted run's", steps)
		}
	}
}

// TestRunDirectoryLocked: a run directory that another process holds is
// refused, naming the directory and the process, and nothing changes.
func TestRunDirectoryLocked(t *testing.T) {
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	args := trainArgs(data, out, "--checkpoint-every", "1ns")
	mustTrain(t, append(slices.Clone(args), "--stop-after-steps", "5")...)
	lock, err := protocol.LockDir(out)
	if err != nil {
		t.Fatal(err)
	}
	before := vocabAndRun(t, out)
	ck, _ := os.ReadFile(filepath.Join(out, protocol.CheckpointFile))
	for _, a := range [][]string{append(slices.Clone(args), "--resume"), {"train", "--out", out, "--resume"}} {
		_, e, code := runCmd(a...)
		if code == 0 || !strings.Contains(e, out) || !strings.Contains(e, fmt.Sprintf("process %d", os.Getpid())) {
			t.Errorf("%v while locked: status %d, %q; want a refusal naming %s and the process", a, code, e, out)
		}
	}
	if ck2, _ := os.ReadFile(filepath.Join(out, protocol.CheckpointFile)); vocabAndRun(t, out) != before || !bytes.Equal(ck, ck2) {
		t.Error("a refused run changed the directory")
	}
	lock.Release()
	mustTrain(t, "train", "--out", out, "--resume")
}

// TestGenerateOnCFLRun: ptb commands refuse the run directory of cfl
// train instead of printing nothing.
func TestGenerateOnCFLRun(t *testing.T) {
	dir := t.TempDir()
	cfg := nsrnn.Config{Kind: nsrnn.LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 4}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(filepath.Join(dir, protocol.ModelFile)); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteJSON(filepath.Join(dir, protocol.RunFile), protocol.Settings{Task: "dyck", Model: cfg, LR: 0.01}); err != nil {
		t.Fatal(err)
	}
	for _, withVocab := range []bool{false, true} {
		if withVocab {
			if err := os.WriteFile(filepath.Join(dir, VocabFile), []byte("<eos>\n<unk>\n(\n)\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, args := range [][]string{{"generate", "--model", dir}, {"generate", "--model", dir, "--sentences", "3"}, {"eval", "--model", dir, "--data", tinyCorpus(t)}} {
			out, e, code := runCmd(args...)
			if code == 0 || out != "" || !strings.Contains(e, "not a ptb train run") {
				t.Errorf("vocab.txt %v: %v: status %d, stdout %q, stderr %q; want a refusal", withVocab, args, code, out, e)
			}
		}
	}
}

// TestLineEndsAndBOM: a corpus with CR line ends and a byte-order mark
// trains on the same vocabulary and tokens as its LF original.
func TestLineEndsAndBOM(t *testing.T) {
	data := tinyCorpus(t)
	mac := t.TempDir()
	for _, f := range splitFiles {
		b, _ := os.ReadFile(filepath.Join(data, f))
		if err := os.WriteFile(filepath.Join(mac, f), []byte("\uFEFF"+strings.ReplaceAll(string(b), "\n", "\r")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	mustTrain(t, trainArgs(data, a, "--epochs", "1")...)
	mustTrain(t, trainArgs(mac, b, "--epochs", "1")...)
	va, _ := os.ReadFile(filepath.Join(a, VocabFile))
	vb, _ := os.ReadFile(filepath.Join(b, VocabFile))
	ma, _ := os.ReadFile(filepath.Join(a, protocol.ModelFile))
	mb, _ := os.ReadFile(filepath.Join(b, protocol.ModelFile))
	if !bytes.Equal(va, vb) || !bytes.Equal(ma, mb) {
		t.Errorf("CR line ends and a BOM changed the run: vocabularies\n%s\n%s", va, vb)
	}
}

// TestStreamKinds: the kinds ptb offers are those whose Kind.Streams is
// set, and each of them, and none other, runs as a stream with ptb's
// configuration.
func TestStreamKinds(t *testing.T) {
	for _, k := range nsrnn.AllKinds() {
		mf := &cli.ModelFlags{Model: nsrnn.Config{Kind: k.Name, Hidden: 4, Layers: 1}}
		if k.Uses("States") {
			mf.Model.States, mf.Model.Symbols = 2, 2
		}
		if k.Uses("StackEmbedding") {
			mf.Model.StackEmbedding = 3
		}
		cfg, err := ptbConfig(mf, 10)
		if !k.Streams {
			if err == nil || !strings.Contains(err.Error(), "cannot run as a stream") {
				t.Errorf("%s: ptbConfig error %v; want a refusal", k.Name, err)
			}
			// Not even with the memory limits ptb would give.
			mf.Model.Window, mf.Model.DepthLimit = 0, 0
			c, _ := mf.Config(10, 10, 4, 0.05)
			if m, err := nsrnn.New(c, 1); err == nil {
				if _, err := m.NewStream(2); err == nil {
					t.Errorf("%s runs as a stream, but Kind.Streams is false", k.Name)
				}
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		m, err := nsrnn.New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.NewStream(2); err != nil {
			t.Errorf("%s: Kind.Streams, but: %v", k.Name, err)
		}
	}
	if got, want := streamKinds(), "lstm, jm, ns, ns+s, ns+u, rns, vrns"; got != want {
		t.Errorf("streamKinds() = %q, want %q", got, want)
	}
}

// TestResumeMoreEpochs: a run trained for one epoch (a draw of a search,
// judged early) and resumed with a larger --epochs goes on, counts as
// unfinished meanwhile, records the new maximum, and ends on the model of
// a run trained for that many epochs from the start; other flags still
// may not change.
func TestResumeMoreEpochs(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	whole, part := filepath.Join(root, "whole"), filepath.Join(root, "part")
	mustTrain(t, trainArgs(data, whole, "--epochs", "2")...)
	mustTrain(t, trainArgs(data, part, "--epochs", "1")...)
	if _, err := os.Stat(filepath.Join(part, protocol.SummaryFile)); err != nil {
		t.Fatalf("the one-epoch run did not finish: %v", err)
	}
	if _, e, code := runCmd("train", "--out", part, "--resume", "--epochs", "2", "--lr", "0.25"); code == 0 || !strings.Contains(e, "--lr") {
		t.Errorf("resume with another --lr: status %d, %q; want a refusal naming --lr", code, e)
	}
	e := mustTrain(t, "train", "--out", part, "--resume", "--epochs", "2", "--stop-after-steps", "3")
	if !strings.Contains(e, "--epochs 2: the run's maximum was 1") {
		t.Errorf("no note of the new maximum: %q", e)
	}
	if _, err := os.Stat(filepath.Join(part, protocol.SummaryFile)); !os.IsNotExist(err) {
		t.Errorf("the extended run still has its summary.json while it trains: %v", err)
	}
	var rs settings
	raw, _ := os.ReadFile(filepath.Join(part, protocol.RunFile))
	if err := json.Unmarshal(raw, &rs); err != nil || rs.Epochs != 2 {
		t.Errorf("run.json after the extension: epochs %d (%v), want 2", rs.Epochs, err)
	}
	// A bare resume continues with the recorded maximum.
	mustTrain(t, "train", "--out", part, "--resume")
	a, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	b, _ := os.ReadFile(filepath.Join(part, protocol.ModelFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the extended run ended on another model than a run of two epochs from the start")
	}
	var sum summary
	raw, _ = os.ReadFile(filepath.Join(part, protocol.SummaryFile))
	if err := json.Unmarshal(raw, &sum); err != nil || sum.Epochs != 2 {
		t.Errorf("summary after the extension: %d epochs (%v), want 2", sum.Epochs, err)
	}
}
