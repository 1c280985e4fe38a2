package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiment"
	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("actions", "train ns+s and rns and record their stack action types after every epoch (Figure 3)", runActions)
}

// actionsFile is the per-model file of the actions command, in
// DIR/<model>/.
const actionsFile = "actions.jsonl"

// actionRecord is one line of actions.jsonl: after epoch Epoch, the
// normalized weights of the action types (push, replace, pop) of each
// stack update t = 1 … n−1 on the fixed string String (symbols separated
// by spaces).
type actionRecord struct {
	Epoch   int          `json:"epoch"`
	String  string       `json:"string"`
	Weights [][3]float64 `json:"weights"`
}

func runActions(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("actions", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	taskName := fs.String("task", data.MarkedReversal, "task (Figure 3 uses marked-reversal)")
	grammar := cli.AddGrammarFlag(fs)
	out := fs.String("out", "", "output directory (required); each model writes DIR/<model>/actions.jsonl")
	modelList := fs.String("models", "ns+s,rns", "comma-separated models that record actions (ns+s, rns)")
	var s experiment.Settings
	// All epochs are run: early stopping is off (0) unless set.
	lengths := protocolFlags(fs, &s, 0.005, 30, 0)
	hidden := fs.Int("hidden", 20, "LSTM hidden units")
	length := fs.Int("length", 41, "length of the fixed string whose actions are recorded")
	stringSeed := fs.Uint64("string-seed", 3, "seed of the fixed string")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := checkProtocol(&s, *lengths); err != nil {
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
	models, err := parseList(*modelList, []string{nsrnn.NSS, nsrnn.RNS}, "--models")
	if err != nil {
		return err
	}
	t, err := taskFlag(*taskName, *grammar)
	if err != nil {
		return err
	}
	w, err := data.SampleStrings(t.Grammar(), 1, *length, *length, rand.New(rand.NewPCG(*stringSeed, 3)))
	if err != nil {
		return fmt.Errorf("--length %d: %w", *length, err)
	}
	for _, kind := range models {
		mf := &cli.ModelFlags{Kind: kind, Hidden: *hidden, Layers: 1, Bottom: "original"}
		_, cfg, err := taskModel(t.Name(), t.Definition(), mf)
		if err != nil {
			return err
		}
		ms := s
		ms.Task, ms.Grammar, ms.Model = t.Name(), t.Definition(), cfg
		if err := recordActions(ms, t, w[0], filepath.Join(*out, kind), stderr); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	return nil
}

// recordActions trains a model as train does (same data, seeds and
// protocol) and writes the action-type weights on w after every epoch to
// dir/actions.jsonl, along with the training log and run.json.
func recordActions(s experiment.Settings, t *data.Task, w []int, dir string, stderr io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := experiment.WriteJSON(filepath.Join(dir, "settings.json"), s); err != nil {
		return err
	}
	d, err := experiment.SampleRun(t, s)
	if err != nil {
		return err
	}
	m, err := nsrnn.New(s.Model, experiment.InitSeed(s.Seed))
	if err != nil {
		return err
	}
	text := data.FormatString(w, t.Terminals())
	var buf bytes.Buffer
	path := filepath.Join(dir, actionsFile)
	tc := s.TrainConfig(d.LowerBound.Entropy)
	tc.Recorder = nsrnn.Recorders{nsrnn.JSONLog(filepath.Join(dir, experiment.LogFile)), nsrnn.RecorderFunc(func(e nsrnn.Event) error {
		if e.Kind != nsrnn.EpochDone {
			return nil
		}
		rec := e.Record
		{
			ws, err := m.ActionTypeWeights(w)
			if err != nil {
				return err
			}
			b, err := json.Marshal(actionRecord{Epoch: rec.Epoch, String: text, Weights: ws})
			if err != nil {
				return err
			}
			buf.Write(append(b, '\n'))
			fmt.Fprintf(stderr, "actions %s: epoch %d, validation difference %.4f\n", s.Model.Kind, rec.Epoch, rec.ValidDifference)
			return atomicfile.WriteBytes(path, buf.Bytes())
		}
	})}
	fmt.Fprintf(stderr, "actions: training %s on %s (%d strings, lr %g) and recording its actions on %q\n",
		s.Model.Kind, taskLabel(t.Name(), t.Definition()), s.TrainSize, s.LR, text)
	_, err = nsrnn.Train(m, d.Train, d.Valid, tc)
	return err
}
