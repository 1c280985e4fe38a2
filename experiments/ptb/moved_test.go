package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/protocol"
)

// TestResumeMovedCorpus: a run whose corpus moved (the same files, by
// their SHA-256, at another place) resumes there, run.json records the
// new place, and the run, stopped and resumed again there, ends on the
// model of an uninterrupted run; a corpus at another place whose file
// differs is refused, naming the file, and changes nothing; a resume
// without --data whose recorded corpus is gone says to give it.
func TestResumeMovedCorpus(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	whole, part := filepath.Join(root, "whole"), filepath.Join(root, "part")
	mustTrain(t, trainArgs(data, whole)...)
	mustTrain(t, trainArgs(data, part, "--checkpoint-every", "1ns", "--stop-after-steps", "20")...)

	// The corpus moves: its copy elsewhere, the original gone.
	moved := filepath.Join(root, "cluster", "ptb")
	copyDir(t, data, moved)
	gone := data + "-gone"
	if err := os.Rename(data, gone); err != nil {
		t.Fatal(err)
	}
	before := vocabAndRun(t, part)
	if _, e, code := runCmd("train", "--out", part, "--resume"); code == 0 || !strings.Contains(e, filepath.Join(data, ptb.TrainFile)) || !strings.Contains(e, "--data") {
		t.Errorf("resume with the corpus gone: status %d, %q; want a refusal naming the file and --data", code, e)
	}

	// A copy with one file changed is not the run's corpus.
	changed := filepath.Join(root, "changed")
	copyDir(t, moved, changed)
	editFile(t, filepath.Join(changed, ptb.ValidFile), func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		lines[0], lines[1] = lines[1], lines[0]
		return strings.Join(lines, "")
	})
	if _, e, code := runCmd("train", "--out", part, "--resume", "--data", changed); code == 0 || !strings.Contains(e, filepath.Join(changed, ptb.ValidFile)) || strings.Contains(e, ptb.TrainFile) {
		t.Errorf("resume on a changed corpus elsewhere: status %d, %q; want a refusal naming %s alone", code, e, ptb.ValidFile)
	}
	if after := vocabAndRun(t, part); after != before {
		t.Error("a refused resume changed run.json or vocab.txt")
	}

	// The moved corpus: resumed, stopped again, and resumed from run.json
	// alone to the end.
	e := mustTrain(t, "train", "--out", part, "--resume", "--data", moved, "--stop-after-steps", "20")
	if !strings.Contains(e, "now at "+moved) {
		t.Errorf("the resume does not say that the corpus moved: %s", e)
	}
	var rec struct {
		Data      string `json:"data"`
		BeganData string `json:"began_data"`
	}
	raw, _ := os.ReadFile(filepath.Join(part, protocol.RunFile))
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Data != moved || rec.BeganData != data {
		t.Errorf("run.json records the corpus at %q, begun at %q (%v); want %s, begun at %s", rec.Data, rec.BeganData, err, moved, data)
	}
	if _, err := os.Stat(filepath.Join(part, protocol.ModelFile)); err == nil {
		t.Fatal("the run finished before its second stop: stop it earlier")
	}
	mustTrain(t, "train", "--out", part, "--resume")
	a, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	b, _ := os.ReadFile(filepath.Join(part, protocol.ModelFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the moved run ended on another model than an uninterrupted run")
	}
	for _, cmd := range [][]string{{"eval", "--model", part}, {"train", "--out", part, "--resume", "--data", moved, "--epochs", "4", "--stop-after-steps", "1"}} {
		if _, e, code := runCmd(cmd...); code != 0 {
			t.Errorf("%v after the move: status %d: %s", cmd, code, e)
		}
	}
	raw, _ = os.ReadFile(filepath.Join(part, protocol.RunFile))
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Data != moved || rec.BeganData != data {
		t.Errorf("after --epochs, run.json records the corpus at %q, begun at %q (%v); want %s, begun at %s", rec.Data, rec.BeganData, err, moved, data)
	}

	// Back where it began: run.json forgets the move.
	if err := os.Rename(gone, data); err != nil {
		t.Fatal(err)
	}
	mustTrain(t, "train", "--out", part, "--resume", "--data", data, "--stop-after-steps", "1")
	raw, _ = os.ReadFile(filepath.Join(part, protocol.RunFile))
	rec.BeganData = ""
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Data != data || rec.BeganData != "" || bytes.Contains(raw, []byte("began")) {
		t.Errorf("back at its place, run.json is %s", raw)
	}
}

// copyDir copies the files of the directory src into dst, made.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o777); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
