package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// FuzzRunFiles reads arbitrary bytes as each file of a run and of a sweep
// that the commands read back: run.json (ReadSettings, then the run's
// task, TaskDef, for a run on no grammar file), summary.json (ReadSummary),
// log.jsonl (ReadLog) and selected.json (ReadSelection). Each is refused
// with an error naming the file, or gives values that write (as JSON) and
// read back the same; never a panic. The seeds are the files of
// experiments/cfl/testdata and of a run and the selection in results/cfl.
func FuzzRunFiles(f *testing.F) {
	files := []string{RunFile, SummaryFile, LogFile, SelectedFile}
	// The seeds are kept small (a log's first lines, a selection's first
	// runs): the fuzzer spends its time minimizing large ones.
	for i, p := range []string{
		"../experiments/cfl/testdata/marked-rns/run.json",
		"../experiments/cfl/testdata/marked-rns/summary.json",
		"../results/cfl/hardest-cfl/rns/lr0.005/seed1/log.jsonl",
		"../results/cfl/selected.json",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // a results directory not checked out
		}
		switch files[i] {
		case LogFile:
			lines := bytes.SplitAfterN(b, []byte("\n"), 3)
			b = bytes.Join(lines[:min(2, len(lines))], nil)
		case SelectedFile:
			var sel Selection
			if err := json.Unmarshal(b, &sel); err != nil {
				f.Fatal(err)
			}
			sel.Selected = sel.Selected[:min(2, len(sel.Selected))]
			if b, err = json.Marshal(&sel); err != nil {
				f.Fatal(err)
			}
		}
		f.Add(uint8(i), b)
	}
	f.Add(uint8(0), []byte(`{"task":"dyck","task_params":{"k":3},"model":{"kind":"lstm"}}`))
	f.Add(uint8(0), []byte(`{"task":"mine","files":{"train":{"path":"a"},"valid":{"path":"b"},"vocabulary":["a","b"]}}`))
	f.Add(uint8(2), []byte(`{"epoch":1,"valid_cross_entropy_diff":0.5,"improved":true}`+"\n\n"+`{"epoch":2,"elapsed_seconds":3}`+"\n"))
	f.Add(uint8(3), []byte(`{"sweep":"elsewhere","selected":[{"task":"dyck","dir":"elsewhere/x","test_file":"elsewhere/y"}]}`))
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		dir := t.TempDir()
		name := files[int(which)%len(files)]
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var v any
		var err error
		switch name {
		case RunFile:
			var s Settings
			if s, err = ReadSettings(dir); err == nil {
				if s.GrammarFile == nil {
					s.TaskDef()
				}
				s.TrainConfig(0)
				v = &s
			}
		case SummaryFile:
			v, err = ReadSummary(dir)
		case LogFile:
			var recs []nsrnn.EpochRecord
			if recs, err = ReadLog(path); err == nil {
				v = &recs
			}
		case SelectedFile:
			v, err = ReadSelection(dir)
		}
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("%s: error %q does not name the file", name, err)
			}
			return
		}
		// What was read writes and reads back the same.
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: read as %+v, which does not write: %v", name, v, err)
		}
		back := reflect.New(reflect.TypeOf(v).Elem())
		if err := json.Unmarshal(out, back.Interface()); err != nil {
			t.Fatalf("%s: written as %s, which does not read back: %v", name, out, err)
		}
		again, err := json.Marshal(back.Interface())
		if err != nil || string(again) != string(out) {
			t.Fatalf("%s: written as %s, read back and written as %s (%v)", name, out, again, err)
		}
	})
}
