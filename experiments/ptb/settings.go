package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
	"github.com/spf13/pflag"
)

// settings determine a PTB training run; they are saved in run.json, and a
// resumed run must have the same.
type settings struct {
	Data      string       `json:"data"`
	Model     nsrnn.Config `json:"model"`
	Batch     int          `json:"batch"`
	BPTT      int          `json:"bptt"`
	LR        float64      `json:"lr"`
	Clip      float64      `json:"clip"`
	Epochs    int          `json:"epochs"`
	EarlyStop int          `json:"early_stop"`
	Decay     float64      `json:"decay"`
	Seed      uint64       `json:"seed"`
	// Precision is the arithmetic of the matrix products, "float32", or
	// empty for float64 (runs made before the choice existed are float64).
	Precision string `json:"precision,omitempty"`
	// DataSHA256 maps the name of each split file in Data to the SHA-256
	// of its content, in hexadecimal, so that a resume on other data is
	// refused; VocabSHA256 is that of the run's vocab.txt, so that
	// evaluating with another vocabulary is refused. Runs made before
	// they were recorded have neither, and are checked as far as their
	// vocab.txt and model allow.
	DataSHA256  map[string]string `json:"data_sha256,omitempty"`
	VocabSHA256 string            `json:"vocab_sha256,omitempty"`
	// Files are the split files of a run on a corpus given by --train,
	// --valid and --test (absolute paths) instead of --data, Data then
	// being empty; DataSHA256 is then keyed by "train", "valid" and
	// "test". VocabSize is --vocab-size (0: every training type). Runs
	// made before these existed have neither, and resume as before.
	Files     *corpusFiles `json:"files,omitempty"`
	VocabSize int          `json:"vocab_size,omitempty"`
	// Device is the device the run trained on when it was last started or
	// resumed (--device: "cuda:N"), empty for the CPU, as in the runs made
	// before there was a choice. It is not one of the settings a resumed
	// run must have: --resume may give another --device, which run.json
	// then records.
	Device string `json:"device,omitempty"`
	// Boundary is where the stack update after a chunk's last token is
	// computed (--boundary, nsrnn.Boundary): "next-chunk", or empty for
	// "in-chunk", as in the runs made before there was a choice.
	Boundary string `json:"boundary,omitempty"`
	// Improvement is how an epoch's validation score is judged
	// (--improvement): "perplexity" (the authors' rule,
	// nsrnn.PerplexityPlateau), or empty for "cross-entropy"
	// (nsrnn.Plateau with the same threshold on the cross-entropy), as in
	// the runs made before there was a choice.
	Improvement string `json:"improvement,omitempty"`
}

// The values of --improvement.
const (
	improvePerplexity   = "perplexity"
	improveCrossEntropy = "cross-entropy"
)

// improvementSetting checks a value of --improvement and returns what
// run.json records for it (empty for cross-entropy).
func improvementSetting(v string) (string, error) {
	switch v {
	case improvePerplexity:
		return v, nil
	case improveCrossEntropy:
		return "", nil
	}
	return "", fmt.Errorf("--improvement %q: want %s or %s", v, improvePerplexity, improveCrossEntropy)
}

// schedule returns the learning-rate schedule of the settings: the rate
// decays by Decay after every epoch without improvement (relative
// threshold 1e-4, as PyTorch's ReduceLROnPlateau by default), judged on
// the validation perplexity with any decrease keeping the best parameters
// (the authors' rule), or on the cross-entropy for everything.
func (s *settings) schedule() nsrnn.Schedule {
	if s.Improvement == improvePerplexity {
		return &nsrnn.PerplexityPlateau{Factor: s.Decay, Patience: 0, Threshold: 1e-4}
	}
	return &nsrnn.Plateau{Factor: s.Decay, Patience: 0, Threshold: 1e-4}
}

// corpusFiles are the split files of a corpus of any names.
type corpusFiles struct {
	Train string `json:"train"`
	Valid string `json:"valid"`
	Test  string `json:"test"`
}

