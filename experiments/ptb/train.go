package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/experiment"
	"github.com/nsrnn/nsrnn/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
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

// ptbConfig turns model flags into the paper's PTB configuration:
// embedding = hidden size, untied, every parameter uniform in ±0.05, JM's
// depth limit 10 and the NS window D = 35 unless given.
func ptbConfig(mf *cli.ModelFlags, vocab int) (nsrnn.Config, error) {
	if mf.Kind == "" {
		return nsrnn.Config{}, fmt.Errorf("--model is required (one of %s)", streamKinds())
	}
	k, err := nsrnn.LookupKind(mf.Kind)
	if err != nil {
		return nsrnn.Config{}, fmt.Errorf("--model: %w", err)
	}
	switch k.Family {
	case nsrnn.NondeterministicStack:
		if mf.States == 0 || mf.Symbols == 0 {
			return nsrnn.Config{}, fmt.Errorf("--model %s needs --states and --symbols", mf.Kind)
		}
		if mf.Window == 0 {
			mf.Window = 35
		}
	case nsrnn.VectorStack:
		if mf.Kind == nsrnn.JM && mf.DepthLimit == 0 {
			mf.DepthLimit = 10
		}
	}
	return mf.Config(vocab, vocab, mf.Hidden, 0.05)
}

func streamKinds() string { return "lstm, jm, ns, ns+s, ns+u, rns" }

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var s settings
	dataDir := fs.String("data", "", "directory of ptb.train.txt, ptb.valid.txt and ptb.test.txt (required)")
	mf := cli.AddModelFlags(fs, 256)
	fs.IntVar(&s.Batch, "batch", 32, "parallel streams B")
	fs.IntVar(&s.BPTT, "bptt", 35, "chunk length T (truncated backpropagation through time)")
	fs.Float64Var(&s.LR, "lr", 0, "SGD learning rate for the per-token mean loss (required; the paper's range is 0.03125–3.125)")
	fs.Float64Var(&s.Clip, "clip", 0, "gradient-norm clipping threshold (required; the paper's range is 0.0112–1.12)")
	fs.IntVar(&s.Epochs, "epochs", 100, "maximum number of epochs")
	fs.IntVar(&s.EarlyStop, "early-stop", 2, "epochs without improvement before training stops")
	fs.Float64Var(&s.Decay, "decay", 1/1.5, "learning-rate factor after an epoch without improvement")
	fs.Uint64Var(&s.Seed, "seed", 1, "seed of the initial parameters")
	out := fs.String("out", "", "run directory (required)")
	resume := fs.Bool("resume", false, "continue the run in --out")
	every := fs.Duration("checkpoint-every", 5*time.Minute, "checkpoint within an epoch this often")
	report := fs.Duration("report-every", time.Minute, "progress line interval when stderr is not a terminal")
	stopAfter := fs.Int("stop-after-steps", 0, "stop cleanly after this many training steps (for testing resumption)")
	precFlag := precisionFlag(fs, "float32", "recorded in run.json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	prec, precSetting, err := parsePrecision(*precFlag)
	if err != nil {
		return err
	}
	s.Precision = precSetting
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case *dataDir == "":
		return errors.New("--data is required")
	case *out == "":
		return errors.New("--out is required")
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
	}
	abs, err := filepath.Abs(*dataDir)
	if err != nil {
		return fmt.Errorf("--data: %w", err)
	}
	s.Data = abs
	corpus, err := ptb.Load(*dataDir, nil)
	if err != nil {
		return fmt.Errorf("--data: %w", err)
	}
	if s.Model, err = ptbConfig(mf, corpus.Vocab.Size()); err != nil {
		return err
	}
	m, err := nsrnn.New(s.Model, experiment.InitSeed(s.Seed))
	if err != nil {
		return err
	}
	m.Precision = prec
	stream, err := m.NewStream(s.Batch)
	if err != nil {
		return fmt.Errorf("--model: %w", err)
	}
	trainB, err := ptb.NewBatcher(corpus.Train, s.Batch, s.BPTT, corpus.Vocab.EOS())
	if err != nil {
		return fmt.Errorf("%s: %w", ptb.TrainFile, err)
	}
	validB, err := ptb.NewBatcher(corpus.Valid, s.Batch, s.BPTT, corpus.Vocab.EOS())
	if err != nil {
		return fmt.Errorf("%s: %w", ptb.ValidFile, err)
	}
	if err := experiment.PrepareRun(*out, s, *resume); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := corpus.Vocab.Save(filepath.Join(*out, VocabFile)); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	valid, err := m.NewStream(s.Batch)
	if err != nil {
		return err
	}
	obj, err := nsrnn.StreamObjective(stream, trainB.NumChunks(), chunkFunc(trainB), func() (float64, error) {
		ce, _, err := valid.CrossEntropy(validB.NumChunks(), chunkFunc(validB))
		return ce, err
	})
	if err != nil {
		return err
	}
	tc := nsrnn.TrainConfig{
		Optimizer: nsrnn.NewSGD(s.LR), Clip: s.Clip,
		Schedule:  &nsrnn.Plateau{Factor: s.Decay, Patience: 0, Threshold: 1e-4},
		EarlyStop: s.EarlyStop, MaxEpochs: s.Epochs,
		Checkpoint: filepath.Join(*out, experiment.CheckpointFile), CheckpointEvery: *every,
		Settings: map[string]string{"data": s.Data, "batch": fmt.Sprint(s.Batch), "bptt": fmt.Sprint(s.BPTT)},
	}
	label := s.Model.Kind
	recs := nsrnn.Recorders{nsrnn.JSONLog(filepath.Join(*out, experiment.LogFile)),
		progress(stderr, label, s.Batch*s.BPTT, cli.IsTerminal(stderr), *report)}
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
	fmt.Fprintf(stderr, "training %s on the Penn Treebank: %d parameters, %d training targets in %d chunks of %d×%d, BLAS %s\n",
		label, m.NumParams(), trainB.NumTargets(), trainB.NumChunks(), s.Batch, s.BPTT, nsrnn.BLAS)
	res, err := nsrnn.Fit(m, obj, tc)
	if err != nil {
		return err
	}
	if !res.Finished {
		fmt.Fprintf(stderr, "stopped; continue with: %s --resume\n", "ptb train --out "+*out)
		return nil
	}
	if err := m.Save(filepath.Join(*out, experiment.ModelFile)); err != nil {
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
	if err := experiment.WriteJSON(filepath.Join(*out, experiment.SummaryFile), sum); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "best epoch %d of %d: validation perplexity %.2f; files in %s\n", res.BestEpoch, res.Epochs, sum.BestValidPerplexity, *out)
	return nil
}

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
	fs := pflag.NewFlagSet("eval", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	run := fs.String("model", "", "run directory of ptb train (required)")
	dataDir := fs.String("data", "", "directory of the corpus (required)")
	split := fs.String("split", "valid", "split: valid or test")
	asJSON := fs.Bool("json", false, "print JSON")
	batch := fs.Int("batch", 0, "parallel streams (default: the run's)")
	bptt := fs.Int("bptt", 0, "chunk length (default: the run's)")
	precFlag := precisionFlag(fs, "", "default: the run's")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *run == "" || *dataDir == "" {
		return errors.New("--model and --data are required")
	}
	if *precFlag != "" {
		if _, _, err := parsePrecision(*precFlag); err != nil {
			return err
		}
	}
	var file string
	switch *split {
	case "valid":
		file = ptb.ValidFile
	case "test":
		file = ptb.TestFile
	default:
		return fmt.Errorf("--split %q: want valid or test", *split)
	}
	res, err := evaluateRun(*run, filepath.Join(*dataDir, file), *batch, *bptt, *precFlag)
	if err != nil {
		return err
	}
	res.Split = *split
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "%s perplexity %.2f (%d targets, %.4f nats per token)\n", *split, res.Perplexity, res.Targets, res.CrossEntropy)
	return nil
}

