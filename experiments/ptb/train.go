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
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

func init() {
	prog.Register("train", "train a language model on the Penn Treebank (truncated BPTT, SGD)", runTrain)
	prog.Register("eval", "perplexity of a trained model on a split", runEval)
}

// VocabFile is the run's vocabulary, one word per line in id order.
const VocabFile = "vocab.txt"

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
}

// corpusFiles are the split files of a corpus of any names.
type corpusFiles struct {
	Train string `json:"train"`
	Valid string `json:"valid"`
	Test  string `json:"test"`
}

// split is a split file of a run: its key in DataSHA256 and its path.
type split struct{ key, path string }

// splits returns the split files of the settings: those in Data, or
// Files.
func (s *settings) splits() []split {
	if s.Files != nil {
		return []split{{"train", s.Files.Train}, {"valid", s.Files.Valid}, {"test", s.Files.Test}}
	}
	var out []split
	for _, name := range splitFiles {
		out = append(out, split{name, filepath.Join(s.Data, name)})
	}
	return out
}

// splitFiles are the files of a corpus directory, in the order of
// messages.
var splitFiles = []string{ptb.TrainFile, ptb.ValidFile, ptb.TestFile}

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

// pureGoNote is what the pure-Go build says before it computes on the
// CPU: the OpenBLAS build's speed-up, measured on one core of an AMD EPYC
// (Zen 5) machine of two cores, float32, LSTM-256 and RNS 1-2
// (2026-11-28: training 6.0–8.5×, evaluation 5.1–6.9×), and how to get it.
const pureGoNote = "note: this is the pure-Go build of ptb; built with -tags openblas (Debian's libopenblas-dev) it trains and evaluates these models 5–8.5× faster on a CPU (measured on one AMD EPYC core; more on some Intel CPUs): go build -tags openblas -o ptb ./experiments/ptb"

// noteBLAS prints pureGoNote to w when the pure-Go build computes on the
// CPU.
func noteBLAS(w io.Writer, dev nsrnn.Device) {
	if dev.IsCPU() && nsrnn.BLAS == "gonum" {
		fmt.Fprintln(w, pureGoNote)
	}
}

// precisionFlag adds --precision with the given default.
func precisionFlag(fs *pflag.FlagSet, def, what string) *string {
	return fs.String("precision", def, "arithmetic of the output layer and LSTM products (nsrnn.Model.Precision), "+what+": float32 (about 1.5× faster at these sizes, loss within about 1e-6 relative) or float64")
}

// parsePrecision checks --precision and returns the precision and its
// settings value (empty for float64).
func parsePrecision(s string) (nsrnn.Precision, string, error) {
	p, err := nsrnn.ParsePrecision(s)
	if err != nil {
		return 0, "", fmt.Errorf("--precision: %w", err)
	}
	if p == nsrnn.Float64 {
		return p, "", nil
	}
	return p, p.String(), nil
}

// summary is summary.json of a finished PTB run.
type summary struct {
	Model                nsrnn.Config `json:"model"`
	Parameters           int          `json:"parameters"`
	Epochs               int          `json:"epochs"`
	BestEpoch            int          `json:"best_epoch"`
	BestValidPerplexity  float64      `json:"best_valid_perplexity"`
	BestValidCrossEntrop float64      `json:"best_valid_cross_entropy"`
	ValidPerplexities    []float64    `json:"valid_perplexity_by_epoch"`
	TrainPerplexities    []float64    `json:"train_perplexity_by_epoch"`
	LearningRates        []float64    `json:"learning_rate_by_epoch"`
	ElapsedSeconds       float64      `json:"elapsed_seconds"`
	TrainTokensPerSecond float64      `json:"train_tokens_per_second"`
	BLAS                 string       `json:"blas"`
}

// chunkFlags names the settings that fix the memory of a training chunk:
// the batch, the chunk length and the stack's window or depth limit.
func chunkFlags(s settings) string {
	f := fmt.Sprintf("--batch %d, --bptt %d", s.Batch, s.BPTT)
	if s.Model.Window > 0 {
		f += fmt.Sprintf(", --window %d", s.Model.Window)
	}
	if s.Model.DepthLimit > 0 {
		f += fmt.Sprintf(", --depth-limit %d", s.Model.DepthLimit)
	}
	return f
}