// split is a split file of a run: its key in DataSHA256 and its path.
type split struct{ key, role, path string }

// splitRoles are the roles of the three splits, in the order of splits.
var splitRoles = []string{"train", "valid", "test"}

// digest is the SHA-256 that s recorded for the split of the given role
// ("train", "valid" or "test"), whichever way its corpus was given:
// DataSHA256 is keyed by file name for --data and by role for --train,
// --valid and --test. It is "" where none was recorded.
func (s *settings) digest(role string) string {
	if d, ok := s.DataSHA256[role]; ok {
		return d
	}
	if i := slices.Index(splitRoles, role); i >= 0 {
		return s.DataSHA256[splitFiles[i]]
	}
	return ""
}

// splits returns the split files of the settings: those in Data, or
// Files.
func (s *settings) splits() []split {
	if s.Files != nil {
		return []split{{"train", "train", s.Files.Train}, {"valid", "valid", s.Files.Valid}, {"test", "test", s.Files.Test}}
	}
	var out []split
	for i, name := range splitFiles {
		out = append(out, split{name, splitRoles[i], filepath.Join(s.Data, name)})
	}
	return out
}

// dataDigests returns the SHA-256 of each split file of s.
func dataDigests(s *settings) (map[string]string, error) {
	d := map[string]string{}
	for _, sp := range s.splits() {
		h, err := fileSHA256(sp.path)
		if err != nil {
			return nil, err
		}
		d[sp.key] = h
	}
	return d, nil
}

