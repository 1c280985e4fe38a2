package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