// evalResult is the perplexity of a model on a split.
type evalResult struct {
	Split        string  `json:"split"`
	Perplexity   float64 `json:"perplexity"`
	CrossEntropy float64 `json:"cross_entropy"`
	Targets      int     `json:"targets"`
	Seconds      float64 `json:"seconds"`
}

// loadRun loads the model and vocabulary of a finished PTB run.
func loadRun(dir string) (*nsrnn.Model, *ptb.Vocab, settings, error) {
	var s settings
	raw, err := os.ReadFile(filepath.Join(dir, experiment.RunFile))
	if err != nil {
		return nil, nil, s, fmt.Errorf("--model %s: not a ptb run: %w", dir, err)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, nil, s, fmt.Errorf("--model %s: %w", filepath.Join(dir, experiment.RunFile), err)
	}
	mp := filepath.Join(dir, experiment.ModelFile)
	if _, err := os.Stat(mp); errors.Is(err, os.ErrNotExist) {
		return nil, nil, s, fmt.Errorf("--model %s: the run has not finished: no model yet", dir)
	}
	m, err := nsrnn.Load(mp)
	if err != nil {
		return nil, nil, s, err
	}
	v, err := ptb.LoadVocab(filepath.Join(dir, VocabFile), nil)
	if err != nil {
		return nil, nil, s, err
	}
	return m, v, s, nil
}

// evaluateRun computes the perplexity of a finished run's model on a split
// file, batched and with the output precision of the run unless batch,
// bptt or precision ("float32", "float64") is given.
func evaluateRun(dir, file string, batch, bptt int, precision string) (*evalResult, error) {
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
	if batch <= 0 {
		batch = s.Batch
	}
	if bptt <= 0 {
		bptt = s.BPTT
	}
	toks, err := ptb.ReadSplit(file, v, nil)
	if err != nil {
		return nil, err
	}
	b, err := ptb.NewBatcher(toks, batch, bptt, v.EOS())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	st, err := m.NewStream(batch)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	ce, n, err := st.CrossEntropy(b.NumChunks(), chunkFunc(b))
	if err != nil {
		return nil, err
	}
	return &evalResult{Perplexity: math.Exp(ce), CrossEntropy: ce, Targets: n, Seconds: time.Since(start).Seconds()}, nil
}
