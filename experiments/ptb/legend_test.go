package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainExplainsStar checks that the * that ends the line of an
// improved epoch is explained once, before the first epoch line.
func TestTrainExplainsStar(t *testing.T) {
	data := tinyCorpus(t)
	_, e, code := runCmd(append([]string{"train", "--data", data, "--out", filepath.Join(t.TempDir(), "run")}, tinyModel...)...)
	if code != 0 {
		t.Fatalf("train: %s", e)
	}
	legend := strings.Index(e, "* marks an epoch whose validation perplexity is the best so far")
	first := strings.Index(e, " epoch 1/")
	if legend < 0 || first < 0 || legend > first || strings.Count(e, "* marks") != 1 {
		t.Errorf("the * of improved epochs is not explained once before the first epoch line:\n%s", e)
	}
	if !strings.Contains(e, " *\n") {
		t.Errorf("no epoch line is marked improved:\n%s", e)
	}
}