// fileSHA256 is the SHA-256 of the file at path, in hexadecimal.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// vocabSHA256 is the SHA-256 of the vocabulary's file (Vocab.Save).
func vocabSHA256(v *ptb.Vocab) (string, error) {
	b, err := v.MarshalText()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// savedFlags gives, for each flag of ptb train that a setting of run.json
// determines, the flag's value for saved settings: a resumed run takes
// every flag not given from its run.json.
var savedFlags = []struct {
	flag  string
	value func(s *settings) string
}{
	{"data", func(s *settings) string { return s.Data }},
	{"train", func(s *settings) string { return s.file(func(f *corpusFiles) string { return f.Train }) }},
	{"valid", func(s *settings) string { return s.file(func(f *corpusFiles) string { return f.Valid }) }},
	{"test", func(s *settings) string { return s.file(func(f *corpusFiles) string { return f.Test }) }},
	{"vocab-size", func(s *settings) string { return strconv.Itoa(s.VocabSize) }},
	{"model", func(s *settings) string { return s.Model.Kind }},
	{"hidden", func(s *settings) string { return strconv.Itoa(s.Model.Hidden) }},
	{"layers", func(s *settings) string { return strconv.Itoa(max(s.Model.Layers, 1)) }},
	{"states", func(s *settings) string { return strconv.Itoa(s.Model.States) }},
	{"symbols", func(s *settings) string { return strconv.Itoa(s.Model.Symbols) }},
	{"stack-embedding", func(s *settings) string { return strconv.Itoa(s.Model.StackEmbedding) }},
	{"push-hidden-state", func(s *settings) string { return strconv.FormatBool(s.Model.PushHiddenState) }},
	{"depth-limit", func(s *settings) string { return strconv.Itoa(s.Model.DepthLimit) }},
	{"window", func(s *settings) string { return strconv.Itoa(s.Model.Window) }},
	{"bottom", func(s *settings) string { return s.Model.Bottom.String() }},
	{"bottom-vector", func(s *settings) string { return s.Model.BottomVector.String() }},
	{"batch", func(s *settings) string { return strconv.Itoa(s.Batch) }},
	{"bptt", func(s *settings) string { return strconv.Itoa(s.BPTT) }},
	{"lr", func(s *settings) string { return strconv.FormatFloat(s.LR, 'g', -1, 64) }},
	{"clip", func(s *settings) string { return strconv.FormatFloat(s.Clip, 'g', -1, 64) }},
	{"epochs", func(s *settings) string { return strconv.Itoa(s.Epochs) }},
	{"early-stop", func(s *settings) string { return strconv.Itoa(s.EarlyStop) }},
	{"decay", func(s *settings) string { return strconv.FormatFloat(s.Decay, 'g', -1, 64) }},
	{"seed", func(s *settings) string { return strconv.FormatUint(s.Seed, 10) }},
	{"precision", func(s *settings) string { return cmp.Or(s.Precision, "float64") }},
	{"boundary", func(s *settings) string { return cmp.Or(s.Boundary, nsrnn.BoundaryInChunk.String()) }},
	{"improvement", func(s *settings) string { return cmp.Or(s.Improvement, improveCrossEntropy) }},
}

// modelFlagDiffs names the model flags that the command line gave with
// other values than the saved settings', as "--flag given (the run's
// saved)".
func modelFlagDiffs(fs *pflag.FlagSet, saved *settings) []string {
	var diffs []string
	for _, sf := range savedFlags {
		switch sf.flag {
		case "model", "hidden", "layers", "states", "symbols", "stack-embedding", "push-hidden-state", "depth-limit", "window", "bottom", "bottom-vector":
		default:
			continue
		}
		if !fs.Changed(sf.flag) {
			continue
		}
		if got, want := fs.Lookup(sf.flag).Value.String(), sf.value(saved); got != want {
			diffs = append(diffs, fmt.Sprintf("--%s %s (the run's %s)", sf.flag, got, want))
		}
	}
	return diffs
}

// settingFlags names the flag of each key of run.json (nested keys joined
// with dots, as protocol.SettingsError writes them).
var settingFlags = map[string]string{
	"data": "--data", "files.train": "--train", "files.valid": "--valid", "files.test": "--test", "vocab_size": "--vocab-size",
	"files": "--train, --valid, --test", "model.kind": "--model", "model.hidden": "--hidden", "model.embedding": "--hidden",
	"model.layers": "--layers", "model.states": "--states", "model.symbols": "--symbols",
	"model.stack_embedding": "--stack-embedding", "model.push_hidden_state": "--push-hidden-state",
	"model.depth_limit": "--depth-limit", "model.window": "--window", "model.bottom": "--bottom",
	"model.bottom_vector": "--bottom-vector", "model.input_vocab": "--data (its vocabulary size)",
	"model.output_vocab": "--data (its vocabulary size)", "batch": "--batch", "bptt": "--bptt", "lr": "--lr",
	"clip": "--clip", "epochs": "--epochs", "early_stop": "--early-stop", "decay": "--decay", "seed": "--seed",
	"precision": "--precision", "boundary": "--boundary", "improvement": "--improvement",
}

// readRunSettings reads the settings of the run in dir; exists is false
// when dir holds no run.json.
func readRunSettings(dir string) (s settings, exists bool, err error) {
	path := filepath.Join(dir, protocol.RunFile)
	raw, err := readlimit.File(path, readlimit.JSON, true)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, false, nil
	case err != nil:
		return s, false, err
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) == nil && keys["task"] != nil && keys["bptt"] == nil {
		// read as a ptb run's, it fails here or later, and less clearly
		return s, true, fmt.Errorf("%s: not a ptb train run: it names a task (%s) and no chunk length, as cfl's runs do", path, keys["task"])
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, true, fmt.Errorf("%s: %w", path, err)
	}
	return s, true, nil
}

// checkSaved refuses the settings of a run's run.json (at path) that no
// run can have, naming the file as their source, so that a resume does
// not blame flags that the command line did not give.
func (s *settings) checkSaved(path string) error {
	switch {
	case s.Batch < 1 || s.BPTT < 1 || s.Epochs < 1:
		return fmt.Errorf("%s: batch %d, bptt %d and epochs %d must be at least 1: the file is damaged", path, s.Batch, s.BPTT, s.Epochs)
	case !(s.LR > 0) || math.IsInf(s.LR, 0) || !(s.Clip > 0) || math.IsInf(s.Clip, 0):
		return fmt.Errorf("%s: lr %g and clip %g must be positive and finite: the file is damaged", path, s.LR, s.Clip)
	}
	return nil
}

