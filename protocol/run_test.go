package protocol

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// tinySettings are the settings of a small marked-reversal run.
func tinySettings() Settings {
	return Settings{
		Task: data.MarkedReversal, Grammar: data.GrammarPaper,
		Model: nsrnn.Config{Kind: nsrnn.RNS, InputVocab: 3, OutputVocab: 4, Hidden: 4, States: 2, Symbols: 3},
		LR:    0.01, Seed: 4, Epochs: 3, TrainSize: 20, ValidSize: 10, BatchSize: 5, MinLength: 5, MaxLength: 9,
		Clip: 5, Patience: 5, EarlyStop: 10, Decay: 0.9,
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

func TestPrepareRunNew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "run")
	s := tinySettings()
	if err := PrepareRun(dir, s, false); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSettings(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("run.json reads back as %+v, want %+v", got, s)
	}
	// The keys of run.json, in order.
	text := readFile(t, filepath.Join(dir, RunFile))
	last := -1
	for _, k := range []string{"task", "grammar", "model", "lr", "seed", "epochs", "train_size", "valid_size",
		"batch_size", "min_length", "max_length", "clip", "patience", "early_stop", "decay"} {
		i := strings.Index(text, `"`+k+`":`)
		if i < last {
			t.Errorf("run.json: key %q missing or out of order:\n%s", k, text)
		}
		last = i
	}
	if !strings.Contains(text, `"grammar": "paper"`) {
		t.Errorf("run.json does not record the grammar:\n%s", text)
	}

	// A non-empty directory is refused without resume, and left alone.
	err = PrepareRun(dir, s, false)
	if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), dir) {
		t.Errorf("existing run without resume: error %v, want ErrNotEmpty naming %s", err, dir)
	}
	// An empty existing directory is fine.
	if err := PrepareRun(t.TempDir(), s, false); err != nil {
		t.Errorf("empty directory: %v", err)
	}
}

func TestPrepareRunResume(t *testing.T) {
	dir := t.TempDir()
	s := tinySettings()
	if err := PrepareRun(dir, s, true); err != nil {
		t.Fatalf("resume into an empty directory: %v", err)
	}
	before := readFile(t, filepath.Join(dir, RunFile))
	if err := PrepareRun(dir, s, true); err != nil {
		t.Errorf("resume with the same settings: %v", err)
	}
	other := s
	other.LR, other.Model.Hidden, other.Grammar = 0.02, 5, data.GrammarReleased
	err := PrepareRun(dir, other, true)
	var se *SettingsError
	if !errors.As(err, &se) {
		t.Fatalf("resume with other settings: error %v, want a *SettingsError", err)
	}
	if se.Dir != dir || se.Path != filepath.Join(dir, RunFile) || len(se.Diffs) != 3 {
		t.Errorf("SettingsError %+v", se)
	}
	for i, want := range []string{`grammar: "paper" → "released"`, "lr: 0.01 → 0.02", "model.hidden: 4 → 5"} {
		if i < len(se.Diffs) && !strings.HasPrefix(se.Diffs[i], want) {
			t.Errorf("diff %d is %q, want it to start with %q", i, se.Diffs[i], want)
		}
	}
	if after := readFile(t, filepath.Join(dir, RunFile)); after != before {
		t.Error("a refused resume changed run.json")
	}

	// Files but no run.json: no run to resume.
	stray := t.TempDir()
	os.WriteFile(filepath.Join(stray, "notes.txt"), []byte("x"), 0o644)
	if err := PrepareRun(stray, s, true); !errors.Is(err, ErrNoRun) {
		t.Errorf("resume in a directory without a run: error %v, want ErrNoRun", err)
	}
	if _, err := os.Stat(filepath.Join(stray, RunFile)); !errors.Is(err, os.ErrNotExist) {
		t.Error("run.json written into a directory that holds no run")
	}
}

// TestOldRunJSON checks that a run.json without "grammar" (written before
// the choice) is a paper run: it resumes with the paper's settings and is
// refused with the released ones.
func TestOldRunJSON(t *testing.T) {
	dir := t.TempDir()
	s := tinySettings()
	b, _ := json.Marshal(s)
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "grammar")
	b, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSettings(dir)
	if err != nil || got.Grammar != data.GrammarPaper {
		t.Fatalf("old run.json: grammar %q, error %v; want paper", got.Grammar, err)
	}
	if err := PrepareRun(dir, s, true); err != nil {
		t.Errorf("resuming an old run with --grammar paper: %v", err)
	}
	s.Grammar = data.GrammarReleased
	var se *SettingsError
	if err := PrepareRun(dir, s, true); !errors.As(err, &se) || len(se.Diffs) != 1 || !strings.HasPrefix(se.Diffs[0], "grammar:") {
		t.Errorf("resuming an old run as released: error %v, want a difference in grammar", err)
	}
}

