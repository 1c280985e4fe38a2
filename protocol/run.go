package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// Files in a training run's directory.
const (
	// RunFile holds the run's settings (Settings for the formal-language
	// runs), written when the run is created.
	RunFile = "run.json"
	// LogFile is the training log, one nsrnn.EpochRecord per line (see
	// ReadLog).
	LogFile = "log.jsonl"
	// CheckpointFile is the training state, rewritten after every epoch
	// and, where the trainer asks for it, within one.
	CheckpointFile = "checkpoint"
	// ModelFile is the trained model with its best parameters (nsrnn.Load).
	ModelFile = "model"
	// SummaryFile is the Summary of a finished run; a run without it is
	// unfinished.
	SummaryFile = "summary.json"
	// GrammarCopyFile is a copy of the grammar file of a run on a grammar
	// of the user's (Settings.GrammarFile), written when the run starts
	// or resumes, so that the run can be used where the file has moved or
	// changed (Settings.TaskDefIn).
	GrammarCopyFile = "grammar.pcfg"
)

// MissingModel returns the error for a run directory dir without its
// ModelFile: a run that has not finished yet, or, when dir has a
// SummaryFile, a finished run whose model is not there, such as a copy of
// a run's small files (as a results directory keeps them) or a run
// restored from one. The error names dir and says what there is instead:
// for an unfinished run, the epochs its LogFile holds and, once an epoch
// has been validated, its CheckpointFile, which holds the best model so
// far (a program that reads checkpoints takes that file as its model).
func MissingModel(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, SummaryFile)); err == nil {
		return fmt.Errorf("%s: the run has finished, but its model file is missing (no %s): a copy of a run without its model, such as a results directory keeps, cannot be evaluated; use the directory where it trained", dir, ModelFile)
	}
	ckpt := filepath.Join(dir, CheckpointFile)
	if _, err := os.Stat(ckpt); err != nil {
		return fmt.Errorf("%s: the run has not finished and has no checkpoint yet (no %s, no %s): there is no model to use until it has trained an epoch", dir, ModelFile, CheckpointFile)
	}
	recs, err := ReadLog(filepath.Join(dir, LogFile))
	switch {
	case err != nil:
		// No log to tell how far it came (a copy of some of its files).
		return fmt.Errorf("%s: the run has not finished: no %s yet; once an epoch has been validated, its best model so far is in %s: give that file as the model", dir, ModelFile, ckpt)
	case len(recs) == 0:
		return fmt.Errorf("%s: the run has not finished its first epoch: no %s yet, and its %s holds no validated model; resume the run to train on", dir, ModelFile, CheckpointFile)
	}
	epochs := fmt.Sprintf("%d epochs", len(recs))
	if len(recs) == 1 {
		epochs = "1 epoch"
	}
	return fmt.Errorf("%s: the run has not finished: no %s yet; after %s (%s) the best model so far is in %s: give that file as the model",
		dir, ModelFile, epochs, filepath.Join(dir, LogFile), ckpt)
}

// ErrNotEmpty is returned (wrapped) by PrepareRun when a new run's directory
// exists and holds files.
var ErrNotEmpty = errors.New("directory exists and is not empty")

// ErrNoRun is returned (wrapped) by PrepareRun when a run to resume is in a
// directory that holds files but no run.json.
var ErrNoRun = errors.New("directory holds no training run")

// SettingsError is returned by PrepareRun when the run to resume was made
// with other settings.
type SettingsError struct {
	// Dir is the run directory and Path its run.json.
	Dir, Path string
	// Diffs are the settings that differ, sorted, each written
	// "name: saved → given" with the names and values of run.json (its
	// JSON keys, those of nested objects joined with dots, as in
	// "model.hidden: 20 → 10").
	Diffs []string
}

// Error names the run, its settings file and the settings that differ.
func (e *SettingsError) Error() string {
	return fmt.Sprintf("the settings differ from those of the run in %s (%s): %s", e.Dir, e.Path, strings.Join(e.Diffs, "; "))
}

// PrepareRun makes dir ready for a training run with settings s, which are
// saved as JSON in dir/run.json.
//
// Without resume, dir must be absent or empty: it is created and run.json
// written; a directory that holds files is never touched, and the error
// wraps ErrNotEmpty (LockFile does not count: a caller takes LockDir
// first). With resume, a dir that holds a run.json must hold a
// run with the same settings, compared as JSON after decoding run.json into
// an S (so a field that an older run.json lacks takes the value S's
// decoding gives it): the error for other settings is a *SettingsError
// listing them, and nothing is written. An absent or empty dir is created
// as without resume, and one that holds files but no run.json is an error
// wrapping ErrNoRun. In every case dir must be writable (CheckWritable), so
// that a run cannot fail at its first checkpoint for want of permission.
func PrepareRun[S any](dir string, s S, resume bool) error {
	_, err := PrepareDir(dir, RunFile, s, resume)
	return err
}

