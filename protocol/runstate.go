package protocol

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// RunState tells whether a run's directory is absent or empty (RunNew),
// holds an interrupted run (RunResume), or a finished one with
// SummaryFile (RunFinished).
func RunState(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, SummaryFile)); err == nil {
		return RunFinished, nil
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return RunNew, nil
	case err != nil:
		return "", err
	case len(entries) == 0:
		return RunNew, nil
	}
	return RunResume, nil
}

// RunProgress describes how far the run in dir has come, from its training
// log (LogFile): the epochs done, the best validation score
// with its epoch, and the seconds of the last epoch, e.g. "124 epochs,
// best validation difference 0.0594 at epoch 120, last epoch 98 s". The
// score is the difference from the lower bound, or the perplexity (the
// exponential of the cross-entropy) for a run marked without one
// (nsrnn.EpochRecord.NoLowerBound) or when perplexity is set: a program
// whose runs have no lower bound although their logs do not mark it (ptb,
// whose records hold the cross-entropy as their difference from a bound
// of 0) sets it. It is "" for a run without a log or with an empty one; a
// log that cannot be read is an error naming the file and line.
func RunProgress(dir string, perplexity bool) (string, error) {
	recs, err := ReadLog(filepath.Join(dir, LogFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	case len(recs) == 0:
		return "", nil
	}
	best := recs[0]
	for _, r := range recs[1:] {
		if r.ValidCrossEntropy < best.ValidCrossEntropy {
			best = r
		}
	}
	last := recs[len(recs)-1]
	score := fmt.Sprintf("best validation difference %.4f", best.ValidDifference)
	if perplexity || best.NoLowerBound {
		score = fmt.Sprintf("best validation perplexity %.4g", math.Exp(best.ValidCrossEntropy))
	}
	epochs := "epochs"
	if last.Epoch == 1 {
		epochs = "epoch"
	}
	return fmt.Sprintf("%d %s, %s at epoch %d, last epoch %.0f s", last.Epoch, epochs, score, best.Epoch, last.EpochSeconds), nil
}

// RunStatus is a run's state (RunState) and how far it has come
// (RunProgress, with perplexity), for the programs' dry runs: a log that
// cannot be read is described by its error in place of the progress, so
// that one damaged run does not hide the others. An unfinished run that
// a process trains now (it holds the run's lock) says so, naming the
// process, where an interrupted one does not.
func RunStatus(dir string, perplexity bool) (state, progress string, err error) {
	if state, err = RunState(dir); err != nil {
		return "", "", err
	}
	progress, err = RunProgress(dir, perplexity)
	if err != nil {
		progress = err.Error()
	}
	if holder, held := LockHolder(dir); held && state == RunResume {
		// Not interrupted: training now.
		if holder == "" {
			holder = "another process"
		}
		progress = strings.TrimPrefix(progress+"; ", "; ") + "training now (" + holder + ")"
	}
	return state, progress, nil
}

// Run states found on disk (RunState).
const (
	RunNew      = "new"
	RunResume   = "resume"
	RunFinished = "finished"
)
