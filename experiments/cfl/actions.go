package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

func init() {
	prog.Register("actions", "train ns+s and rns and record their stack action types after every epoch (Figure 3)", runActions)
}

// Files of a model's directory DIR/<model>/ of the actions command, which
// also holds the training log and checkpoint of a train run.
const (
	// actionsFile holds one actionRecord per epoch.
	actionsFile = "actions.jsonl"
	// actionsSettingsFile holds the actionsSettings; it is not run.json,
	// so that model selection does not take these runs for a sweep's.
	actionsSettingsFile = "settings.json"
)

// actionsSettings are what determines a model's actions.jsonl: a resumed
// run must have the same.
type actionsSettings struct {
	Run        protocol.Settings `json:"run"`
	Length     int               `json:"length"`
	StringSeed uint64            `json:"string_seed"`
	String     string            `json:"string"`
}

// readActionsSettings reads the actionsSettings of a model's directory
// written by cfl actions; an absent file is an error wrapping
// os.ErrNotExist, and a malformed one names the file.
func readActionsSettings(dir string) (actionsSettings, error) {
	var as actionsSettings
	path := filepath.Join(dir, actionsSettingsFile)
	b, err := readlimit.File(path, readlimit.JSON, true)
	if err != nil {
		return as, err
	}
	if err := json.Unmarshal(b, &as); err != nil {
		return as, fmt.Errorf("%s: %w", path, err)
	}
	return as, nil
}

// actionRecord is one line of actions.jsonl: after epoch Epoch, the
// normalized weights of the action types (push, replace, pop) of each
// stack update t = 1 … n−1 on the fixed string String (symbols separated
// by spaces).
type actionRecord struct {
	Epoch   int          `json:"epoch"`
	String  string       `json:"string"`
	Weights [][3]float64 `json:"weights"`
}

// actionKinds are the model kinds whose stack actions can be recorded:
// those with a nondeterministic stack (nsrnn.Kind.NSConfig).
func actionKinds() []string {
	var names []string
	for _, k := range nsrnn.AllKinds() {
		if k.NSConfig != nil {
			names = append(names, k.Name)
		}
	}
	return names
}

func runActions(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("actions", stdout)
	taskName := fs.String("task", data.MarkedReversal, "task: "+taskNames()+" (Figure 3 uses marked-reversal)")
	params := taskParamFlags(fs)
	grammarFile := grammarFileFlag(fs)
	grammar := cli.AddGrammarFlag(fs)
	out := fs.String("out", "", "output directory (required); each model's run goes to DIR/<model>: "+
		actionsFile+", "+actionsSettingsFile+", "+protocol.LogFile+", "+protocol.CheckpointFile)
	modelList := fs.String("models", "ns+s,rns", "comma-separated models that record actions (some of "+joinNames(actionKinds())+")")
	var s protocol.Settings
	// All epochs are run: early stopping is off (0) unless set.
	lengths := protocolFlags(fs, &s, 0.005, 30, 0)
	hidden := fs.Int("hidden", 20, "LSTM hidden units")
	length := fs.Int("length", 41, "length of the fixed string whose actions are recorded")
	stringSeed := fs.Uint64("string-seed", 3, "seed of the fixed string")
	resume := fs.Bool("resume", false, "continue the interrupted runs in --out from their checkpoints")
	quiet := fs.Bool("quiet", false, "no progress bar (the line of each epoch is printed all the same)")
	every := checkpointEveryFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := checkProtocol(&s, *lengths); err != nil {
		return err
	}
	if err := checkCheckpointEvery(*every); err != nil {
		return err
	}
	switch {
	case *out == "":
		return fmt.Errorf("--out is required")
	case *length < 2:
		return fmt.Errorf("--length %d must be at least 2", *length)
	}
	if s.EarlyStop == 0 {
		s.EarlyStop = s.Epochs + 1
	}
	models, err := parseList(*modelList, actionKinds(), "--models")
	if err != nil {
		return err
	}
	name := *taskName
	if *grammarFile != "" && !fs.Changed("task") {
		name = "" // the default task gives way to the file
	}
	t, gf, err := taskOrGrammarFile(name, *grammarFile, params(), *grammar)
	if err != nil {
		return err
	}
	w, err := data.SampleStrings(t, 1, *length, *length, rand.New(rand.NewPCG(*stringSeed, 3)))
	if err != nil {
		return fmt.Errorf("--length %d: %w", *length, err)
	}
	for _, kind := range models {
		mf := &cli.ModelFlags{Model: nsrnn.Config{Kind: kind, Hidden: *hidden, Layers: 1}}
		cfg, err := taskConfig(t, mf)
		if err != nil {
			return err
		}
		as := actionsSettings{Run: s, Length: *length, StringSeed: *stringSeed, String: data.FormatString(w[0], t.Terminals())}
		as.Run.Task, as.Run.Grammar, as.Run.TaskParams, as.Run.Model, as.Run.GrammarFile = t.Name(), t.Definition(), t.Params(), cfg, gf
		if err := recordActions(as, t, w[0], filepath.Join(*out, kind), *resume, *every, args, !*quiet && cli.IsTerminal(stderr), stderr); err != nil {
			return err
		}
	}
	return nil
}

