package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

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

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("train", stdout)
	var s settings
	dataDir := fs.String("data", "", "directory of ptb.train.txt, ptb.valid.txt and ptb.test.txt (required for a new run, or --train, --valid and --test; a resumed run takes its run.json's, or the corpus at another place, moved or copied, whose files have the SHA-256 digests that run.json records)")
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
	resume := fs.Bool("resume", false, "continue the run in --out, with the settings of its run.json (flags given must agree with them, but --epochs, --device, and --data or --train, --valid and --test naming the run's corpus at another place: files with the SHA-256 digests run.json records, whose new place it then records); in an absent or empty --out, start it (and say so)")
	like := fs.String("like", "", "start a new run with the settings of another run (its directory or run.json), e.g. one committed under results/ptb, to train it again; flags given override them (--data where its corpus lies elsewhere, --epochs, --device, …); a corpus other than the one it recorded (by SHA-256) is refused")
	strict := fs.Bool("strict", false, "refuse words of the validation and test splits that are not in the training split's vocabulary, instead of reading them as <unk>")
	every := fs.Duration("checkpoint-every", 5*time.Minute, "checkpoint within an epoch this often (0: only after every epoch)")
	report := fs.Duration("report-every", time.Minute, "progress line interval when stderr is not a terminal")
	stopAfter := fs.Int("stop-after-steps", 0, "stop after this many training steps, with a checkpoint as Ctrl-C makes (for testing resumption)")
	precFlag := precisionFlag(fs, "float32", "recorded in run.json (where the field is absent, as in runs of float64, it is float64)")
	boundaryFlag := fs.String("boundary", nsrnn.BoundaryInChunk.String(), "where the stack update after a chunk's last token is computed: in-chunk (in that chunk, its result carried to the next as a constant) or next-chunk (at the start of the next chunk, from the carried hidden state, so that the next chunk's loss trains the stack's action layer through it, as the authors' code does for JM; theirs for RNS is in-chunk); forward values are the same; recorded in run.json (absent: in-chunk)")
	improveFlag := fs.String("improvement", improvePerplexity, "how an epoch's validation score is judged: perplexity (the authors' rule: the learning rate decays unless the perplexity falls below (1 − 1e-4) times the best, as PyTorch's ReduceLROnPlateau, while any decrease keeps the parameters as the best and resets --early-stop) or cross-entropy (one rule for all three: a fall of more than 1e-4 times the best cross-entropy, as the runs made before 2026-11-28); recorded in run.json")
	devFlag := cli.DeviceFlag(fs, "ptb", "recorded in run.json; --resume may give another, and without --device goes on on the CPU (the default), saying so")
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
	// A run made --like another takes every setting not given from the
	// other's run.json; a resumed run, from its own.
	var likeRun *settings
	if *like != "" {
		var err error
		if likeRun, err = readLike(fs, *like); err != nil {
			return fmt.Errorf("--like %s: %w", *like, err)
		}
	}
	var saved *settings
	var place runPlace // where the run's checkpoint has its corpus, when it moved
	if *resume {
		ss, exists, err := readRunSettings(*out)
		if err != nil {
			return fmt.Errorf("--resume: %w", err)
		}
		if exists {
			// A run that cannot be resumed (no checkpoint, not
			// finished) is refused before anything is written:
			// resuming it would start again from epoch 1 over its log.
			if err := protocol.CheckResumable(*out, protocol.RunFile); err != nil {
				return err
			}
			saved = &ss
			if err := saved.checkSaved(filepath.Join(*out, protocol.RunFile)); err != nil {
				return fmt.Errorf("--resume: %w", err)
			}
			if place, err = readRunPlace(*out); err != nil {
				return fmt.Errorf("--resume: %w", err)
			}
			if err := applySaved(fs, saved); err != nil {
				return fmt.Errorf("--resume: %s: %w", filepath.Join(*out, protocol.RunFile), err)
			}
			if !fs.Changed("data") && !fs.Changed("train") && !fs.Changed("valid") && !fs.Changed("test") {
				for _, sp := range saved.splits() {
					if _, err := os.Stat(sp.path); errors.Is(err, os.ErrNotExist) && saved.DataSHA256 != nil {
						return fmt.Errorf("--resume: the corpus that %s records is not there (%s): give its place with %s; its files must have the SHA-256 digests that the run recorded",
							filepath.Join(*out, protocol.RunFile), sp.path, saved.dataFlags())
					}
				}
			}
			// A model flag given against the run's is named now, before
			// the model flags' checks blame one taken from run.json.
			if diffs := modelFlagDiffs(fs, saved); len(diffs) > 0 {
				return fmt.Errorf("--resume: flags differ from those of the run in %s (%s): %s; leave them out to take the run's, or choose another --out",
					*out, filepath.Join(*out, protocol.RunFile), strings.Join(diffs, "; "))
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
	if s.Improvement, err = improvementSetting(*improveFlag); err != nil {
		return err
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
	// A device that cannot be used is refused before the corpus is read
	// (seconds, and its notes), with a model of the run's kind over a
	// small vocabulary.
	if !dev.IsCPU() {
		if cfg, err := ptbConfig(mf, 2); err == nil {
			if err := cli.CheckDevice(dev, cfg, false); err != nil {
				return err
			}
		}
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
	if likeRun != nil {
		if bad := corpusDiffs(&s, likeRun); len(bad) > 0 {
			return fmt.Errorf("--like %s: %s: the corpus differs from the one that run was trained on: %s; give its corpus", *like, s.dataFlags(), strings.Join(bad, ", "))
		}
	}
	// A resumed run's corpus given at another place (moved or copied, onto
	// a cluster, say) is the run's when its files have the digests that
	// run.json records; the run's place stands in for it until run.json
	// records the new one.
	var moved *settings
	if saved != nil && saved.DataSHA256 != nil && (s.Files == nil) == (saved.Files == nil) &&
		!samePlace(s.Data, s.Files, saved.Data, saved.Files) {
		if bad := corpusDiffs(&s, saved); len(bad) > 0 {
			return fmt.Errorf("--resume: %s: the corpus differs from the one the run in %s was trained on: %s; give the run's files, or start a new run", s.dataFlags(), *out, strings.Join(bad, ", "))
		}
		at := s
		moved = &at
		s.Data, s.Files = saved.Data, saved.Files
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
	rd, err := protocol.OpenRunDir(*out, protocol.RunFile, open, *resume, stderr)
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
	if moved != nil {
		if !place.moved() {
			place = runPlace{BeganData: saved.Data, BeganFiles: saved.Files}
		}
		s.Data, s.Files = moved.Data, moved.Files
		if samePlace(place.BeganData, place.BeganFiles, s.Data, s.Files) {
			place = runPlace{} // back where it began
		}
	}
	switch rec := (runRecord{s, place}); {
	case saved != nil && (s.Epochs != saved.Epochs || s.Device != saved.Device):
		if err := protocol.UpdateRun(*out, rec, s.Device, saved.Device, s.Epochs, saved.Epochs, stderr); err != nil {
			return err
		}
	case moved != nil:
		if err := protocol.WriteJSON(filepath.Join(*out, protocol.RunFile), rec); err != nil {
			return fmt.Errorf("%s: %w", s.dataFlags(), err)
		}
	}
	if moved != nil {
		fmt.Fprintf(stderr, "%s: the run's corpus (the SHA-256 digests it recorded) is now at %s, not %s; %s updated\n",
			s.dataFlags(), corpusPlace(&s), corpusPlace(saved), filepath.Join(*out, protocol.RunFile))
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
	// The checkpoint records the corpus's place where the run began: a
	// moved run's goes on recording it.
	ck := s
	if place.moved() {
		ck.Data, ck.Files = place.BeganData, place.BeganFiles
	}
	ckptSettings, err := checkpointSettings(ck)
	if err != nil {
		return err
	}
	tc := nsrnn.TrainConfig{
		Optimizer: nsrnn.NewSGD(s.LR), Clip: s.Clip,
		Schedule:  s.schedule(),
		EarlyStop: s.EarlyStop, MaxEpochs: s.Epochs,
		Checkpoint: filepath.Join(*out, protocol.CheckpointFile), CheckpointEvery: *every,
		Settings: ckptSettings,
	}
	label := s.Model.Kind
	recs := nsrnn.Recorders{nsrnn.JSONLog(filepath.Join(*out, protocol.LogFile)),
		progress(stderr, label, s.Batch*s.BPTT, terminal, *report), intr.CheckpointRecorder()}
	if *stopAfter > 0 {
		// As an interrupt stops: with a checkpoint of the state after
		// the step (within an epoch), or after the epoch's validation and
		// checkpoint (at its last step), so that --resume goes on from
		// there.
		steps, stopping := 0, false
		recs = append(recs, nsrnn.RecorderFunc(func(e nsrnn.Event) error {
			switch e.Kind {
			case nsrnn.StepDone:
				if steps++; steps >= *stopAfter {
					stopping = true
					if e.Step < e.Steps {
						return nsrnn.ErrStopAfterCheckpoint
					}
				}
			case nsrnn.EpochDone, nsrnn.Checkpointed:
				if stopping {
					return nsrnn.ErrStop
				}
			}
			return nil
		}))
	}
	tc.Recorder = recs
	noteBLAS(stderr, dev)
	corpusName := "the corpus in " + s.Data // the Penn Treebank, or another in its form
	if s.Files != nil {
		corpusName = s.Files.Train
	}
	fmt.Fprintf(stderr, "training %s on %s: %d parameters, %d training targets in %s of %d×%d, BLAS %s, device %s; files in %s (Ctrl-C stops with a checkpoint)\n",
		label, corpusName, m.NumParams(), trainB.NumTargets(), cli.Count(trainB.NumChunks(), "chunk"), s.Batch, s.BPTT, nsrnn.BLAS, cli.DeviceLabel(dev), *out)
	// The corpus has no known lower bound: the records say so (runs
	// checkpointed before, with a bound of 0, resume so too).
	res, err := nsrnn.Fit(m, nsrnn.WithoutLowerBound(obj), tc)
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

// runPlace is what run.json records, beside the settings, of a run
// resumed on its corpus at another place than where it began: that place
// (as settings' Data and Files), which the run's checkpoint goes on
// recording among its settings (nsrnn compares them on every resume). A
// run not moved has none, as the run.json files written before runs could
// move.
type runPlace struct {
	BeganData  string       `json:"began_data,omitempty"`
	BeganFiles *corpusFiles `json:"began_files,omitempty"`
}

// moved reports whether p records a place.
func (p runPlace) moved() bool { return p.BeganData != "" || p.BeganFiles != nil }

// runRecord is run.json of ptb train: the settings, and the place where a
// moved run's corpus was when it began.
type runRecord struct {
	settings
	runPlace
}

// samePlace reports whether two places of a corpus (a directory, or
// three files) are the same.
func samePlace(aData string, aFiles *corpusFiles, bData string, bFiles *corpusFiles) bool {
	if aFiles == nil || bFiles == nil {
		return aFiles == nil && bFiles == nil && aData == bData
	}
	return aData == bData && *aFiles == *bFiles
}

// corpusPlace names the place of the corpus of s in messages: its
// directory, or its three files.
func corpusPlace(s *settings) string {
	if s.Files != nil {
		return strings.Join([]string{s.Files.Train, s.Files.Valid, s.Files.Test}, ", ")
	}
	return s.Data
}

// readRunPlace reads the place of a moved run's corpus from its run.json,
// if it moved.
func readRunPlace(dir string) (runPlace, error) {
	var p runPlace
	path := filepath.Join(dir, protocol.RunFile)
	raw, err := readlimit.File(path, readlimit.JSON, true)
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
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
