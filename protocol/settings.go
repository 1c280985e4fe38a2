package protocol

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// Settings is everything that determines a training run of the
// formal-language protocol: it is saved in the run's run.json, and a
// resumed run must have the same. Zero values of Clip, Patience, Decay,
// EarlyStop and Epochs select the protocol's defaults in TrainConfig.
type Settings struct {
	// Task is the task's name (data.AllTaskNames) and Grammar its
	// definition. A run.json without "grammar", written before there was
	// a choice, is read as data.GrammarPaper; an empty Grammar is written
	// as "paper".
	Task    string       `json:"task"`
	Grammar data.Grammar `json:"grammar"`
	// TaskParams are the task's parameters that are not at their
	// defaults (data.Task.Params), such as its number of symbol types;
	// none is left out of run.json, as in the files written before tasks
	// had parameters.
	TaskParams data.Params `json:"task_params,omitempty"`
	// Model is the model's configuration.
	Model nsrnn.Config `json:"model"`
	// LR is Adam's initial learning rate.
	LR float64 `json:"lr"`
	// Seed determines the data, the initial parameters and the order of
	// the batches, through DataSeed, InitSeed and ShuffleSeed.
	Seed uint64 `json:"seed"`
	// Epochs is the maximum number of epochs.
	Epochs int `json:"epochs"`
	// TrainSize and ValidSize are the numbers of training and validation
	// strings, drawn in batches of BatchSize strings of one length, each
	// length uniformly from the task's valid lengths in
	// [MinLength, MaxLength].
	TrainSize int `json:"train_size"`
	ValidSize int `json:"valid_size"`
	BatchSize int `json:"batch_size"`
	MinLength int `json:"min_length"`
	MaxLength int `json:"max_length"`
	// Clip is the gradient-norm clipping threshold.
	Clip float64 `json:"clip"`
	// Patience is the number of epochs without improvement after which
	// the learning rate is multiplied by Decay.
	Patience int `json:"patience"`
	// EarlyStop is the number of epochs without improvement after which
	// training stops.
	EarlyStop int     `json:"early_stop"`
	Decay     float64 `json:"decay"`
	// Workers is the number of parts each batch is run in
	// (nsrnn.Model.Workers, cfl train --workers). Parts of different
	// counts sum their gradients in different orders, so the count is
	// part of the run: a resumed run keeps it. 0, as in a run.json
	// written before the count was recorded, leaves it unrecorded (any
	// count resumes such a run, as then).
	Workers int `json:"workers,omitempty"`
	// GrammarFile is the grammar file of a run on a grammar of the
	// user's (cfl train --grammar-file) with its SHA-256 digest, Task then
	// being the file's base name (GrammarFileTask); nil for a task of the
	// table, as in run.json files written before there were grammar
	// files.
	GrammarFile *FileDigest `json:"grammar_file,omitempty"`
	// Files are the files of a run on the user's own strings (cfl train
	// --train, --valid, --test) with their digests and the training
	// file's vocabulary, Task then being the training file's base name;
	// nil for a run on sampled strings. Such a run has no lower bound.
	Files *TextFiles `json:"files,omitempty"`
	// Device is the device the run trained on when it was last started
	// or resumed (cfl train --device: "cuda:N"), empty for the CPU, as in
	// the files written before there was a choice. It is not one of the
	// settings a resumed run must have: a run started on a GPU resumes on
	// the CPU and the other way round, and the checkpoint's settings
	// (TrainConfig) leave it out.
	Device string `json:"device,omitempty"`
}

// settingsJSON has Settings' fields without its methods.
type settingsJSON Settings

// MarshalJSON writes the settings with an empty Grammar as "paper".
func (s Settings) MarshalJSON() ([]byte, error) {
	s.Grammar = data.Grammar(s.Grammar.String())
	return json.Marshal(settingsJSON(s))
}