// applySaved gives every flag of fs that the command line did not set the
// value of the saved settings.
func applySaved(fs *pflag.FlagSet, saved *settings) error {
	return applySavedExcept(fs, saved, nil)
}

// applySavedExcept is applySaved but for the flags that skip reports.
func applySavedExcept(fs *pflag.FlagSet, saved *settings, skip func(flag string) bool) error {
	for _, sf := range savedFlags {
		if fs.Changed(sf.flag) || skip != nil && skip(sf.flag) {
			continue
		}
		if err := fs.Lookup(sf.flag).Value.Set(sf.value(saved)); err != nil {
			return fmt.Errorf("--%s from run.json: %w", sf.flag, err)
		}
	}
	return nil
}

// checkResume checks the settings s of a resumed run against those saved
// in dir/run.json: flags given with other values than the run's are
// refused, naming them; data files other than the run's (by their
// recorded SHA-256) are refused, naming them; for a run that recorded no
// digests (made before they were), a vocabulary other than its vocab.txt
// is refused. It leaves in s the digests of saved, so that s and saved are
// the same settings.
func checkResume(dir string, s *settings, saved *settings, vocab *ptb.Vocab) error {
	// On the run's corpus directory, what changed there is the news;
	// elsewhere, the --data flag itself.
	if s.Data == saved.Data && (s.Files == nil) == (saved.Files == nil) && (s.Files == nil || *s.Files == *saved.Files) {
		if err := checkResumeData(dir, s, saved, vocab); err != nil {
			return err
		}
	}
	path := filepath.Join(dir, protocol.RunFile)
	given := *s
	given.DataSHA256, given.VocabSHA256 = saved.DataSHA256, saved.VocabSHA256
	// --epochs may change: a run's maximum is extended (a draw of a
	// search judged after a few epochs, continued to the end) or cut;
	// and --device: a run started on a GPU resumes on the CPU and the
	// other way round.
	given.Epochs, given.Device = saved.Epochs, saved.Device
	if _, err := protocol.CheckSettingsFile(path, given); err != nil {
		se, ok := errors.AsType[*protocol.SettingsError](err)
		if !ok {
			return fmt.Errorf("--resume: %w", err)
		}
		var diffs []string
		for _, d := range se.Diffs {
			key, change, _ := strings.Cut(d, ": ")
			name := settingFlags[key]
			if name == "" {
				name = key
			}
			diffs = append(diffs, fmt.Sprintf("%s %s (run.json's %s)", name, change, key))
		}
		return fmt.Errorf("--resume: flags differ from those of the run in %s (%s): %s; leave them out to take the run's, or choose another --out", dir, path, strings.Join(diffs, "; "))
	}
	if err := checkResumeData(dir, s, saved, vocab); err != nil {
		return err
	}
	// With the same settings and corpus, the same vocabulary, unless
	// run.json was damaged: a run trained on another would be refused by
	// every command that reads it afterwards.
	if saved.DataSHA256 != nil && saved.VocabSHA256 != "" {
		built, err := vocabSHA256(vocab)
		if err != nil {
			return err
		}
		if built != saved.VocabSHA256 {
			return fmt.Errorf("--resume: the vocabulary of %s (SHA-256 %s) is not the one %s records (%s): the run's settings are damaged; start a new run",
				s.splits()[0].path, short(built), path, short(saved.VocabSHA256))
		}
	}
	s.DataSHA256, s.VocabSHA256 = saved.DataSHA256, saved.VocabSHA256
	return nil
}

// checkpointSettings are the settings a run's checkpoint records
// (nsrnn.TrainConfig.Settings): every setting of run.json, so that a
// checkpoint copied from another run (another seed) is refused, but the
// model, which nsrnn compares itself, and the maximum number of epochs and
// the device, which a resume may change.
func checkpointSettings(s settings) (map[string]string, error) {
	return protocol.CheckpointSettings(s, "model", "epochs", "device")
}