// ptbConfig turns model flags into the paper's PTB configuration:
// embedding = hidden size, untied, every parameter uniform in ±0.05, and
// the kind's hyperparameters that it requires asked for, and those with a
// stream default (nsrnn.Hyperparameter.StreamDefault: JM's depth limit 10,
// the NS window D = 35) given it unless set (0 too selects it: an
// unlimited stack cannot run as a stream).
func ptbConfig(mf *cli.ModelFlags, vocab int) (nsrnn.Config, error) {
	m := &mf.Model
	if m.Kind == "" {
		return nsrnn.Config{}, fmt.Errorf("--model is required (one of %s)", streamKinds())
	}
	k, err := nsrnn.LookupKind(m.Kind)
	if err != nil {
		return nsrnn.Config{}, fmt.Errorf("--model: %w", err)
	}
	if !k.Streams {
		return nsrnn.Config{}, fmt.Errorf("--model %s: its stack state cannot be carried from chunk to chunk, so it cannot run as a stream over the corpus; want one of %s", m.Kind, streamKinds())
	}
	var required []string
	missing := false
	for _, h := range k.Hyperparameters {
		if h.Required {
			required = append(required, "--"+h.Flag())
			missing = missing || !m.FieldSet(h.Field)
		}
		if h.StreamDefault != 0 {
			if p, ok := m.FieldValue(h.Field).(*int); ok && *p == 0 {
				*p = h.StreamDefault
			}
		}
	}
	if missing {
		return nsrnn.Config{}, fmt.Errorf("--model %s needs %s", m.Kind, joinAnd(required))
	}
	return mf.Config(vocab, vocab, m.Hidden, 0.05)
}

// joinAnd joins words as "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// streamKinds lists the model kinds that can run as streams
// (nsrnn.Kind.Streams), the only ones ptb trains.
func streamKinds() string { return strings.Join(streamKindsUsing(""), ", ") }

// streamKindsUsing returns the names of the kinds that can run as streams
// and declare the flag's field (every one for "").
func streamKindsUsing(flag string) []string {
	var names []string
	for _, k := range nsrnn.AllKinds() {
		if k.Streams && (flag == "" || cli.KindUses(k.Name, flag)) {
			names = append(names, k.Name)
		}
	}
	return names
}

// streamHyperparameter returns the declaration of the field of flag by
// the first kind that streams and declares it, and whether every such
// kind requires it.
func streamHyperparameter(flag string) (h nsrnn.Hyperparameter, required, ok bool) {
	required = true
	for _, k := range nsrnn.AllKinds() {
		if !k.Streams {
			continue
		}
		for _, kh := range k.Hyperparameters {
			if kh.Flag() == flag {
				if !ok {
					h, ok = kh, true
				}
				required = required && kh.Required
			}
		}
	}
	return h, required && ok, ok
}

// addModelFlags registers the model flags with ptb's help: only the kinds
// that can stream, the flags that they require, and the stream defaults
// that ptbConfig gives; the flags of no kind that streams are hidden.
func addModelFlags(fs *pflag.FlagSet) *cli.ModelFlags {
	mf := cli.AddModelFlags(fs, 256)
	fs.Lookup("model").Usage = "model: " + streamKinds() + " (required; the kinds whose stack can run as a stream)"
	for _, flag := range cli.StackFlags() {
		h, required, ok := streamHyperparameter(flag)
		if !ok {
			fs.Lookup(flag).Hidden = true
			continue
		}
		usage := strings.ReplaceAll(h.Doc, "%s", strings.Join(streamKindsUsing(flag), ", "))
		switch {
		case h.StreamDefault != 0:
			usage, _, _ = strings.Cut(usage, " (default 0")
			usage += fmt.Sprintf(" (default %d, as is 0: an unlimited stack cannot stream)", h.StreamDefault)
		case required:
			usage += " (required for them)"
		case flag == "stack-embedding":
			// jm: a learned pushed vector needs its size; the hidden
			// state has the hidden size.
			usage, _, _ = strings.Cut(usage, " (default 0")
			usage += " (required unless --push-hidden-state)"
		}
		fs.Lookup(flag).Usage = usage
	}
	return mf
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
	"precision": "--precision", "boundary": "--boundary",
}