// UnmarshalJSON reads settings; a missing or empty "grammar" is
// data.GrammarPaper, and an unknown one is an error listing the names.
func (s *Settings) UnmarshalJSON(b []byte) error {
	var v settingsJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.Grammar == "" {
		v.Grammar = data.GrammarPaper
	}
	if _, err := data.ParseGrammar(string(v.Grammar)); err != nil {
		return err
	}
	*s = Settings(v)
	return nil
}

// TaskDef returns the run's task with its parameters under its
// definition: data.TaskWith(s.Task, s.TaskParams, s.Grammar) for a task of
// the table; for a grammar file, the grammar read again from the file,
// which must have the run's digest (the error says so when it has
// changed); for the user's strings, the text task of the saved
// vocabulary (data.NewTextTask), which the files are not read for.
func (s Settings) TaskDef() (*data.Task, error) { return s.TaskDefIn("") }

// TaskDefIn is TaskDef for the run in dir: a grammar file that has moved
// or changed since the run is read from the run's copy of it
// (GrammarCopyFile), which must have the run's digest.
func (s Settings) TaskDefIn(dir string) (*data.Task, error) {
	switch {
	case s.Files != nil:
		return data.NewTextTask(s.Task, s.Files.Vocabulary)
	case s.GrammarFile != nil:
		t, d, err := GrammarFileTask(s.GrammarFile.Path)
		if err == nil && d.SHA256 == s.GrammarFile.SHA256 {
			return t.WithGrammar(s.Grammar)
		}
		if dir != "" {
			copyPath := filepath.Join(dir, GrammarCopyFile)
			if ct, cd, cerr := grammarTask(copyPath, s.Task); cerr == nil && cd.SHA256 == s.GrammarFile.SHA256 {
				return ct.WithGrammar(s.Grammar)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("protocol: the run's grammar file: %w; restore it there (SHA-256 %s), since the run has no copy of it", err, s.GrammarFile.SHA256)
		}
		return nil, fmt.Errorf("protocol: grammar file %s has changed since the run: SHA-256 %s, the run's %s; restore the run's version there, since the run has no copy of it",
			d.Path, d.SHA256, s.GrammarFile.SHA256)
	}
	return data.TaskWith(s.Task, s.TaskParams, s.Grammar)
}

// SaveGrammarCopy writes the run's copy of its grammar file into dir
// (GrammarCopyFile, atomically), unless a copy with the run's digest is
// there already; nothing for a run on no grammar file. The file must still
// have the run's digest.
func (s Settings) SaveGrammarCopy(dir string) error {
	if s.GrammarFile == nil {
		return nil
	}
	path := filepath.Join(dir, GrammarCopyFile)
	if _, d, err := readDigest(path); err == nil && d.SHA256 == s.GrammarFile.SHA256 {
		return nil
	}
	b, d, err := readDigest(s.GrammarFile.Path)
	if err != nil {
		return err
	}
	if d.SHA256 != s.GrammarFile.SHA256 {
		return fmt.Errorf("grammar file %s has changed since the run: SHA-256 %s, the run's %s", d.Path, d.SHA256, s.GrammarFile.SHA256)
	}
	return atomicfile.WriteBytes(path, b)
}

// ReadSettings reads the Settings of the run in dir from its run.json. The
// error for a directory without one wraps os.ErrNotExist.
func ReadSettings(dir string) (Settings, error) {
	var s Settings
	path := filepath.Join(dir, RunFile)
	err := readJSON(path, &s)
	if (err != nil || s.Task == "") && ptbRun(path) {
		// read as a cfl run's, it fails later or here, and less clearly
		return s, fmt.Errorf("%s: not a cfl run: it names a chunk length (bptt) and no task, as ptb train's runs do", path)
	}
	return s, err
}

// ptbRun reports whether the JSON object in the file at path has the keys
// of a ptb train run's run.json: "bptt", and no "task".
func ptbRun(path string) bool {
	raw, err := readlimit.File(path, readlimit.JSON, true)
	var keys map[string]json.RawMessage
	if err != nil || json.Unmarshal(raw, &keys) != nil {
		return false
	}
	return keys["bptt"] != nil && keys["task"] == nil
}

// The seeds of a run, derived from Settings.Seed, one per source of
// randomness, so that runs that differ only in their model share their
// data. SampleRun draws the data from DataSeed; nsrnn.New takes InitSeed;
// ShuffleSeed orders the batches (TrainConfig's Seed).

// DataSeed is the seed of a run's training and validation data.
func DataSeed(seed uint64) uint64 { return seed }

// InitSeed is the seed of a run's initial parameters.
func InitSeed(seed uint64) uint64 { return seed ^ 0x5eed0001 }

// ShuffleSeed is the seed of the order of a run's training batches.
func ShuffleSeed(seed uint64) uint64 { return seed ^ 0x5eed0002 }

// TrainConfig returns the training configuration of the settings, for
// nsrnn.Train: Adam with learning rate LR, clipping at Clip, the rate
// multiplied by Decay after Patience epochs without improvement, early
// stopping after EarlyStop, at most Epochs epochs, batches shuffled from
// ShuffleSeed(Seed), and lowerBound (the validation set's lower bound, in
// nats per symbol) as the records' reference. Zero values select
// nsrnn.TrainConfig's defaults (with Decay and Patience both zero,
// nsrnn.CFLPlateau). Its Settings are CheckpointSettings(s), but for the
// model, the epochs and the device, so that a resumed run's checkpoint
// must come from a run of the same settings (on any device). The
// checkpoint and the recorder are left for the caller.
func (s Settings) TrainConfig(lowerBound float64) nsrnn.TrainConfig {
	tc := nsrnn.TrainConfig{
		LR: s.LR, Clip: s.Clip, EarlyStop: s.EarlyStop, MaxEpochs: s.Epochs,
		Seed: ShuffleSeed(s.Seed), LowerBound: lowerBound,
	}
	if s.Decay != 0 || s.Patience != 0 {
		tc.Schedule = &nsrnn.Plateau{Factor: s.Decay, Patience: max(s.Patience-1, 0)}
	}
	var err error
	if tc.Settings, err = CheckpointSettings(s, "model", "epochs", "device"); err != nil {
		tc.Settings = map[string]string{"run": fmt.Sprintf("%+v", s)}
	}
	return tc
}

// CheckpointSettings returns the settings v of a run (what its run.json
// holds) in the form of nsrnn.TrainConfig.Settings, so that a checkpoint
// copied from another run (another seed, other data, …) is refused even
// where run.json agrees: one entry per JSON value of v, keyed by its JSON
// name (those of nested objects joined with dots, as in "model.hidden"),
// strings unquoted and other values as JSON. The top-level keys in omit
// are left out: "model", which nsrnn compares itself, "epochs", which
// a resumed run may change as far as nsrnn is concerned, and "device",
// which a resumed run may change.
func CheckpointSettings(v any, omit ...string) (map[string]string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("protocol: settings are not a JSON object: %w", err)
	}
	out := map[string]string{}
	var add func(key string, raw json.RawMessage)
	add = func(key string, raw json.RawMessage) {
		var obj map[string]json.RawMessage
		var str string
		switch {
		case len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &obj) == nil:
			for k, v := range obj {
				add(key+"."+k, v)
			}
		case len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &str) == nil:
			out[key] = str
		default:
			out[key] = string(raw)
		}
	}
	for k, v := range top {
		if !slices.Contains(omit, k) {
			add(k, v)
		}
	}
	return out, nil
}

// checkData checks the settings that SampleRun uses.
func (s Settings) checkData() error {
	switch {
	case s.TrainSize < 1 || s.ValidSize < 1:
		return fmt.Errorf("protocol: %d training and %d validation strings; want at least 1 each", s.TrainSize, s.ValidSize)
	case s.BatchSize < 1:
		return fmt.Errorf("protocol: batch size %d; want at least 1", s.BatchSize)
	case s.MinLength < 0 || s.MinLength > s.MaxLength:
		return fmt.Errorf("protocol: length range [%d, %d] is empty or negative", s.MinLength, s.MaxLength)
	}
	return nil
}
