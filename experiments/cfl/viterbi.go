package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
	"github.com/nsrnn/nsrnn/stacks"
)

func init() {
	prog.Register("viterbi", "decode the best run of a trained model's nondeterministic stack on strings", runViterbi)
}

// modelFlags registers --model and --last, the model of a command that
// reads a trained model (loadModelFile); taskFrom says where the task
// comes from.
func modelFlags(fs *pflag.FlagSet, taskFrom string) (path *string, last *bool) {
	path = fs.String("model", "", "directory of a cfl train run, or its model file, or the "+protocol.CheckpointFile+
		" file of a run in progress (or of a cfl actions run): its best model so far (required); "+taskFrom)
	last = fs.Bool("last", false, "with --model a "+protocol.CheckpointFile+" file, the model as it was when the checkpoint was written instead of the best so far")
	return path, last
}

// taskFromRun is modelFlags' taskFrom for the commands that read the task
// from the run (loadTaskRun).
const taskFromRun = "the task comes from the run's " + protocol.RunFile + " (or, for cfl actions, " + actionsSettingsFile + ")"

// loadTaskRun loads the model of a cfl train run and the task it was
// trained on. path is the run directory, or its model file, or its
// checkpoint file (protocol.CheckpointFile: the best model so far, or
// with last the model at the checkpoint), whose directory must hold the
// run's run.json, or the settings.json of a cfl actions run: the task and
// its definition come from there. Errors name the --model flag.
func loadTaskRun(path string, last bool) (*nsrnn.Model, *data.Task, protocol.Settings, error) {
	var s protocol.Settings
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, s, fmt.Errorf("--model: %w", err)
	}
	dir, modelPath := path, filepath.Join(path, protocol.ModelFile)
	if !fi.IsDir() {
		dir, modelPath = filepath.Dir(path), path
	}
	s, _, err = readRunSettings(dir)
	if err != nil {
		return nil, nil, s, fmt.Errorf("--model %s: %w", path, err)
	}
	t, err := s.TaskDefIn(dir)
	if err != nil {
		return nil, nil, s, fmt.Errorf("--model %s: %w", path, err)
	}
	if _, err := os.Stat(modelPath); errors.Is(err, os.ErrNotExist) {
		return nil, nil, s, fmt.Errorf("--model: %w", protocol.MissingModel(dir))
	}
	m, err := loadModelFile(modelPath, last)
	if err != nil {
		return nil, nil, s, fmt.Errorf("--model %s: %w", path, err)
	}
	if err := protocol.CheckRunModel(m, s.Model, modelPath); err != nil {
		return nil, nil, s, fmt.Errorf("--model: %w", err)
	}
	if c := m.Config(); c.InputVocab != len(t.Terminals()) || c.OutputVocab != len(t.Vocabulary()) {
		return nil, nil, s, fmt.Errorf("--model %s has a vocabulary of %d symbols, its task %s has %d",
			path, c.OutputVocab, t.Name(), len(t.Vocabulary()))
	}
	return m, t, s, nil
}

// readRunSettings reads the settings of the run in dir: its run.json, or
// the run settings in the settings.json of a cfl actions run. It returns
// them with the path of the file read; a directory with neither file is
// an error wrapping os.ErrNotExist, and one whose settings name no task or
// an invalid model (a damaged file) is an error naming the file.
func readRunSettings(dir string) (protocol.Settings, string, error) {
	path := filepath.Join(dir, protocol.RunFile)
	s, err := protocol.ReadSettings(dir)
	if !errors.Is(err, os.ErrNotExist) {
		if err == nil {
			err = checkRunSettings(path, s)
		}
		return s, path, err
	}
	as, err := readActionsSettings(dir)
	if errors.Is(err, os.ErrNotExist) {
		return s, "", fmt.Errorf("not a cfl train or actions run: no %s or %s in %s: %w", protocol.RunFile, actionsSettingsFile, dir, os.ErrNotExist)
	}
	path = filepath.Join(dir, actionsSettingsFile)
	if err == nil {
		err = checkRunSettings(path, as.Run)
	}
	return as.Run, path, err
}

// checkRunSettings refuses the settings s read from path when they name
// no task or an invalid model, which cfl train and cfl actions never
// write, so that a damaged file is named rather than reported as an
// unknown task "" or a model that is not the run's.
func checkRunSettings(path string, s protocol.Settings) error {
	if s.Task == "" {
		return fmt.Errorf("%s is damaged: it names no task", path)
	}
	if err := s.Model.Validate(); err != nil {
		return fmt.Errorf("%s is damaged: its model is invalid: %w", path, err)
	}
	return nil
}