// checkResumeData refuses a resume on data other than the run's: files
// whose SHA-256 differs from the one recorded, or, for a run that recorded
// none, a vocabulary other than its vocab.txt.
func checkResumeData(dir string, s *settings, saved *settings, vocab *ptb.Vocab) error {
	if saved.DataSHA256 != nil {
		if bad := corpusDiffs(s, saved); len(bad) > 0 {
			return fmt.Errorf("%s: the corpus differs from the one the run in %s was trained on: %s; restore the run's files, or start a new run", s.dataFlags(), dir, strings.Join(bad, ", "))
		}
		return nil
	}
	if old, err := ptb.LoadVocab(filepath.Join(dir, VocabFile), nil); err == nil && !slices.Equal(old.Words(), vocab.Words()) {
		return fmt.Errorf("%s: the vocabulary of %s differs from the run's %s: the corpus changed since the run began; restore the run's files, or start a new run",
			s.dataFlags(), s.splits()[0].path, filepath.Join(dir, VocabFile))
	}
	return nil
}

// corpusDiffs names the splits of s whose SHA-256 is not the one saved
// recorded for the same split, with both digests; none where saved
// recorded no digests. The splits are matched by role, so that a corpus
// given by --data compares with one given by --train, --valid and --test.
func corpusDiffs(s, saved *settings) []string {
	if saved.DataSHA256 == nil {
		return nil
	}
	var bad []string
	for _, sp := range s.splits() {
		if want, got := saved.digest(sp.role), s.digest(sp.role); want != got {
			bad = append(bad, fmt.Sprintf("%s (SHA-256 %s; the run's was %s)", sp.path, short(got), short(want)))
		}
	}
	return bad
}

// readLike reads the settings of the run named by ptb train's --like (its
// directory, or its run.json) and gives every flag of fs that the command
// line did not set their value. The corpus flags count as one: where any
// of --data, --train, --valid and --test is given, none is taken from the
// run, and where none is, the run's corpus must be on this machine.
func readLike(fs *pflag.FlagSet, arg string) (*settings, error) {
	dir := arg
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		dir = filepath.Dir(arg)
	}
	path := filepath.Join(dir, protocol.RunFile)
	ls, exists, err := readRunSettings(dir)
	switch {
	case err != nil:
		return nil, err
	case !exists:
		return nil, fmt.Errorf("no run there: %s does not exist", path)
	}
	if err := ls.checkSaved(path); err != nil {
		return nil, err
	}
	corpusGiven := false
	for _, f := range []string{"data", "train", "valid", "test"} {
		corpusGiven = corpusGiven || fs.Changed(f)
	}
	corpusFlag := func(flag string) bool {
		return corpusGiven && (flag == "data" || flag == "train" || flag == "valid" || flag == "test")
	}
	if err := applySavedExcept(fs, &ls, corpusFlag); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !corpusGiven {
		for _, p := range ls.splits() {
			if _, err := os.Stat(p.path); err != nil {
				return nil, fmt.Errorf("the corpus of %s is not on this machine (%s); give it with --data (or --train, --valid and --test)", path, p.path)
			}
		}
	}
	return &ls, nil
}

// file returns a file of Files, "" without them.
func (s *settings) file(f func(*corpusFiles) string) string {
	if s.Files == nil {
		return ""
	}
	return f(s.Files)
}

// dataFlags names the flags of the run's corpus in messages.
func (s *settings) dataFlags() string {
	if s.Files != nil {
		return "--train, --valid, --test"
	}
	return "--data"
}

// short abbreviates a digest for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return cmp.Or(h, "none")
}

// splitFiles are the files of a corpus directory, in the order of
// messages.
var splitFiles = []string{ptb.TrainFile, ptb.ValidFile, ptb.TestFile}
