package protocol

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
)

// TestSavedRunsLoad reads every run.json committed with the project (the
// results of the CFL sweep and the test data of the cfl program), written
// before tasks had parameters: each loads, names a task of the table with
// the paper's parameters, and written back gives the same JSON, so that a
// run resumed with the same flags has the same settings.
func TestSavedRunsLoad(t *testing.T) {
	var files []string
	for _, root := range []string{"../results/cfl", "../experiments/cfl/testdata"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && d.Name() == RunFile {
				files = append(files, path)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if len(files) == 0 {
		t.Skip("no saved runs")
	}
	for _, path := range files {
		s, err := ReadSettings(filepath.Dir(path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		task, err := s.TaskDef()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if task.Name() != s.Task || task.Params() != nil || s.TaskParams != nil {
			t.Errorf("%s: task %s, settings' parameters %v", path, task, s.TaskParams)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var saved, again map[string]any
		if err := json.Unmarshal(b, &saved); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatal(err)
		}
		if _, ok := again["task_params"]; ok {
			t.Errorf("%s: written back with task_params: %s", path, out)
		}
		if saved["grammar"] == nil {
			saved["grammar"] = string(data.GrammarPaper) // read as paper
		}
		if !reflect.DeepEqual(saved, again) {
			t.Errorf("%s: written back as %s", path, out)
		}
		// What train would compare on --resume: the settings of the same
		// flags, task parameters from the task.
		given := s
		given.TaskParams = task.Params()
		if _, err := CheckSettingsFile(path, given); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestSettingsTaskParams checks the task parameters of a run's settings:
// saved when not at their defaults, compared on resume, and used by
// TaskDef and SampleRun.
func TestSettingsTaskParams(t *testing.T) {
	s := tinySettings()
	s.TaskParams = data.Params{data.SymbolTypes: 3}
	s.Model.InputVocab, s.Model.OutputVocab = 4, 5
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"task_params":{"symbol-types":3}`) {
		t.Errorf("marshalled as %s", b)
	}
	var back Settings
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, s) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	task, err := s.TaskDef()
	if err != nil {
		t.Fatal(err)
	}
	if got := task.Terminals(); len(got) != 4 || task.Params()[data.SymbolTypes] != 3 {
		t.Errorf("TaskDef: %s with terminals %q", task, got)
	}
	d, err := SampleRun(task, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range append(d.Train, d.Valid...) {
		for _, w := range b {
			if ok, _ := task.Contains(w); !ok {
				t.Fatalf("sampled %v, not a string of %s", w, task)
			}
		}
	}
	// The data of other parameters is refused.
	paper, _ := data.NewTask(data.MarkedReversal)
	if _, err := SampleRun(paper, s); err == nil || !strings.Contains(err.Error(), "symbol-types") {
		t.Errorf("settings with 3 symbol types for the paper's task: %v", err)
	}
	// A resumed run with other parameters differs in them.
	dir := filepath.Join(t.TempDir(), "run")
	if err := PrepareRun(dir, s, false); err != nil {
		t.Fatal(err)
	}
	s2 := s
	s2.TaskParams = data.Params{data.SymbolTypes: 4}
	err = PrepareRun(dir, s2, true)
	if se, ok := errors.AsType[*SettingsError](err); !ok || !strings.Contains(strings.Join(se.Diffs, ";"), "task_params.symbol-types: 3 → 4") {
		t.Errorf("other parameters on resume: %v", err)
	}
}

// TestSampleRun2023 draws the data of a run of a 2023 task: strings of the
// language, and the lower bound of the validation set in closed form,
// (Σ log N(|w|) + S·log K) / Σ (|w| + 1) with N(n) = 2^((n−1)/2).
func TestSampleRun2023(t *testing.T) {
	task, err := data.NewTask(data.MarkedCopy)
	if err != nil {
		t.Fatal(err)
	}
	s := tinySettings()
	s.Task = data.MarkedCopy
	s.MinLength, s.MaxLength = 5, 11 // 5, 7, 9, 11: K = 4
	d, err := SampleRun(task, s)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	var symbols int
	for _, b := range d.Valid {
		for _, w := range b {
			if ok, _ := task.Contains(w); !ok {
				t.Fatalf("validation string %v is not in the language", w)
			}
			sum += float64(len(w)-1)/2*math.Ln2 + math.Log(4)
			symbols += len(w) + 1
		}
	}
	if want := sum / float64(symbols); math.Abs(d.LowerBound.Entropy-want) > 1e-12 || d.LowerBound.ValidLengths != 4 {
		t.Errorf("lower bound %v with K = %d, want %v with K = 4", d.LowerBound.Entropy, d.LowerBound.ValidLengths, want)
	}
	if TaskTitle(data.UnmarkedCopyDifferentAlphabets) == data.UnmarkedCopyDifferentAlphabets {
		t.Error("no title for a 2023 task")
	}
}

// TestSelectRunsTaskParams checks that runs of one task with other
// parameters are selected separately.
func TestSelectRunsTaskParams(t *testing.T) {
	run := func(dir string, p data.Params, diff float64) Run {
		s := tinySettings()
		s.TaskParams = p
		return Run{Dir: dir, Settings: s, Summary: &Summary{BestValidCrossEntropyDiff: diff}}
	}
	sel := SelectRuns("S", []Run{
		run("a", data.Params{data.SymbolTypes: 40}, 0.1),
		run("b", nil, 0.3),
		run("c", data.Params{data.SymbolTypes: 40}, 0.05),
		run("d", nil, 0.2),
	})
	if len(sel.Selected) != 2 {
		t.Fatalf("%d selected, want 2", len(sel.Selected))
	}
	if a, b := sel.Selected[0], sel.Selected[1]; a.Dir != "d" || a.TaskParams != nil || b.Dir != "c" || b.TaskParams[data.SymbolTypes] != 40 || b.Candidates != 2 {
		t.Errorf("selected %+v", sel.Selected)
	}
}