// recordActions trains a model as train does (same data, seeds and
// protocol, checkpointed into dir after every epoch, every "every" within
// an epoch (0: never) and at an interrupt, resumed with resume) and writes the action-type weights on w after every
// epoch to dir/actions.jsonl. The weights of an epoch are recorded after
// its last batch, before its checkpoint, so that the file always holds
// every checkpointed epoch; a resumed run drops the records of later ones.
func recordActions(as actionsSettings, t *data.Task, w []int, dir string, resume bool, every time.Duration, args []string, bar bool, stderr io.Writer) error {
	s := as.Run
	rd, err := protocol.OpenRunDir(dir, actionsSettingsFile, as, resume, stderr)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, actionsFile)
	ok := false
	defer func() { rd.Close(ok, actionsFile) }()
	d, err := protocol.SampleRun(t, s)
	if err != nil {
		return err
	}
	m, err := nsrnn.New(s.Model, protocol.InitSeed(s.Seed))
	if err != nil {
		return err
	}
	var recs []actionRecord
	write := func() error {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, r := range recs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return atomicfile.WriteBytes(path, buf.Bytes())
	}
	record := nsrnn.RecorderFunc(func(e nsrnn.Event) error {
		switch {
		case e.Kind == nsrnn.Started && e.Resumed:
			// The checkpoint holds epochs 1 … e.Epoch−1.
			old, err := readActions(path)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			for _, r := range old {
				if r.Epoch < e.Epoch {
					recs = append(recs, r)
				}
			}
			if len(recs) != e.Epoch-1 {
				return fmt.Errorf("%s holds %d epochs, the checkpoint %d; start afresh in another --out", path, len(recs), e.Epoch-1)
			}
			return write()
		case e.Kind == nsrnn.StepDone && e.Step == e.Steps:
			ws, err := m.ActionTypeWeights(w)
			if err != nil {
				return err
			}
			recs = append(recs, actionRecord{Epoch: e.Epoch, String: as.String, Weights: ws})
			return write()
		}
		return nil
	})
	intr := catchInterrupts(stderr, cli.IsTerminal(stderr))
	defer intr.Stop()
	stderr = intr.Console() // shared with the message of an interrupt
	tc := s.TrainConfig(d.LowerBound.Entropy)
	tc.Checkpoint = filepath.Join(dir, protocol.CheckpointFile)
	tc.CheckpointEvery = every
	var at stopPoint
	tc.Recorder = nsrnn.Recorders{
		record,
		nsrnn.JSONLog(filepath.Join(dir, protocol.LogFile)),
		cli.Progress(stderr, "actions "+s.Model.Kind, bar),
		at.recorder(),
		intr.CheckpointRecorder(),
	}
	fmt.Fprintf(stderr, "actions: training %s on %s (%d strings, lr %g, %d epochs) and recording its actions on %q after every epoch in %s\n",
		s.Model.Kind, taskLabel(t.Name(), t.Definition()), s.TrainSize, s.LR, s.Epochs, as.String, path)
	res, err := nsrnn.Train(m, d.Train, d.Valid, tc)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Model.Kind, err)
	}
	if !res.Finished {
		return resumeError(intr, "actions", args, res.Epochs, at, dir)
	}
	ok = true
	fmt.Fprintf(stderr, "actions %s: %d epochs recorded in %s\n", s.Model.Kind, res.Epochs, path)
	return nil
}
