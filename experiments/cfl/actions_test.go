package main

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func TestActionsRecordsEveryEpoch(t *testing.T) {
	out := t.TempDir()
	var stderr bytes.Buffer
	args := []string{"--out", out, "--epochs", "2", "--train-size", "4", "--valid-size", "2", "--batch-size", "2",
		"--lengths", "5:9", "--length", "9", "--hidden", "4"}
	if err := runActions(args, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, m := range []string{"ns+s", "rns"} {
		recs, err := readActions(filepath.Join(out, m, actionsFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 {
			t.Fatalf("%s: %d records, want 2 (one per epoch)", m, len(recs))
		}
		for i, r := range recs {
			if r.Epoch != i+1 || len(strings.Fields(r.String)) != 9 || !strings.Contains(r.String, "#") {
				t.Errorf("%s: record %d: epoch %d string %q", m, i, r.Epoch, r.String)
			}
			if len(r.Weights) != 8 {
				t.Errorf("%s: %d positions, want 8", m, len(r.Weights))
			}
			for tt, w := range r.Weights {
				if s := w[0] + w[1] + w[2]; math.Abs(s-1) > 1e-6 {
					t.Errorf("%s epoch %d t=%d: weights %v sum to %g", m, r.Epoch, tt+1, w, s)
				}
			}
		}
	}
	if err := runActions([]string{"--out", out, "--models", "lstm"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--models") {
		t.Errorf("error %v, want one naming --models", err)
	}
}
