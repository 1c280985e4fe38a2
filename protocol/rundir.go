package protocol

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// RunDir is the directory of a training run that a command holds: locked
// against other processes (LockDir), and created with its
// settings file or checked against the settings of the run it resumes.
type RunDir struct {
	// Dir is the directory and File its settings file's name.
	Dir, File string
	// Created reports that the settings file was written by this command:
	// the run is new.
	Created bool
	existed bool     // dir existed before
	parents []string // the ancestors of dir made for it, deepest first
	lock    *DirLock
}

// missingParents returns the ancestors of dir that do not exist, deepest
// first: those that making dir makes.
func missingParents(dir string) []string {
	var ps []string
	for p := filepath.Dir(filepath.Clean(dir)); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			return ps
		}
		ps = append(ps, p)
		if filepath.Dir(p) == p {
			return ps
		}
	}
}

// removeMade removes dir, when it did not exist before, and then the
// ancestors made for it, each only if it is empty.
func (r *RunDir) removeMade() {
	if r.existed {
		return
	}
	if os.Remove(r.Dir) != nil {
		return
	}
	for _, p := range r.parents {
		if os.Remove(p) != nil {
			return
		}
	}
}

// CheckResumable returns an error for a run in dir that --resume cannot
// continue: dir holds the run's settings file (file, such as run.json)
// and its log (LogFile), so that it has started training, but
// neither its checkpoint (CheckpointFile) nor, for a finished
// run, its summary (SummaryFile), as a process killed before
// its first checkpoint, or a checkpoint removed by hand, leaves it.
// Resuming such a run would start it again from epoch 1 over its log. The
// error names dir and what is missing, and how to start afresh. An absent
// or empty dir, or one without file (a new run, or OpenRunDir's refusal),
// a run that has not started (its settings file without a log: nothing
// to lose) and a finished run are no error here. Nothing is written.
func CheckResumable(dir, file string) error {
	exists := func(name string) (bool, error) {
		_, err := os.Stat(filepath.Join(dir, name))
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, os.ErrNotExist):
			return false, nil
		}
		return false, fmt.Errorf("--resume: %w", err)
	}
	for _, name := range []string{CheckpointFile, SummaryFile} {
		if ok, err := exists(name); ok || err != nil {
			return err
		}
	}
	for _, name := range []string{file, LogFile} {
		if ok, err := exists(name); !ok || err != nil {
			return err
		}
	}
	return fmt.Errorf("--resume: the run in %s cannot be resumed: it has its %s and %s but no %s (it was stopped before its first checkpoint, or the checkpoint was removed) and has not finished (no %s); to start the run afresh, remove %s and run the command again, or drop --resume and give another --out",
		dir, file, LogFile, CheckpointFile, SummaryFile, dir)
}

// OpenRunDir locks dir, removing the temporary files that a killed
// process left there (and saying so on stderr), then creates the run
// directory with its settings file, or checks that a resumed run's
// settings match the saved ones (PrepareDir), with errors that
// name the flags: --out for a directory that holds another run or another
// process, --resume for other settings. An existing non-empty directory is
// never overwritten without resume; a run started under resume (in an
// absent or empty dir) is announced on stderr. The caller must Close the
// RunDir.
func OpenRunDir[S any](dir, file string, s S, resume bool, stderr io.Writer) (*RunDir, error) {
	_, statErr := os.Stat(dir)
	r := &RunDir{Dir: dir, File: file, existed: statErr == nil, parents: missingParents(dir)}
	lock, err := LockDir(dir)
	// Another run of a sweep, abandoned at the same moment, may remove a
	// parent they share (removeMade) between LockDir's making of dir and
	// its lock file: make it again.
	for try := 0; try < 3 && errors.Is(err, os.ErrNotExist); try++ {
		lock, err = LockDir(dir)
	}
	if err != nil {
		r.removeMade()
		return nil, fmt.Errorf("--out: %w", err)
	}
	r.lock = lock
	if len(lock.Removed) > 0 {
		fmt.Fprintf(stderr, "removed %d temporary files left in %s by a killed process: %s\n", len(lock.Removed), dir, strings.Join(lock.Removed, ", "))
	}
	r.Created, err = PrepareDir(dir, file, s, resume)
	var se *SettingsError
	switch {
	case err == nil:
		if resume && r.Created {
			// a mistyped --out would otherwise start a run unnoticed
			fmt.Fprintf(stderr, "--resume: no run in %s yet: starting it\n", dir)
		}
		return r, nil
	case errors.Is(err, ErrNotEmpty):
		err = fmt.Errorf("--out %s exists and is not empty; use --resume to continue its run, or choose another directory", dir)
	case errors.Is(err, ErrNoRun):
		err = fmt.Errorf("--resume: %s holds no run (no %s); choose another --out", dir, file)
	case errors.As(err, &se):
		err = fmt.Errorf("--resume: the flags differ from those of the run in %s (%s): %s; choose another --out for these flags", dir, se.Path, strings.Join(se.Diffs, "; "))
	default:
		err = fmt.Errorf("--out: %w", err)
	}
	r.Close(false)
	return nil, err
}

// Close releases the directory. When ok is false and the run is new, it
// first abandons the run if it has no checkpoint (nothing to resume): it
// removes the settings file, the log, the given further files (names in
// the directory), and the directory itself if it did not exist before and
// is left empty, with the ancestors made for it that are left empty, so
// that the same directory can be used again and nothing is left behind.
// A run with a checkpoint is left alone: it can be resumed.
func (r *RunDir) Close(ok bool, files ...string) {
	if r == nil || r.lock == nil {
		return
	}
	abandon := false
	if !ok && r.Created {
		_, err := os.Stat(filepath.Join(r.Dir, CheckpointFile))
		abandon = errors.Is(err, os.ErrNotExist)
	}
	if abandon {
		for _, f := range append([]string{r.File, LogFile}, files...) {
			os.Remove(filepath.Join(r.Dir, f))
		}
	}
	r.lock.Release()
	r.lock = nil
	if abandon || !r.Created && !ok {
		r.removeMade() // only if empty
	}
}

// UpdateRun records s, the settings of a resumed run that changed its
// device or its maximum number of epochs from the run's own (wasDevice,
// wasEpochs; a device "" is the CPU), in the run's settings file
// (dir/RunFile), and says so on w; a finished run's summary and model are
// removed when more epochs let it go on (its checkpoint holds what they
// did), so that it counts as unfinished until it ends again.
func UpdateRun(dir string, s any, device, wasDevice string, epochs, wasEpochs int, w io.Writer) error {
	flag := "--epochs"
	if epochs == wasEpochs {
		flag = "--device"
	}
	// A finished run given more epochs loses its summary and model (the
	// next ones replace them) before run.json records the new maximum:
	// killed in between, the run is one unfinished at its old maximum,
	// which a resume finishes again, not one that says it has finished
	// and then trains.
	if epochs > wasEpochs {
		for _, f := range []string{SummaryFile, ModelFile} {
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("--epochs: %w", err)
			}
		}
	}
	path := filepath.Join(dir, RunFile)
	if err := WriteJSON(path, s); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if device != wasDevice {
		fmt.Fprintf(w, "--device %s: the run trained on %s before; %s updated\n", cmp.Or(device, "cpu"), cmp.Or(wasDevice, "cpu"), path)
	}
	if epochs != wasEpochs {
		fmt.Fprintf(w, "--epochs %d: the run's maximum was %d; %s updated\n", epochs, wasEpochs, path)
	}
	return nil
}
