package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFakeActions writes DIR/<model>/actions.jsonl for a marked-reversal
// string of length 9 over the given number of epochs.
func writeFakeActions(t *testing.T, dir string, models []string, epochs int) {
	t.Helper()
	for _, m := range models {
		var b []byte
		for e := 1; e <= epochs; e++ {
			ws := make([][3]float64, 8)
			for i := range ws {
				p := float64(e) / float64(epochs)
				ws[i] = [3]float64{p, 0, 1 - p}
			}
			line, _ := json.Marshal(actionRecord{Epoch: e, String: "0 1 1 0 # 0 1 1 0", Weights: ws})
			b = append(append(b, line...), '\n')
		}
		if err := os.MkdirAll(filepath.Join(dir, m), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m, actionsFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPlotActionsOnly(t *testing.T) {
	adir, out := t.TempDir(), t.TempDir()
	writeFakeActions(t, adir, []string{"rns"}, 3)
	var stdout bytes.Buffer
	if err := runPlot([]string{"--actions", adir, "--out", out}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), fig3Name+".png") {
		t.Errorf("output %q does not list the figure", stdout.String())
	}
	if err := runPlot([]string{"--actions", t.TempDir(), "--out", out}, &stdout, &bytes.Buffer{}); err == nil {
		t.Error("no error for an empty --actions directory")
	}
}

func TestCorrectAction(t *testing.T) {
	// 0 1 # 1 0: updates t = 1 … 4; # is symbol 3.
	got := []int{correctAction(1, 3), correctAction(2, 3), correctAction(3, 3), correctAction(4, 3)}
	// Update 3 (on #) pops the 1 that predicted the symbol after #, so that
	// the 0 is on top for the prediction after that.
	want := []int{actPush, actPush, actPop, actPop}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("t=%d: %d, want %d", i+1, got[i], want[i])
		}
	}
}