// PrepareDir is PrepareRun with the settings saved in dir/file instead of
// dir/run.json, for directories of runs that model selection should not
// find (FindRuns looks for run.json). It reports whether it wrote the
// settings file, that is, whether the run is new.
func PrepareDir[S any](dir, file string, s S, resume bool) (created bool, err error) {
	entries, err := os.ReadDir(dir)
	entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool { return e.Name() == LockFile })
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return false, err
		}
	case err != nil:
		return false, err
	case len(entries) > 0 && !resume:
		return false, fmt.Errorf("%s: %w", dir, ErrNotEmpty)
	}
	if err := CheckWritable(dir); err != nil {
		return false, err
	}
	path := filepath.Join(dir, file)
	if resume {
		exists, err := CheckSettingsFile(path, s)
		switch {
		case err != nil:
			return false, err
		case exists:
			return false, nil
		case len(entries) > 0:
			return false, fmt.Errorf("%s: %w (no %s)", dir, ErrNoRun, file)
		}
	}
	if err := WriteJSON(path, s); err != nil {
		return false, err
	}
	return true, nil
}

// CheckRunModel returns an error if the model m, read from the file at
// path, cannot be the model of a run whose settings record the model
// want: another kind or another hidden size (a file copied from another
// run).
func CheckRunModel(m *nsrnn.Model, want nsrnn.Config, path string) error {
	if c := m.Config(); c.Kind != want.Kind || c.Hidden != want.Hidden {
		return fmt.Errorf("%s holds a %s model with %d hidden units, but the run's settings record %s with %d: the file is not the run's",
			path, c.Kind, c.Hidden, want.Kind, want.Hidden)
	}
	return nil
}

// CheckSettingsFile compares the settings saved as JSON in path with s,
// after decoding the file into an S. It reports whether the file exists;
// when it does and the settings differ, the error is a *SettingsError
// listing the differences. Nothing is written.
func CheckSettingsFile[S any](path string, s S) (exists bool, err error) {
	b, err := readlimit.File(path, readlimit.JSON, true)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	}
	var saved S
	if err := json.Unmarshal(b, &saved); err != nil {
		return true, fmt.Errorf("%s: %w", path, err)
	}
	diffs, err := diffJSON(saved, s)
	if err != nil {
		return true, err
	}
	if len(diffs) > 0 {
		return true, &SettingsError{Dir: filepath.Dir(path), Path: path, Diffs: diffs}
	}
	return true, nil
}

// CheckWritable checks that files can be created in the directory dir, by
// creating and removing one; the error names dir.
func CheckWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".write-test-*")
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return fmt.Errorf("%s is not writable: %w", dir, err)
		}
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// diffJSON lists the JSON values that differ between saved and given, as
// "key: saved → given", sorted; the keys of nested objects are joined with
// dots ("model.hidden: 20 → 10").
func diffJSON(saved, given any) ([]string, error) {
	var flatten func(prefix string, raw json.RawMessage, out map[string]string)
	flatten = func(prefix string, raw json.RawMessage, out map[string]string) {
		var m map[string]json.RawMessage
		if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &m) == nil && len(m) > 0 {
			for k, v := range m {
				if prefix != "" {
					k = prefix + "." + k
				}
				flatten(k, v, out)
			}
			return
		}
		out[prefix] = string(raw)
	}
	flat := func(v any) (map[string]string, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 || b[0] != '{' {
			return nil, fmt.Errorf("settings are not a JSON object: %s", b)
		}
		out := map[string]string{}
		flatten("", b, out)
		return out, nil
	}
	a, err := flat(saved)
	if err != nil {
		return nil, err
	}
	b, err := flat(given)
	if err != nil {
		return nil, err
	}
	var diffs []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", k, v, w))
		}
	}
	for k, w := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", k, "", w))
		}
	}
	slices.Sort(diffs)
	return diffs, nil
}

// WriteJSON writes v as indented JSON, with a final newline, to path,
// atomically: a reader sees the old file or the new one, never a mix. The
// file's mode is 0666 less the umask.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, append(b, '\n'))
}

// readJSON decodes the JSON file at path into v; a decoding error names
// the file.
func readJSON(path string, v any) error {
	b, err := readlimit.File(path, readlimit.JSON, true)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
