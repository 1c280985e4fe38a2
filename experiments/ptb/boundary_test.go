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
	checkInterruptedResume(t, data, whole, part, next, "--boundary", "in-chunk")
	a := readFile(t, filepath.Join(whole, protocol.ModelFile))
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", in}, tinyModel...)...); code != 0 {
		t.Fatalf("train in-chunk: %s", e)
	}
	if readFile(t, filepath.Join(in, protocol.ModelFile)) == a {
		t.Error("next-chunk and in-chunk trained the same model")
	}
	if s := readFile(t, filepath.Join(in, protocol.RunFile)); strings.Contains(s, "boundary") {
		t.Errorf("an in-chunk run.json names a boundary (runs made before the choice have none):\n%s", s)
	}
	checkRefusedValue(t, data, filepath.Join(root, "bad"), "--boundary", "authors")
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
	checkInterruptedResume(t, data, ce, part, old, "--improvement", "perplexity")
	if s := readFile(t, filepath.Join(part, protocol.RunFile)); strings.Contains(s, "improvement") {
		t.Errorf("a resumed cross-entropy run took the flag's default rule:\n%s", s)
	}
	checkRefusedValue(t, data, filepath.Join(root, "bad"), "--improvement", "loss")
}

// checkInterruptedResume trains a run of args in part, stopped after 40
// steps, and checks that a resume giving flag another value is refused,
// naming it, and that the resume with the run's own settings ends with
// the model of the uninterrupted run in whole.
func checkInterruptedResume(t *testing.T, data, whole, part string, args []string, flag, other string) {
	t.Helper()
	stopped := append([]string{"train", "--data", data, "--out", part, "--checkpoint-every", "1ns", "--stop-after-steps", "40"}, args...)
	if _, e, code := runCmd(stopped...); code != 0 {
		t.Fatalf("stopped run: %s", e)
	}
	if _, e, code := runCmd("train", "--out", part, "--resume", flag, other); code == 0 || !strings.Contains(e, flag) {
		t.Errorf("resume with %s %s: code %d, %s", flag, other, code, e)
	}
	if _, e, code := runCmd("train", "--out", part, "--resume"); code != 0 {
		t.Fatalf("resume: %s", e)
	}
	a, b := readFile(t, filepath.Join(whole, protocol.ModelFile)), readFile(t, filepath.Join(part, protocol.ModelFile))
	if a == "" || a != b {
		t.Error("the resumed run's model differs from the uninterrupted run's")
	}
}

// checkRefusedValue checks that a new run in out with flag set to value
// is refused, naming the flag, before anything is written.
func checkRefusedValue(t *testing.T, data, out, flag, value string) {
	t.Helper()
	if _, e, code := runCmd(append([]string{"train", "--data", data, "--out", out, flag, value}, tinyModel...)...); code == 0 || !strings.Contains(e, flag) {
		t.Errorf("%s %s: code %d, %s", flag, value, code, e)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run left %s (%v)", out, err)
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
