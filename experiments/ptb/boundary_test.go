package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// --boundary next-chunk trains with the stack update after a chunk's last
// token made in the next chunk: recorded in run.json, resumed bit for bit
// (a resume with the other boundary is refused, naming the flag), and a
// different run from in-chunk's (its action layer gets more gradient);
// an unknown boundary is refused before anything is written.
func TestTrainBoundary(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	whole, part, in := filepath.Join(root, "whole"), filepath.Join(root, "part"), filepath.Join(root, "in")
	next := append([]string{"--boundary", "next-chunk"}, tinyModel...)
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", whole}, next...)...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	if s := readFile(t, filepath.Join(whole, protocol.RunFile)); !strings.Contains(s, `"boundary": "next-chunk"`) {
		t.Errorf("run.json does not record the boundary:\n%s", s)
	}
	args := append([]string{"train", "--data", data, "--out", part, "--checkpoint-every", "1ns"}, next...)
	if _, e, code := runCmd(append(args, "--stop-after-steps", "40")...); code != 0 {
		t.Fatalf("stopped run: %s", e)
	}
	if _, e, code := runCmd("train", "--out", part, "--resume", "--boundary", "in-chunk"); code == 0 || !strings.Contains(e, "--boundary") {
		t.Errorf("resume with the other boundary: code %d, %s", code, e)
	}
	if _, e, code := runCmd("train", "--out", part, "--resume"); code != 0 {
		t.Fatalf("resume: %s", e)
	}
	a, b := readFile(t, filepath.Join(whole, protocol.ModelFile)), readFile(t, filepath.Join(part, protocol.ModelFile))
	if a == "" || a != b {
		t.Error("the resumed run's model differs from the uninterrupted run's")
	}
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", in}, tinyModel...)...); code != 0 {
		t.Fatalf("train in-chunk: %s", e)
	}
	if readFile(t, filepath.Join(in, protocol.ModelFile)) == a {
		t.Error("next-chunk and in-chunk trained the same model")
	}
	if s := readFile(t, filepath.Join(in, protocol.RunFile)); strings.Contains(s, "boundary") {
		t.Errorf("an in-chunk run.json names a boundary (runs made before the choice have none):\n%s", s)
	}
	bad := filepath.Join(root, "bad")
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", bad, "--boundary", "authors"}, tinyModel...)...); code == 0 || !strings.Contains(e, "--boundary") {
		t.Errorf("--boundary authors: code %d, %s", code, e)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a refused run left %s (%v)", bad, err)
	}
}

// --improvement: a new run judges its epochs by the authors' rule
// (perplexity) and records it in run.json; cross-entropy, the rule of the
// runs made before the choice, records nothing, so their run.json reads
// as it; a run resumes with its own rule (another is refused, naming the
// flag), bit for bit; an unknown rule is refused before anything is
// written.
func TestTrainImprovement(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	ppl, ce, part := filepath.Join(root, "ppl"), filepath.Join(root, "ce"), filepath.Join(root, "part")
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", ppl}, tinyModel...)...); code != 0 {
		t.Fatalf("train: %s", e)
	}
	if s := readFile(t, filepath.Join(ppl, protocol.RunFile)); !strings.Contains(s, `"improvement": "perplexity"`) {
		t.Errorf("run.json does not record the authors' rule:\n%s", s)
	}
	old := append([]string{"--improvement", "cross-entropy"}, tinyModel...)
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", ce}, old...)...); code != 0 {
		t.Fatalf("train --improvement cross-entropy: %s", e)
	}
	if s := readFile(t, filepath.Join(ce, protocol.RunFile)); strings.Contains(s, "improvement") {
		t.Errorf("a cross-entropy run.json names a rule (runs made before the choice have none):\n%s", s)
	}
	args := append([]string{"train", "--data", data, "--out", part, "--checkpoint-every", "1ns"}, old...)
	if _, e, code := runCmd(append(args, "--stop-after-steps", "40")...); code != 0 {
		t.Fatalf("stopped run: %s", e)
	}
	if _, e, code := runCmd("train", "--out", part, "--resume", "--improvement", "perplexity"); code == 0 || !strings.Contains(e, "--improvement") {
		t.Errorf("resume of a cross-entropy run with --improvement perplexity: code %d, %s", code, e)
	}
	if _, e, code := runCmd("train", "--out", part, "--resume"); code != 0 {
		t.Fatalf("resume: %s", e)
	}
	a, b := readFile(t, filepath.Join(ce, protocol.ModelFile)), readFile(t, filepath.Join(part, protocol.ModelFile))
	if a == "" || a != b {
		t.Error("the resumed run's model differs from the uninterrupted run's")
	}
	if s := readFile(t, filepath.Join(part, protocol.RunFile)); strings.Contains(s, "improvement") {
		t.Errorf("a resumed cross-entropy run took the flag's default rule:\n%s", s)
	}
	bad := filepath.Join(root, "bad")
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", bad, "--improvement", "loss"}, tinyModel...)...); code == 0 || !strings.Contains(e, "--improvement") {
		t.Errorf("--improvement loss: code %d, %s", code, e)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a refused run left %s (%v)", bad, err)
	}
}

// The settings' schedule: the authors' rule for "perplexity", Plateau on
// the cross-entropy otherwise, both with the threshold 1e-4 and the
// run's decay.
func TestSettingsSchedule(t *testing.T) {
	s := settings{Decay: 0.5, Improvement: improvePerplexity}
	if p, ok := s.schedule().(*nsrnn.PerplexityPlateau); !ok || *p != (nsrnn.PerplexityPlateau{Factor: 0.5, Threshold: 1e-4}) {
		t.Errorf("perplexity: schedule %#v", s.schedule())
	}
	s.Improvement = ""
	if p, ok := s.schedule().(*nsrnn.Plateau); !ok || *p != (nsrnn.Plateau{Factor: 0.5, Threshold: 1e-4}) {
		t.Errorf("cross-entropy: schedule %#v", s.schedule())
	}
}