func TestSettingsJSON(t *testing.T) {
	var s Settings
	b, err := json.Marshal(s)
	if err != nil || !strings.Contains(string(b), `"grammar":"paper"`) {
		t.Errorf("zero Settings marshal to %s, %v; want grammar paper", b, err)
	}
	err = json.Unmarshal([]byte(`{"task":"dyck","grammar":"authors"}`), &s)
	if err == nil || !strings.Contains(err.Error(), "authors") || !strings.Contains(err.Error(), "paper, released") {
		t.Errorf("unknown grammar: error %v, want one naming it and listing the names", err)
	}
	if err := json.Unmarshal([]byte(`{"task":"dyck","grammar":"released"}`), &s); err != nil || s.Grammar != data.GrammarReleased {
		t.Errorf("released: %+v, %v", s, err)
	}
	if task, err := s.TaskDef(); err != nil || task.Name() != data.Dyck || task.Definition() != data.GrammarReleased {
		t.Errorf("TaskDef: %v, %v", task, err)
	}
}

func TestSeedsAndTrainConfig(t *testing.T) {
	// The derivations are part of the runs on disk: they must not change.
	if DataSeed(7) != 7 || InitSeed(7) != 7^0x5eed0001 || ShuffleSeed(7) != 7^0x5eed0002 {
		t.Error("the seed derivations changed")
	}
	s := tinySettings()
	tc := s.TrainConfig(1.25)
	if tc.LR != 0.01 || tc.Clip != 5 || tc.EarlyStop != 10 || tc.MaxEpochs != 3 || tc.Seed != ShuffleSeed(4) || tc.LowerBound != 1.25 {
		t.Errorf("TrainConfig %+v", tc)
	}
	if p, ok := tc.Schedule.(*nsrnn.Plateau); !ok || *p != nsrnn.CFLPlateau {
		t.Errorf("schedule %+v, want the paper's %+v", tc.Schedule, nsrnn.CFLPlateau)
	}
	if tc := (Settings{LR: 0.1}).TrainConfig(0); tc.Schedule != nil || tc.Clip != 0 || tc.EarlyStop != 0 {
		t.Errorf("zero settings: %+v, want nsrnn's defaults", tc)
	}
	// The device is not one of the checkpoint's settings: a run resumes
	// on another. A CPU run's run.json has no "device".
	gpu := s
	gpu.Device = "cuda:0"
	if got := gpu.TrainConfig(1.25).Settings; !reflect.DeepEqual(got, tc.Settings) || got["seed"] != "4" {
		t.Errorf("checkpoint settings on cuda:0 %v, on the CPU %v; want the same", got, tc.Settings)
	}
	if b, err := json.Marshal(s); err != nil || strings.Contains(string(b), "device") {
		t.Errorf("the settings of a CPU run: %s (%v); want no device", b, err)
	}
}

func TestMissingModel(t *testing.T) {
	dir := t.TempDir()
	says := func(what string, wants ...string) {
		t.Helper()
		err := MissingModel(dir)
		for _, want := range append(wants, dir) {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v, want it to say %q", what, err, want)
			}
		}
	}
	says("a run without a checkpoint", "has not finished and has no checkpoint yet")
	if err := os.WriteFile(filepath.Join(dir, CheckpointFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	says("a run without its log", "has not finished", "once an epoch has been validated", filepath.Join(dir, CheckpointFile)+": give that file")
	if err := os.WriteFile(filepath.Join(dir, LogFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	says("a run in its first epoch", "has not finished its first epoch", "holds no validated model")
	rec := `{"epoch":1,"train_loss":1,"valid_cross_entropy":1,"lower_bound":0.5,"valid_cross_entropy_diff":0.5,"learning_rate":0.01,"elapsed_seconds":1,"epoch_seconds":1,"improved":true}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, LogFile), []byte(rec+strings.Replace(rec, `"epoch":1`, `"epoch":2`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	says("a run after two epochs", "has not finished", "after 2 epochs", filepath.Join(dir, LogFile), "best model so far is in "+filepath.Join(dir, CheckpointFile))
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	says("a finished run", "has finished, but its model file is missing")
}
