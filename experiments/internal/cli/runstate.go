package cli

import (
	"path/filepath"

	"github.com/nsrnn/nsrnn/protocol"
)

// SweepRun is one training run of a sweep, as the programs' sweep commands
// execute it, locally (RunSweep) or on Slurm (SlurmScript).
type SweepRun struct {
	// Dir is the run's directory: the run is finished when it holds
	// protocol.SummaryFile.
	Dir string
	// Args are the program's arguments that train the run, the command
	// name first.
	Args []string
	// Resume, when set, is appended to Args when Dir holds files (an
	// interrupted run), e.g. "--resume".
	Resume string
}

// LogFile is the file a run's output is appended to: <Dir>.log, next to
// the run's directory.
func (r SweepRun) LogFile() string { return filepath.Clean(r.Dir) + ".log" }

// CommandArgs are the arguments that execute the run in the given state:
// Args, with Resume for an interrupted run.
func (r SweepRun) CommandArgs(state string) []string {
	args := append([]string(nil), r.Args...)
	if state == protocol.RunResume && r.Resume != "" {
		args = append(args, r.Resume)
	}
	return args
}