// readRunSettings reads the settings of the run in dir; exists is false
// when dir holds no run.json.
func readRunSettings(dir string) (s settings, exists bool, err error) {
	path := filepath.Join(dir, protocol.RunFile)
	raw, err := readlimit.File(path, readlimit.JSON, false)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, false, nil
	case err != nil:
		return s, false, err
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
	for _, sf := range savedFlags {
		if fs.Changed(sf.flag) {
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

// updateRun records in the run's run.json the settings s of a resume
// that changed the maximum number of epochs or the device from those of
// was, the saved settings; a finished run's summary.json and model are
// removed when more epochs let the run go on (its checkpoint holds what
// they did), so that it counts as unfinished until it ends again.
func updateRun(dir string, s, was settings, stderr io.Writer) error {
	flag := "--epochs"
	if s.Epochs == was.Epochs {
		flag = "--device"
	}
	path := filepath.Join(dir, protocol.RunFile)
	if err := protocol.WriteJSON(path, s); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if s.Device != was.Device {
		fmt.Fprintf(stderr, "--device %s: the run trained on %s before; %s updated\n", cmp.Or(s.Device, "cpu"), cmp.Or(was.Device, "cpu"), path)
	}
	if s.Epochs == was.Epochs {
		return nil
	}
	fmt.Fprintf(stderr, "--epochs %d: the run's maximum was %d; %s updated\n", s.Epochs, was.Epochs, path)
	if s.Epochs > was.Epochs {
		for _, f := range []string{protocol.SummaryFile, protocol.ModelFile} {
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("--epochs: %w", err)
			}
		}
	}
	return nil
}

// checkResumeData refuses a resume on data other than the run's: files
// whose SHA-256 differs from the one recorded, or, for a run that recorded
// none, a vocabulary other than its vocab.txt.
func checkResumeData(dir string, s *settings, saved *settings, vocab *ptb.Vocab) error {
	if saved.DataSHA256 != nil {
		var bad []string
		for _, sp := range s.splits() {
			if want, got := saved.DataSHA256[sp.key], s.DataSHA256[sp.key]; want != got {
				bad = append(bad, fmt.Sprintf("%s (SHA-256 %s; the run's was %s)", sp.path, short(got), short(want)))
			}
		}
		if len(bad) > 0 {
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

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("train", stdout)
	var s settings
	dataDir := fs.String("data", "", "directory of ptb.train.txt, ptb.valid.txt and ptb.test.txt (required for a new run, or --train, --valid and --test; a resumed run takes its run.json's)")
	trainFile := fs.String("train", "", "training split of another corpus, in place of --data (with --valid and --test; default: none), e.g. WikiText-2's wiki.train.tokens")
	validFile := fs.String("valid", "", "validation split, with --train (default: none)")
	testFile := fs.String("test", "", "test split, with --train (default: none)")
	fs.IntVar(&s.VocabSize, "vocab-size", 0, "keep the N most frequent types of the training split, reading the others as <unk> (ties: the type that occurs first), for a corpus not preprocessed to a vocabulary (default 0: every type)")
	mf := addModelFlags(fs)
	fs.IntVar(&s.Batch, "batch", 32, "parallel streams B")
	fs.IntVar(&s.BPTT, "bptt", 35, "chunk length T (truncated backpropagation through time)")
	fs.Float64Var(&s.LR, "lr", 0, "SGD learning rate for the per-token mean loss (required; the authors' search range is 1–100)")
	fs.Float64Var(&s.Clip, "clip", 0, "gradient-norm clipping threshold of the mean loss's gradient (required; the authors' search range is 0.0112–1.12)")
	fs.IntVar(&s.Epochs, "epochs", 100, "maximum number of epochs (may be changed on --resume: a run judged after a few epochs is continued to the end)")
	fs.IntVar(&s.EarlyStop, "early-stop", 2, "epochs without improvement before training stops")
	fs.Float64Var(&s.Decay, "decay", 1/1.5, "learning-rate factor after an epoch without improvement (default 2/3 ≈ 0.667)")
	fs.Uint64Var(&s.Seed, "seed", 1, "seed of the initial parameters")
	out := fs.String("out", "", "run directory (required)")
	resume := fs.Bool("resume", false, "continue the run in --out, with the settings of its run.json (flags given must agree with them); in an absent or empty --out, start it")
	strict := fs.Bool("strict", false, "refuse words of ptb.valid.txt and ptb.test.txt that are not in the vocabulary of ptb.train.txt, instead of reading them as <unk>")
	every := fs.Duration("checkpoint-every", 5*time.Minute, "checkpoint within an epoch this often")
	report := fs.Duration("report-every", time.Minute, "progress line interval when stderr is not a terminal")
	stopAfter := fs.Int("stop-after-steps", 0, "stop cleanly after this many training steps (for testing resumption)")
	precFlag := precisionFlag(fs, "float32", "recorded in run.json")
	boundaryFlag := fs.String("boundary", nsrnn.BoundaryInChunk.String(), "where the stack update after a chunk's last token is computed: in-chunk (in that chunk, its result carried to the next as a constant) or next-chunk (as the authors' code: at the start of the next chunk, from the carried hidden state, so that the next chunk's loss trains the stack's action layer through it; on the CPU only); forward values are the same; recorded in run.json")
	devFlag := cli.DeviceFlag(fs, "ptb", "recorded in run.json; --resume may give another")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	dev, err := cli.ParseDeviceFlag(*devFlag)
	if err != nil {
		return err
	}
	s.Device = cli.DeviceSetting(dev)
	if *out == "" {
		return errors.New("--out is required")
	}
	// A resumed run takes every setting not given from its run.json.
	var saved *settings
	if *resume {
		ss, exists, err := readRunSettings(*out)
		if err != nil {
			return fmt.Errorf("--resume: %w", err)
		}
		if exists {
			// A run that cannot be resumed (no checkpoint, not
			// finished) is refused before anything is written:
			// resuming it would start again from epoch 1 over its log.
			if err := cli.CheckResumable(*out, protocol.RunFile); err != nil {
				return err
			}
			saved = &ss
			if err := saved.checkSaved(filepath.Join(*out, protocol.RunFile)); err != nil {
				return fmt.Errorf("--resume: %w", err)
			}
			if err := applySaved(fs, saved); err != nil {
				return fmt.Errorf("--resume: %s: %w", filepath.Join(*out, protocol.RunFile), err)
			}
		}
	}
	prec, precSetting, err := parsePrecision(*precFlag)
	if err != nil {
		return err
	}
	s.Precision = precSetting
	boundary, err := nsrnn.ParseBoundary(*boundaryFlag)
	if err != nil {
		return fmt.Errorf("--boundary: %w", err)
	}
	if boundary != nsrnn.BoundaryInChunk {
		s.Boundary = boundary.String()
	}
	files := *trainFile != "" || *validFile != "" || *testFile != ""
	switch {
	case *dataDir == "" && !files:
		return errors.New("--data is required, or --train, --valid and --test")
	case *dataDir != "" && files:
		return errors.New("--data and --train, --valid, --test: give the corpus directory or its three files, not both")
	case files && (*trainFile == "" || *validFile == "" || *testFile == ""):
		return errors.New("--train, --valid and --test are required together")
	case s.VocabSize < 0:
		return fmt.Errorf("--vocab-size %d must not be negative", s.VocabSize)
	case !(s.LR > 0) || math.IsInf(s.LR, 0):
		return fmt.Errorf("--lr %g: a positive, finite learning rate is required", s.LR)
	case !(s.Clip > 0) || math.IsInf(s.Clip, 0):
		return fmt.Errorf("--clip %g: a positive, finite threshold is required", s.Clip)
	case s.Batch < 1:
		return fmt.Errorf("--batch %d must be at least 1", s.Batch)
	case s.BPTT < 1:
		return fmt.Errorf("--bptt %d must be at least 1", s.BPTT)
	case s.Epochs < 1:
		return fmt.Errorf("--epochs %d must be at least 1", s.Epochs)
	case s.EarlyStop < 1:
		return fmt.Errorf("--early-stop %d must be at least 1", s.EarlyStop)
	case !(s.Decay > 0 && s.Decay <= 1):
		return fmt.Errorf("--decay %g must be in (0, 1]", s.Decay)
	case *every < 0:
		return fmt.Errorf("--checkpoint-every %v must not be negative (0: only after every epoch)", *every)
	case *report < 0:
		return fmt.Errorf("--report-every %v must not be negative", *report)
	case *stopAfter < 0:
		return fmt.Errorf("--stop-after-steps %d must not be negative (0: no stop)", *stopAfter)
	}
	if files {
		s.Files = &corpusFiles{}
		for _, f := range []struct {
			flag       string
			path, into *string
		}{{"train", trainFile, &s.Files.Train}, {"valid", validFile, &s.Files.Valid}, {"test", testFile, &s.Files.Test}} {
			if *f.into, err = filepath.Abs(*f.path); err != nil {
				return fmt.Errorf("--%s: %w", f.flag, err)
			}
		}
	} else if s.Data, err = filepath.Abs(*dataDir); err != nil {
		return fmt.Errorf("--data: %w", err)
	}
	unknown := newUnknownWords()
	sp := s.splits()
	corpus, err := ptb.LoadFiles(sp[0].path, sp[1].path, sp[2].path, &ptb.Options{Strict: *strict, Unknown: unknown.add, VocabSize: s.VocabSize})
	if err != nil {
		return fmt.Errorf("%s: %w", s.dataFlags(), err)
	}
	unknown.report(stderr, "train", "the vocabulary of "+filepath.Base(sp[0].path))
	if s.DataSHA256, err = dataDigests(&s); err != nil {
		return fmt.Errorf("%s: %w", s.dataFlags(), err)
	}
	if s.VocabSHA256, err = vocabSHA256(corpus.Vocab); err != nil {
		return err
	}
	if s.Model, err = ptbConfig(mf, corpus.Vocab.Size()); err != nil {
		return err
	}
	if err := s.Model.CheckTraining(); err != nil {
		return err
	}
	if saved != nil {
		if err := checkResume(*out, &s, saved, corpus.Vocab); err != nil {
			return err
		}
	}
	m, err := nsrnn.New(s.Model, protocol.InitSeed(s.Seed))
	if err != nil {
		return err
	}
	m.Precision = prec
	// On a device that cannot be used, or for a kind without an
	// implementation there, the run stops now, before the run directory
	// is made.
	if err := cli.UseDevice(m, dev); err != nil {
		return err
	}
	stream, err := m.NewStream(s.Batch)
	if err != nil {
		return fmt.Errorf("--model: %w", err)
	}
	if err := stream.SetBoundary(boundary); err != nil {
		return fmt.Errorf("--boundary: %w", err)
	}
	trainB, err := ptb.NewBatcher(corpus.Train, s.Batch, s.BPTT, corpus.Vocab.EOS())
	if err != nil {
		return fmt.Errorf("%s: %w", ptb.TrainFile, err)
	}
	validB, err := ptb.NewBatcher(corpus.Valid, s.Batch, s.BPTT, corpus.Vocab.EOS())
	if err != nil {
		return fmt.Errorf("%s: %w", ptb.ValidFile, err)
	}
	// The memory rules refuse a chunk only when its graph is built; check
	// the longest chunk now, before the run directory is made.
	longest := max(min(s.BPTT, trainB.RowLen()), min(s.BPTT, validB.RowLen()))
	if err := stream.CheckChunk(longest); err != nil {
		return fmt.Errorf("%s: %w", chunkFlags(s), err)
	}
	// From here on, a signal stops training after a chunk, with a
	// checkpoint, however soon it comes.
	terminal := cli.IsTerminal(stderr)
	intr := cli.CatchInterrupts(stderr, terminal, notifySignals, "stopping after the current chunk, with a checkpoint")
	defer intr.Stop()
	stderr = intr.Console() // shared with the message of an interrupt
	// The directory is locked until the end; a new run that fails or is
	// interrupted before its first checkpoint leaves nothing behind, so
	// that the same --out can be used again.
	open := s
	if saved != nil {
		open.Epochs, open.Device = saved.Epochs, saved.Device
	}
	rd, err := cli.OpenRunDir(*out, protocol.RunFile, open, *resume, stderr)
	if err != nil {
		return err
	}
	ok := false
	defer func() { rd.Close(ok, VocabFile) }()
	intr.OnForcedExit(func() string {
		if _, err := os.Stat(filepath.Join(*out, protocol.CheckpointFile)); err != nil {
			created := rd.Created
			rd.Close(false, VocabFile) // a new run without a checkpoint leaves nothing behind
			if created {
				return "no checkpoint was written yet: the new run was removed"
			}
			return "no checkpoint was written yet: nothing to resume"
		}
		againArgs := []string{"train", "--out", *out, "--resume"}
		if !dev.IsCPU() {
			againArgs = append(againArgs, "--device", dev.String())
		}
		return "resume from the last checkpoint with: " + prog.CommandLine(againArgs)
	})
	if saved != nil && (s.Epochs != saved.Epochs || s.Device != saved.Device) {
		if err := updateRun(*out, s, *saved, stderr); err != nil {
			return err
		}
	}
	vocabPath := filepath.Join(*out, VocabFile)
	_, err = os.Stat(vocabPath)
	write := rd.Created || errors.Is(err, os.ErrNotExist)
	if !write && s.VocabSHA256 != "" {
		// A resumed run's vocab.txt that is not the one run.json records
		// (damaged or replaced) is written again from the corpus, whose
		// digests were checked: eval, sg and generate read it.
		if h, err := fileSHA256(vocabPath); err != nil || h != s.VocabSHA256 {
			built, err := vocabSHA256(corpus.Vocab)
			if err != nil {
				return err
			}
			if built != s.VocabSHA256 {
				return fmt.Errorf("--resume: the vocabulary of %s (SHA-256 %s) is not the one %s records (%s)", s.splits()[0].path, short(built), protocol.RunFile, short(s.VocabSHA256))
			}
			fmt.Fprintf(stderr, "%s was not the run's vocabulary (SHA-256 %s, %s records %s): written again from the corpus\n", vocabPath, short(h), protocol.RunFile, short(s.VocabSHA256))
			write = true
		}
	}
	if write {
		if err := corpus.Vocab.Save(vocabPath); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	valid, err := m.NewStream(s.Batch)
	if err != nil {
		return err
	}
	obj, err := nsrnn.StreamObjective(stream, trainB.NumChunks(), chunkFunc(trainB), func() (float64, error) {
		ce, _, err := valid.CrossEntropy(validB.NumChunks(), chunkFunc(validB))
		if err == nil && math.IsInf(math.Exp(ce), 1) {
			// Beyond any perplexity (and any JSON number): a diverged run,
			// whose loss stayed finite in float32 products.
			return ce, fmt.Errorf("the validation loss is %.4g nats per token, a perplexity beyond the floating-point range: training diverged; try a smaller learning rate", ce)
		}
		return ce, err
	})
	if err != nil {
		return err
	}
	ckptSettings, err := checkpointSettings(s)
	if err != nil {
		return err
	}
	tc := nsrnn.TrainConfig{
		Optimizer: nsrnn.NewSGD(s.LR), Clip: s.Clip,
		Schedule:  &nsrnn.Plateau{Factor: s.Decay, Patience: 0, Threshold: 1e-4},
		EarlyStop: s.EarlyStop, MaxEpochs: s.Epochs,
		Checkpoint: filepath.Join(*out, protocol.CheckpointFile), CheckpointEvery: *every,
		Settings: ckptSettings,
	}
	label := s.Model.Kind
	recs := nsrnn.Recorders{nsrnn.JSONLog(filepath.Join(*out, protocol.LogFile)),
		progress(stderr, label, s.Batch*s.BPTT, terminal, *report), intr.CheckpointRecorder()}
	if *stopAfter > 0 {
		steps := 0
		recs = append(recs, nsrnn.RecorderFunc(func(e nsrnn.Event) error {
			if e.Kind == nsrnn.StepDone {
				if steps++; steps >= *stopAfter {
					return nsrnn.ErrStop
				}
			}
			return nil
		}))
	}
	tc.Recorder = recs
	noteBLAS(stderr, dev)
	fmt.Fprintf(stderr, "training %s on the Penn Treebank: %d parameters, %d training targets in %d chunks of %d×%d, BLAS %s, device %s; files in %s (Ctrl-C stops with a checkpoint)\n",
		label, m.NumParams(), trainB.NumTargets(), trainB.NumChunks(), s.Batch, s.BPTT, nsrnn.BLAS, cli.DeviceLabel(dev), *out)
	res, err := nsrnn.Fit(m, obj, tc)
	if err != nil {
		return err
	}
	if !res.Finished {
		againArgs := []string{"train", "--out", *out, "--resume"}
		if !dev.IsCPU() {
			againArgs = append(againArgs, "--device", dev.String())
		}
		again := prog.CommandLine(againArgs)
		if _, err := os.Stat(tc.Checkpoint); err != nil {
			if rd.Created {
				// Close removes the new run: there is nothing to resume.
				return errors.New("stopped before the first checkpoint: nothing to resume; the new run was removed")
			}
			return errors.New("stopped before the first checkpoint: nothing to resume")
		}
		if intr.Signal() != nil {
			return &cli.ExitError{Code: intr.ExitCode(), Err: fmt.Errorf("interrupted; checkpoint written in %s; resume with: %s", *out, again)}
		}
		fmt.Fprintf(stderr, "stopped; continue with: %s\n", again)
		return nil
	}
	if err := m.Save(filepath.Join(*out, protocol.ModelFile)); err != nil {
		return err
	}
	sum := summary{
		Model: s.Model, Parameters: m.NumParams(), Epochs: res.Epochs, BestEpoch: res.BestEpoch,
		BestValidPerplexity: math.Exp(res.BestValidCrossEntropy), BestValidCrossEntrop: res.BestValidCrossEntropy,
		ElapsedSeconds: res.ElapsedSeconds, BLAS: nsrnn.BLAS,
	}
	for _, r := range res.History {
		sum.ValidPerplexities = append(sum.ValidPerplexities, math.Exp(r.ValidCrossEntropy))
		sum.TrainPerplexities = append(sum.TrainPerplexities, math.Exp(r.TrainLoss))
		sum.LearningRates = append(sum.LearningRates, r.LearningRate)
	}
	if res.ElapsedSeconds > 0 {
		sum.TrainTokensPerSecond = float64(trainB.NumTargets()*res.Epochs) / res.ElapsedSeconds
	}
	if err := protocol.WriteJSON(filepath.Join(*out, protocol.SummaryFile), sum); err != nil {
		return err
	}
	ok = true
	fmt.Fprintf(stderr, "best epoch %d of %d: validation perplexity %.2f; files in %s\n", res.BestEpoch, res.Epochs, sum.BestValidPerplexity, *out)
	return nil
}

// notifySignals registers a channel for SIGINT and SIGTERM; tests replace
// it.
var notifySignals = cli.NotifySignals

// chunkFunc serves the chunks of a batcher to a stream objective.
func chunkFunc(b *ptb.Batcher) func(i int) ([][]int, [][]int, error) {
	return func(i int) ([][]int, [][]int, error) {
		c, err := b.Chunk(i)
		if err != nil {
			return nil, nil, err
		}
		return c.Inputs, c.Targets, nil
	}
}

// epochLegend is the line progress writes when training starts, before
// the first epoch line: it explains the mark of an improved epoch.
const epochLegend = "epoch lines: train and validation perplexity, learning rate, time elapsed; * marks an epoch whose validation perplexity is the best so far (the parameters kept)"

// progress reports PTB training: on a terminal a bar over the epoch's
// chunks with tokens per second, perplexity and the epoch's ETA; otherwise
// a line every interval; and a line per epoch either way, ending in * when
// the epoch improved, which epochLegend explains when training starts.
func progress(w io.Writer, label string, tokensPerStep int, terminal bool, interval time.Duration) nsrnn.Recorder {
	var bar *progressbar.ProgressBar
	var epochStart, last time.Time
	startStep := 0
	return nsrnn.RecorderFunc(func(e nsrnn.Event) error {
		switch e.Kind {
		case nsrnn.Started:
			fmt.Fprintln(w, epochLegend)
			if e.Resumed {
				fmt.Fprintf(w, "%s: resuming at epoch %d, chunk %d of %d\n", label, e.Epoch, e.Step+1, e.Steps)
			}
		case nsrnn.StepDone:
			now := time.Now()
			if epochStart.IsZero() || e.Step == 1 {
				epochStart, last, startStep = now, now, e.Step-1
			}
			done := e.Step - startStep
			rate := float64(done*tokensPerStep) / max(now.Sub(epochStart).Seconds(), 1e-9)
			eta := time.Duration(float64(e.Steps-e.Step)*float64(tokensPerStep)/max(rate, 1e-9)) * time.Second
			desc := fmt.Sprintf("%s epoch %d: %.0f tokens/s, perplexity %.1f, ETA %s", label, e.Epoch, rate, math.Exp(e.Loss), eta.Round(time.Second))
			if terminal {
				if bar == nil {
					bar = progressbar.NewOptions(e.Steps, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
						progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
					_ = bar.Set(e.Step - 1)
				}
				bar.Describe(desc)
				_ = bar.Add(1)
			} else if now.Sub(last) >= interval {
				last = now
				fmt.Fprintf(w, "%s (chunk %d of %d)\n", desc, e.Step, e.Steps)
			}
		case nsrnn.EpochDone:
			if bar != nil {
				_ = bar.Clear()
				bar = nil
			}
			epochStart = time.Time{}
			r := e.Record
			mark := ""
			if r.Improved {
				mark = " *"
			}
			fmt.Fprintf(w, "%s epoch %d/%d: train perplexity %.2f, valid perplexity %.2f, lr %.4g, %s%s\n",
				label, r.Epoch, e.MaxEpochs, math.Exp(r.TrainLoss), math.Exp(r.ValidCrossEntropy), r.LearningRate,
				time.Duration(r.ElapsedSeconds*float64(time.Second)).Round(time.Second), mark)
		}
		return nil
	})
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("eval", stdout)
	run := fs.String("model", "", "run directory of ptb train (required)")
	dataDir := fs.String("data", "", "directory of the corpus (default: the run's corpus, from its run.json)")
	validFile := fs.String("valid", "", "validation split file, in place of --data (default: the run's)")
	testFile := fs.String("test", "", "test split file, in place of --data; implies --split test (default: the run's)")
	split := fs.String("split", "valid", "split: valid or test")
	asJSON := fs.Bool("json", false, "print JSON")
	strict := fs.Bool("strict", false, "refuse words not in the run's vocabulary, instead of reading them as <unk>")
	batch := fs.Int("batch", 0, "parallel streams (default: the run's)")
	bptt := fs.Int("bptt", 0, "chunk length (default: the run's)")
	precFlag := precisionFlag(fs, "", "default: the run's")
	devFlag := cli.DeviceFlag(fs, "ptb", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	dev, err := cli.ParseDeviceFlag(*devFlag)
	if err != nil {
		return err
	}
	if *run == "" {
		return errors.New("--model is required")
	}
	if *testFile != "" && !fs.Changed("split") {
		*split = "test"
	}
	if *dataDir != "" && (*validFile != "" || *testFile != "") {
		return errors.New("--data and --valid or --test: give the corpus directory or a split file, not both")
	}
	if *precFlag != "" {
		if _, _, err := parsePrecision(*precFlag); err != nil {
			return err
		}
	}
	if *split != "valid" && *split != "test" {
		return fmt.Errorf("--split %q: want valid or test", *split)
	}
	switch {
	case *split == "test" && *validFile != "":
		return errors.New("--valid with --split test: give --test for the test split, or --split valid")
	case *split == "valid" && *testFile != "":
		return errors.New("--test with --split valid: give --valid for the validation split, or --split test")
	case *batch < 0 || *bptt < 0:
		return fmt.Errorf("--batch %d and --bptt %d must not be negative (0: the run's)", *batch, *bptt)
	}
	file, err := splitFile(*run, *dataDir, *split, map[string]string{"valid": *validFile, "test": *testFile})
	if err != nil {
		return err
	}
	unknown := newUnknownWords()
	opt := &ptb.Options{Strict: *strict, Unknown: unknown.add}
	noteBLAS(stderr, dev)
	res, err := evaluateRun(*run, file, *batch, *bptt, *precFlag, dev, opt)
	if err != nil {
		return err
	}
	res.Split = *split
	res.UnknownWords = unknown.total()
	unknown.report(stderr, "eval", "the run's vocabulary")
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "%s perplexity %.2f (%d targets, %.4f nats per token)\n", *split, res.Perplexity, res.Targets, res.CrossEntropy)
	return nil
}

// splitFile is the file of split ("valid" or "test") that eval reads: in
// the --data directory, the file given for it (files, by split), or the
// run's own (its corpus directory or files, from its run.json).
func splitFile(run, dataDir, split string, files map[string]string) (string, error) {
	names := map[string]string{"valid": ptb.ValidFile, "test": ptb.TestFile}
	switch {
	case dataDir != "":
		return filepath.Join(dataDir, names[split]), nil
	case files[split] != "":
		return files[split], nil
	}
	s, exists, err := readRunSettings(run)
	switch {
	case err != nil:
		return "", fmt.Errorf("--model %s: %w", run, err)
	case !exists || (s.Data == "" && s.Files == nil):
		return "", fmt.Errorf("--data or --%s is required: --model %s has no %s naming its corpus", split, run, protocol.RunFile)
	}
	for _, sp := range s.splits() {
		if sp.key == split || sp.key == names[split] {
			return sp.path, nil
		}
	}
	return "", fmt.Errorf("--model %s: no %s split", run, split) // not reached: every run has both
}

// evalResult is the perplexity of a model on a split.
type evalResult struct {
	Split        string  `json:"split"`
	Perplexity   float64 `json:"perplexity"`
	CrossEntropy float64 `json:"cross_entropy"`
	Targets      int     `json:"targets"`
	// UnknownWords is the number of words of the split not in the run's
	// vocabulary, read as <unk>.
	UnknownWords int     `json:"unknown_words"`
	Seconds      float64 `json:"seconds"`
}

// loadRun loads the model and vocabulary of a finished PTB run, checking
// that they belong together: the vocabulary's size must be the model's,
// and vocab.txt must be the file the run wrote (its SHA-256 in run.json;
// runs made before it was recorded are checked by size alone).
func loadRun(dir string) (*nsrnn.Model, *ptb.Vocab, settings, error) {
	s, exists, err := readRunSettings(dir)
	switch {
	case err != nil:
		return nil, nil, s, fmt.Errorf("--model %s: %w", dir, err)
	case !exists:
		return nil, nil, s, fmt.Errorf("--model %s: not a ptb run: no %s", dir, protocol.RunFile)
	case s.Data == "" && s.Files == nil:
		return nil, nil, s, fmt.Errorf("--model %s: not a ptb train run: its %s names no corpus (\"data\" or \"files\"); a cfl run?", dir, protocol.RunFile)
	}
	mp := filepath.Join(dir, protocol.ModelFile)
	if _, err := os.Stat(mp); errors.Is(err, os.ErrNotExist) {
		return nil, nil, s, fmt.Errorf("--model: %w", protocol.MissingModel(dir))
	}
	m, err := nsrnn.Load(mp)
	if err != nil {
		return nil, nil, s, err
	}
	if err := protocol.CheckRunModel(m, s.Model, mp); err != nil {
		return nil, nil, s, fmt.Errorf("--model %s: %w", dir, err)
	}
	vp := filepath.Join(dir, VocabFile)
	if s.VocabSHA256 != "" {
		h, err := fileSHA256(vp)
		if err != nil {
			return nil, nil, s, fmt.Errorf("--model %s: %w", dir, err)
		}
		if h != s.VocabSHA256 {
			return nil, nil, s, fmt.Errorf("--model %s: %s is not the vocabulary the run was trained with (SHA-256 %s; %s records %s): restore the run's file", dir, vp, short(h), protocol.RunFile, short(s.VocabSHA256))
		}
	}
	v, err := ptb.LoadVocab(vp, nil)
	if err != nil {
		return nil, nil, s, err
	}
	if c := m.Config(); v.Size() != c.InputVocab || v.Size() != c.OutputVocab {
		return nil, nil, s, fmt.Errorf("--model %s: %s holds %d words, the model's vocabulary %d: not the run's vocabulary", dir, vp, v.Size(), c.OutputVocab)
	}
	return m, v, s, nil
}

// evaluateRun computes the perplexity of a finished run's model on a split
// file, batched and with the output precision of the run unless batch,
// bptt or precision ("float32", "float64") is given, on the device dev;
// opt reads the split.
func evaluateRun(dir, file string, batch, bptt int, precision string, dev nsrnn.Device, opt *ptb.Options) (*evalResult, error) {
	m, v, s, err := loadRun(dir)
	if err != nil {
		return nil, err
	}
	if precision == "" {
		precision = cmp.Or(s.Precision, "float64")
	}
	if m.Precision, err = nsrnn.ParsePrecision(precision); err != nil {
		return nil, fmt.Errorf("--model %s: %w", dir, err)
	}
	if err := cli.UseDevice(m, dev); err != nil {
		return nil, err
	}
	if batch <= 0 {
		batch = s.Batch
	}
	if bptt <= 0 {
		bptt = s.BPTT
	}
	toks, err := ptb.ReadSplit(file, v, opt)
	if err != nil {
		return nil, err
	}
	b, err := ptb.NewBatcher(toks, batch, bptt, v.EOS())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	st, err := m.NewStream(batch)
	if err != nil {
		return nil, fmt.Errorf("--batch %d: %w", batch, err)
	}
	if err := st.CheckChunk(min(bptt, b.RowLen())); err != nil {
		return nil, fmt.Errorf("--batch %d, --bptt %d: %w", batch, bptt, err)
	}
	start := time.Now()
	ce, n, err := st.CrossEntropy(b.NumChunks(), chunkFunc(b))
	if err != nil {
		return nil, err
	}
	return &evalResult{Perplexity: math.Exp(ce), CrossEntropy: ce, Targets: n, Seconds: time.Since(start).Seconds()}, nil
}