// loadModelFile loads the model file at path or, when path is a
// checkpoint file (protocol.CheckpointFile), the best model so far in
// it, or with last the model at the checkpoint.
//
// last with a path other than a checkpoint file is an error.
func loadModelFile(path string, last bool) (*nsrnn.Model, error) {
	if filepath.Base(path) != protocol.CheckpointFile {
		if last {
			return nil, fmt.Errorf("--last is for a %s file; %s is not one", protocol.CheckpointFile, path)
		}
		return nsrnn.Load(path)
	}
	cm, err := nsrnn.LoadCheckpointModels(path)
	switch {
	case err != nil:
		return nil, err
	case last:
		return cm.Model, nil
	case cm.Best == nil:
		return nil, errors.New("no epoch has been validated yet, so there is no best model (--last gives the model at the checkpoint)")
	}
	return cm.Best, nil
}

// viterbiRecord is the JSON form of the decoded run on one string: a line
// of viterbi --json. Steps t = 1 … n−1 (the stack updates, the one after
// step t following the reading of w_t) are at index t−1 of Ops, States,
// Depths and Stacks. LogWeight is null when no run has a finite weight.
type viterbiRecord struct {
	// Line is the string's 1-based line in the input.
	Line int `json:"line"`
	// String is the string as read (symbols separated by spaces).
	String string `json:"string"`
	// Ops are the transitions, "push(state=r, symbol=y)",
	// "replace(state=r, symbol=y)" or "pop(state=r)".
	Ops []string `json:"ops"`
	// States are the PDA states after each step.
	States []int `json:"states"`
	// Depths are the stack depths after each step: the number of symbols
	// above the initial bottom.
	Depths []int `json:"depths"`
	// Stacks are the stack contents after each step, bottom first (the
	// initial bottom included).
	Stacks    [][]int  `json:"stacks"`
	LogWeight *float64 `json:"log_weight"`
}

// newViterbiRecord converts a decoded run.
func newViterbiRecord(line int, text string, r stacks.ViterbiRun) viterbiRecord {
	rec := viterbiRecord{Line: line, String: text, Ops: make([]string, len(r.Ops)), States: r.States,
		Depths: make([]int, len(r.Ops)), Stacks: r.Stacks}
	for i, op := range r.Ops {
		rec.Ops[i] = op.String()
		rec.Depths[i] = len(r.Stacks[i]) - 1
	}
	if rec.States == nil {
		rec.States, rec.Stacks = []int{}, [][]int{}
	}
	if !math.IsInf(r.LogWeight, 0) && !math.IsNaN(r.LogWeight) {
		lw := r.LogWeight
		rec.LogWeight = &lw
	}
	return rec
}

// runViterbi decodes, for each string of --in, the highest-weight run of
// the nondeterministic stack of the model of --model (see Model.Viterbi),
// and prints it: a table per string of the symbols w_t aligned with the
// stack update made after reading each (there is none after the last
// symbol), the state, the stack depth and the stack, or with --json one
// viterbiRecord per line.
func runViterbi(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("viterbi", stdout)
	modelPath, last := modelFlags(fs, taskFromRun)
	in := fs.String("in", "", "file of strings, one per line, symbols separated by spaces (- or default: standard input)")
	asJSON := fs.Bool("json", false, "print one JSON object per string")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := requireFlags(fs, "model"); err != nil {
		return err
	}
	m, t, _, err := loadTaskRun(*modelPath, *last)
	if err != nil {
		return err
	}
	if _, ok := m.StackConfig(); !ok {
		return fmt.Errorf("--model %s: a %s model has no nondeterministic stack to decode (viterbi needs one of %s)",
			*modelPath, m.Config().Kind, joinNames(actionKinds()))
	}
	ws, name, err := readIn(*in, t.Terminals())
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for i, w := range ws {
		run, err := m.Viterbi(w)
		if err != nil {
			return &data.LineError{Name: name, Line: i + 1, Err: err}
		}
		text := data.FormatString(w, t.Terminals())
		if *asJSON {
			if err := enc.Encode(newViterbiRecord(i+1, text, run)); err != nil {
				return err
			}
			continue
		}
		if i > 0 {
			if _, err := fmt.Fprintln(stdout); err != nil {
				return err
			}
		}
		if err := writeViterbiText(stdout, name, i+1, w, t.Terminals(), run); err != nil {
			return err
		}
	}
	return nil
}

// writeViterbiText writes the decoded run on the string w of line line as
// a table: one row per symbol w_t, with the stack update made after
// reading it, the state and the stack depth (symbols above the initial
// bottom) after that update, and the stack, bottom first.
func writeViterbiText(w io.Writer, name string, line int, str []int, symbols []string, r stacks.ViterbiRun) error {
	text := data.FormatString(str, symbols)
	if len(str) == 0 {
		text = data.EmptyString // as generate prints it, and the readers take it
	}
	fmt.Fprintf(w, "%s:%d: %s\n", name, line, text)
	fmt.Fprintf(w, "log-weight %.6g over %d stack updates (the sum of the model's log-weights of this run's transitions, the highest of any run; "+
		"one update follows each symbol but the last, as the model would never read an update after it)\n", r.LogWeight, len(r.Ops))
	inputs := make([]string, len(str))
	for t, x := range str {
		inputs[t] = symbols[x]
	}
	return r.WriteTable(w, inputs)
}
