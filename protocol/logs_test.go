package protocol

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

func TestReadLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LogFile)
	os.WriteFile(path, []byte(`{"epoch":1,"valid_cross_entropy_diff":0.5,"improved":true}`+"\n\n"+
		`{"epoch":2,"valid_cross_entropy_diff":0.25,"elapsed_seconds":3}`+"\n"), 0o644)
	recs, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []nsrnn.EpochRecord{{Epoch: 1, ValidDifference: 0.5, Improved: true}, {Epoch: 2, ValidDifference: 0.25, ElapsedSeconds: 3}}
	if len(recs) != 2 || recs[0] != want[0] || recs[1] != want[1] {
		t.Errorf("ReadLog = %+v, want %+v", recs, want)
	}
	os.WriteFile(path, []byte(`{"epoch":1}`+"\n"+`{"epoch":`+"\n"), 0o644)
	if _, err := ReadLog(path); err == nil || !strings.Contains(err.Error(), path+":2:") {
		t.Errorf("bad line: error %v, want one naming %s:2", err, path)
	}
	if _, err := ReadLog(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing log: error %v", err)
	}
}

func TestSummary(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadSummary(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unfinished run: error %v, want os.ErrNotExist", err)
	}
	m, err := nsrnn.New(tinySettings().Model, 1)
	if err != nil {
		t.Fatal(err)
	}
	res := &nsrnn.TrainResult{Epochs: 4, BestEpoch: 3, BestValidCrossEntropy: 0.75, BestValidDifference: 0.25, ElapsedSeconds: 2}
	s := NewSummary("marked-reversal", m, res, 0.5)
	if s.Parameters != m.NumParams() || s.SecondsPerEpoch != 0.5 || s.ValidLowerBound != 0.5 || s.BestValidCrossEntropyDiff != 0.25 || s.Model != m.Config() || s.BLAS != nsrnn.BLAS {
		t.Errorf("NewSummary = %+v", s)
	}
	if err := WriteJSON(filepath.Join(dir, SummaryFile), s); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSummary(dir)
	if err != nil || *got != s {
		t.Errorf("ReadSummary = %+v, %v; want %+v", got, err, s)
	}
	os.WriteFile(filepath.Join(dir, SummaryFile), []byte("{"), 0o644)
	if _, err := ReadSummary(dir); err == nil || !strings.Contains(err.Error(), SummaryFile) {
		t.Errorf("corrupt summary: error %v, want one naming the file", err)
	}
}

// TestReadSummaryDamaged: a summary that no run writes is refused naming
// the file; a good one is read.
func TestReadSummaryDamaged(t *testing.T) {
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"task":"dyck","epochs":3,"best_epoch":2,"best_valid_cross_entropy_diff":-0.001}`, true},
		{`{"task":"dyck","epochs":3,"best_epoch":-5}`, false},
		{`{"task":"dyck","epochs":3,"best_epoch":4}`, false},
		{`{"task":"dyck","epochs":0,"best_epoch":0}`, false},
		{`{"task":"dyck","epochs":3,"best_epoch":2,"best_valid_cross_entropy_diff":1e999}`, false},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadSummary(dir)
		if c.ok != (err == nil) || !c.ok && !strings.Contains(err.Error(), SummaryFile) {
			t.Errorf("%s: %v", c.body, err)
		}
	}
}

// A damaged log (records out of order, repeated, empty, or with
// impossible times) is refused naming the file and line.
func TestReadLogDamaged(t *testing.T) {
	dir := t.TempDir()
	good := `{"epoch":1,"elapsed_seconds":1,"epoch_seconds":1}` + "\n"
	for _, c := range []struct{ name, content, want string }{
		{"repeated", good + good, ":2: a record of epoch 1 where epoch 2 was expected"},
		{"starts at 2", `{"epoch":2}` + "\n", ":1: a record of epoch 2 where epoch 1"},
		{"empty object", good + "{}\n", ":2: a record of epoch 0"},
		{"null", "null\n", ":1: a record of epoch 0"},
		{"huge epoch", good + `{"epoch":4611686018427387904}` + "\n", ":2: a record of epoch 4611686018427387904"},
		{"negative time", good + `{"epoch":2,"elapsed_seconds":-1}` + "\n", ":2: epoch 2's times"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".jsonl")
		os.WriteFile(path, []byte(c.content), 0o644)
		_, err := ReadLog(path)
		if err == nil || !strings.Contains(err.Error(), path+c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, path+c.want)
		}
	}
}
