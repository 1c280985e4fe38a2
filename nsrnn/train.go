package nsrnn

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/boundjson"
)

// Batch is a set of sequences of one length, as symbol indices. It is an
// alias, so that the batches of data.SampleBatches and data.SplitBatches,
// of type [][][]int, are a []Batch as they are.
type Batch = [][]int

// Objective is what Fit trains a model on: the gradient steps of each
// epoch and the validation score that drives the schedule, early stopping
// and model selection.
type Objective interface {
	// Steps is the number of gradient steps of an epoch.
	Steps() int
	// Gradient computes step i (0-based) of epoch e (1-based): the loss,
	// its weight in the epoch's mean loss (the number of sequences or
	// tokens it averages over), and the gradient of every parameter in
	// the order of the model's Params (valid until the next call).
	Gradient(e, i int) (loss, weight float64, grads [][]float64, err error)
	// Validate returns the validation score of the model's current
	// parameters; lower is better.
	Validate() (float64, error)
}

// StatefulObjective is an Objective that carries state from one step to
// the next within an epoch (a stream's carried state), which a checkpoint
// taken in the middle of an epoch must save.
type StatefulObjective interface {
	Objective
	MarshalState() ([]byte, error)
	UnmarshalState([]byte) error
}

// Schedule is a learning-rate schedule driven by the validation score. Fit
// asks it after every epoch whether the epoch improved on the best score
// so far (which also decides the best parameters and early stopping) and
// what the learning rate becomes. A Schedule must be a pure function of
// its arguments: a resumed run replays it over the saved history.
type Schedule interface {
	// Improves reports whether a validation score improves on the best
	// so far (+Inf before the first epoch); lower is better.
	Improves(score, best float64) bool
	// Next returns the learning rate for the epoch after epoch (1-based),
	// given the rate during it and the number of consecutive epochs
	// without improvement that it ends (0 when it improved). Fit calls it
	// after every epoch, and replays it over a checkpoint's history, so
	// that a warmup, a decay by epoch or a decay on a plateau is one type.
	// (Until 2026-11-28 it was Next(lr, bad), called only after an epoch
	// without improvement: such a schedule returns lr when bad is 0.)
	Next(lr float64, epoch, bad int) float64
	// Check reports settings that make no schedule.
	Check() error
}

// Plateau is a learning-rate schedule that decays the rate when the
// validation score stops improving, as PyTorch's ReduceLROnPlateau does.
type Plateau struct {
	// Factor multiplies the learning rate at each decay (0 < Factor ≤ 1).
	Factor float64
	// Patience is the number of consecutive epochs without improvement
	// that are tolerated: the rate decays at the (Patience+1)-th, and
	// again every Patience+1 such epochs. Patience 0 decays after every
	// epoch that does not improve.
	Patience int
	// Threshold is the relative improvement an epoch needs to count as
	// improving: score < best·(1 − Threshold) (for positive scores).
	// 0 counts any decrease.
	Threshold float64
}

// CFLPlateau is the formal-language protocol: ×0.9 after 5 epochs without
// improvement.
var CFLPlateau = Plateau{Factor: 0.9, Patience: 4}

// Improves reports whether score is lower than best by more than the
// relative Threshold; any score but NaN improves on +Inf.
func (p Plateau) Improves(score, best float64) bool {
	if math.IsInf(best, 1) {
		return !math.IsNaN(score)
	}
	return best-score > p.Threshold*math.Abs(best)
}

// Next multiplies lr by Factor at every (Patience+1)-th consecutive epoch
// without improvement.
func (p Plateau) Next(lr float64, epoch, bad int) float64 {
	if bad > 0 && bad%(p.Patience+1) == 0 {
		return lr * p.Factor
	}
	return lr
}

// Check requires 0 < Factor ≤ 1, Patience ≥ 0 and 0 ≤ Threshold < 1.
func (p Plateau) Check() error {
	if !(p.Factor > 0 && p.Factor <= 1) || p.Patience < 0 || !(p.Threshold >= 0 && p.Threshold < 1) {
		return fmt.Errorf("nsrnn: invalid schedule %+v (want 0 < factor ≤ 1, patience ≥ 0, 0 ≤ threshold < 1)", p)
	}
	return nil
}

// A RateSchedule is a Schedule that judges the epochs for the learning
// rate by a rule of its own, apart from Improves, as PyTorch's
// ReduceLROnPlateau does beside a separate early stopping: Improves then
// decides only the best parameters and early stopping, while Next is
// given the consecutive epochs without improvement by RateImproves, each
// judged against the best score by that rule (kept apart: +Inf before the
// first epoch, and moved only by the epochs RateImproves accepts).
type RateSchedule interface {
	Schedule
	// RateImproves reports whether a validation score improves, for the
	// learning rate, on the best so far by this rule (+Inf before the
	// first epoch); lower is better.
	RateImproves(score, best float64) bool
}

// PerplexityPlateau is the learning-rate schedule of the authors' Penn
// Treebank training: the rate decays by Factor as PyTorch's
// ReduceLROnPlateau (mode "min", relative threshold) judges the
// validation perplexity exp(score), while any decrease of the score
// counts as an improvement for the best parameters and early stopping.
// With Threshold 1e-4 an epoch keeps the rate when its perplexity is
// below (1 − 10⁻⁴) times the best, a fall of about 10⁻⁴ nats, where
// Plateau with the same threshold on the cross-entropy asks for a fall of
// 10⁻⁴ times the cross-entropy itself (about 5·10⁻⁴ nats on the Penn
// Treebank).
type PerplexityPlateau struct {
	// Factor multiplies the learning rate at each decay (0 < Factor ≤ 1).
	Factor float64
	// Patience is the number of consecutive epochs without improvement
	// of the perplexity (by Threshold) that are tolerated, as in Plateau.
	Patience int
	// Threshold is the relative fall of the perplexity an epoch needs to
	// keep the rate: exp(score) < exp(best)·(1 − Threshold).
	Threshold float64
}

// Improves reports whether score is below best: any decrease counts, and
// any score but NaN improves on +Inf.
func (p PerplexityPlateau) Improves(score, best float64) bool {
	if math.IsInf(best, 1) {
		return !math.IsNaN(score)
	}
	return score < best
}

// RateImproves reports whether the perplexity exp(score) is below
// exp(best)·(1 − Threshold); any score but NaN improves on +Inf.
func (p PerplexityPlateau) RateImproves(score, best float64) bool {
	if math.IsInf(best, 1) {
		return !math.IsNaN(score)
	}
	return math.Exp(score) < math.Exp(best)*(1-p.Threshold)
}

// Next multiplies lr by Factor at every (Patience+1)-th consecutive epoch
// without improvement of the perplexity.
func (p PerplexityPlateau) Next(lr float64, epoch, bad int) float64 {
	return Plateau(p).Next(lr, epoch, bad)
}

// Check requires 0 < Factor ≤ 1, Patience ≥ 0 and 0 ≤ Threshold < 1.
func (p PerplexityPlateau) Check() error { return Plateau(p).Check() }

// scheduleSetting describes a schedule for the checkpoint's resume check
// (a Plateau as checkpoints have always written it).
func scheduleSetting(s Schedule) string {
	switch p := s.(type) {
	case Plateau:
		return fmt.Sprintf("%+v", p)
	case *Plateau:
		return fmt.Sprintf("%+v", *p)
	case PerplexityPlateau:
		return fmt.Sprintf("PerplexityPlateau%+v", p)
	case *PerplexityPlateau:
		return fmt.Sprintf("PerplexityPlateau%+v", *p)
	}
	return fmt.Sprintf("%T%+v", s, s)
}

// TrainConfig holds the training protocol. Zero values select the paper's
// formal-language settings where it has one.
type TrainConfig struct {
	// Optimizer updates the parameters; nil is Adam with learning rate LR.
	Optimizer Optimizer
	// LR is the initial learning rate of the default Adam optimizer
	// (required when Optimizer is nil; ignored otherwise).
	LR float64
	// Clip is the gradient-norm threshold (default 5; negative disables).
	Clip float64
	// Schedule is the learning-rate schedule; nil is CFLPlateau. A
	// Plateau or a *Plateau, a PerplexityPlateau, or a Schedule of your
	// own.
	Schedule Schedule
	// EarlyStop ends training after this many consecutive epochs without
	// improvement (default 10).
	EarlyStop int
	// MaxEpochs bounds the number of epochs (default 200). It may be
	// changed when a run is resumed.
	MaxEpochs int
	// Seed drives what is random in the objective (the order of the
	// training batches for Train).
	Seed uint64
	// LowerBound is the validation set's true-entropy lower bound in nats
	// per symbol; the records report the difference from it. It must be
	// finite.
	//
	// The bound is the evaluation's, and an objective carries it
	// (Bounded: WithLowerBound, WithoutLowerBound), which is how Train
	// passes these two fields on; Fit still reads them for an objective
	// that does not, as it did before objectives carried bounds, and
	// refuses both at once.
	LowerBound float64
	// NoLowerBound says that the validation data has no known lower
	// bound (the user's own strings, of no known distribution): LowerBound
	// must be 0, and the records and the result are marked NoLowerBound,
	// with a LowerBound and a difference of 0 that mean nothing (the log
	// leaves them out). The checkpoint records it, so that a run with a
	// bound does not resume one without.
	NoLowerBound bool
	// Checkpoint, when set, is the file written atomically after every
	// epoch (and every CheckpointEvery within one); Fit resumes from it.
	// A checkpoint made with another configuration, seed, optimizer,
	// data size or Settings is refused with an error that lists the
	// differences. The file carries a SHA-256 checksum of its whole
	// content, and on resumption every field is checked: the step within
	// the epoch's steps, finite losses and times, the saved model, best
	// model, optimizer and objective (stream) states against the model,
	// and the history against itself, with the schedule replayed over its
	// validation scores (so an Optimizer's SetLearningRate must keep the
	// rate it is given exactly). A damaged or inconsistent checkpoint is
	// an error wrapping ErrBadCheckpoint that names the file. Checkpoints
	// of the format before the checksum (version 2) are still resumed,
	// checked field by field. Settings keys that a checkpoint lacks (added
	// to a program after it was written) are not compared with it, and a
	// checkpoint of lower bound 0 resumes a run without a bound
	// (WithoutLowerBound), its records then marked NoLowerBound: 0 is what
	// a program passed for data of no known bound before it could say so.
	Checkpoint string
	// CheckpointEvery, when positive, also checkpoints within an epoch
	// once this much time has passed since the last checkpoint; 0 only
	// checkpoints after every epoch, and a negative interval is an error.
	CheckpointEvery time.Duration
	// Settings are further settings of the run (the task, the data
	// files, the seed, …) that a resumed run must share with the
	// checkpoint; they are saved in it under "settings." and the key.
	Settings map[string]string
	// Recorder, when set, receives the training events; an error from it
	// stops training (ErrStop stops it cleanly, as if the process had been
	// killed right after the latest checkpoint).
	Recorder Recorder
}

func (c *TrainConfig) defaults(m *Model) error {
	if c.Optimizer == nil {
		if err := CheckLearningRate(c.LR); err != nil {
			return err
		}
		c.Optimizer = NewAdam(c.LR, m.paramSizes())
	} else if err := CheckLearningRate(c.Optimizer.LearningRate()); err != nil {
		return err
	} else if pc, ok := c.Optimizer.(ParamChecker); ok {
		if err := pc.CheckParams(m.paramSizes()); err != nil {
			return err
		}
	}
	if math.IsNaN(c.LowerBound) || math.IsInf(c.LowerBound, 0) {
		return fmt.Errorf("nsrnn: lower bound %g must be finite", c.LowerBound)
	}
	if c.NoLowerBound && c.LowerBound != 0 {
		return fmt.Errorf("nsrnn: lower bound %g given with NoLowerBound", c.LowerBound)
	}
	if c.CheckpointEvery < 0 {
		return fmt.Errorf("nsrnn: checkpoint interval %v must not be negative (0: only after every epoch)", c.CheckpointEvery)
	}
	if math.IsNaN(c.Clip) || math.IsInf(c.Clip, 0) {
		return fmt.Errorf("nsrnn: clipping threshold %g must be finite", c.Clip)
	}
	if c.Clip == 0 {
		c.Clip = 5
	}
	if c.Schedule == nil {
		c.Schedule = CFLPlateau
	}
	if v := reflect.ValueOf(c.Schedule); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("nsrnn: the schedule is a nil %T: give a value (CFLPlateau, a Plateau), or nil for CFLPlateau", c.Schedule)
	}
	if err := c.Schedule.Check(); err != nil {
		return err
	}
	if c.EarlyStop == 0 {
		c.EarlyStop = 10
	}
	if c.MaxEpochs == 0 {
		c.MaxEpochs = 200
	}
	if c.EarlyStop < 0 {
		return fmt.Errorf("nsrnn: TrainConfig.EarlyStop %d must not be negative", c.EarlyStop)
	}
	if c.MaxEpochs < 0 {
		return fmt.Errorf("nsrnn: TrainConfig.MaxEpochs %d must not be negative", c.MaxEpochs)
	}
	return nil
}

// EpochRecord is one line of the training log.
type EpochRecord struct {
	// Epoch counts from 1. TrainLoss is the epoch's mean training loss
	// per unit of the objective's weights (nats per symbol for
	// SentenceObjective, per token for StreamObjective);
	// ValidCrossEntropy is the validation score after the epoch.
	Epoch             int     `json:"epoch"`
	TrainLoss         float64 `json:"train_loss"`
	ValidCrossEntropy float64 `json:"valid_cross_entropy"`
	// LowerBound is TrainConfig.LowerBound, and ValidDifference
	// ValidCrossEntropy − LowerBound.
	LowerBound      float64 `json:"lower_bound"`
	ValidDifference float64 `json:"valid_cross_entropy_diff"`
	// LearningRate is the rate the epoch trained with (a decay that the
	// epoch's score brings applies from the next one).
	LearningRate float64 `json:"learning_rate"`
	// ElapsedSeconds is the training time of the run up to the end of
	// the epoch, over every part of a resumed run; EpochSeconds the
	// epoch's own, its validation included.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	EpochSeconds   float64 `json:"epoch_seconds"`
	// Improved says that the schedule judged the score an improvement on
	// the best so far (Schedule.Improves): the epoch's parameters became
	// the best ones, and the epochs without improvement that early
	// stopping counts start again.
	Improved bool `json:"improved"`
	// NoLowerBound marks the record of a run without a lower bound
	// (TrainConfig.NoLowerBound): LowerBound and ValidDifference are 0
	// and mean nothing, and the JSON form leaves them out.
	NoLowerBound bool `json:"no_lower_bound,omitempty"`
}

// epochRecordJSON has EpochRecord's fields without its methods.
type epochRecordJSON EpochRecord

// MarshalJSON writes the record, without "lower_bound" and
// "valid_cross_entropy_diff" when it has NoLowerBound.
func (r EpochRecord) MarshalJSON() ([]byte, error) {
	if !r.NoLowerBound {
		return json.Marshal(epochRecordJSON(r))
	}
	return boundjson.Marshal(epochRecordJSON(r), []string{"lower_bound", "valid_cross_entropy_diff"}, nil)
}

// TrainResult summarizes a training run.
type TrainResult struct {
	// Epochs is the number of epochs done; BestEpoch the one whose
	// parameters the model holds at the end (the last that Improved),
	// with its validation score, BestValidCrossEntropy, and that score
	// less the lower bound, BestValidDifference.
	Epochs                int
	BestEpoch             int
	BestValidCrossEntropy float64
	LowerBound            float64
	BestValidDifference   float64
	// NoLowerBound is TrainConfig.NoLowerBound: LowerBound and
	// BestValidDifference are 0 and mean nothing.
	NoLowerBound bool
	// ElapsedSeconds is the training time over every part of a resumed
	// run.
	ElapsedSeconds float64
	// Finished is false when a Recorder stopped the run with ErrStop.
	Finished bool
	History  []EpochRecord
}

// EventKind tells what happened in training.
type EventKind int

const (
	// Started: training starts or resumes (Resumed), before the first step.
	Started EventKind = iota
	// StepDone: a gradient step was taken.
	StepDone
	// EpochDone: an epoch ended, was validated and checkpointed; Record
	// holds its record and History every record so far.
	EpochDone
	// Checkpointed: a checkpoint was written within an epoch.
	Checkpointed
	// Finished: training ended (early stop or MaxEpochs); the model holds
	// the best parameters.
	Finished
)

// Event is what a Recorder receives.
type Event struct {
	Kind EventKind
	// Epoch is the current epoch (1-based); Step the steps done in it out
	// of Steps.
	Epoch, Step, Steps int
	// MaxEpochs is the configured bound on epochs.
	MaxEpochs int
	// Loss is the epoch's mean training loss so far.
	Loss float64
	// LearningRate is the current learning rate.
	LearningRate float64
	// Resumed is set on Started when the run continues a checkpoint.
	Resumed bool
	// Record is the epoch's record (EpochDone).
	Record *EpochRecord
	// History is every epoch record so far (EpochDone, Finished).
	History []EpochRecord
}

// Recorder receives training events, as gonum's optimize.Recorder does:
// progress bars, logs and early interruption are recorders.
type Recorder interface {
	Record(Event) error
}

// RecorderFunc is a function that is a Recorder; it must not be nil.
type RecorderFunc func(Event) error

// Record calls f.
func (f RecorderFunc) Record(e Event) error { return f(e) }

// Recorders combines recorders; each event goes to each in turn.
type Recorders []Recorder

// Record implements Recorder.
func (rs Recorders) Record(e Event) error {
	for _, r := range rs {
		if r == nil {
			continue
		}
		if err := r.Record(e); err != nil {
			return err
		}
	}
	return nil
}

// ErrStop, returned by a Recorder, stops training cleanly: Fit returns the
// result so far with Finished false, and a later Fit resumes from the
// checkpoint.
var ErrStop = errors.New("nsrnn: training stopped")

// ErrStopAfterCheckpoint, returned by a Recorder for a StepDone event
// within an epoch, stops training as ErrStop does after writing a
// checkpoint (when TrainConfig.Checkpoint is set) of the state after that
// step, so that a resumed run loses nothing. For another event, or after
// an epoch's last step (whose checkpoint follows validation), it is
// ErrStop, which it wraps.
var ErrStopAfterCheckpoint = fmt.Errorf("%w after a checkpoint", ErrStop)

// JSONLog returns a Recorder that writes the training log to path, one
// JSON EpochRecord per line, rewritten atomically after every epoch from
// the history the checkpoint holds, so that the two always agree.
func JSONLog(path string) Recorder {
	return RecorderFunc(func(e Event) error {
		if e.Kind != EpochDone && e.Kind != Finished {
			return nil
		}
		return writeLog(path, e.History)
	})
}

// TextLog returns a Recorder that writes training's progress to w as
// text, one line per event: where training starts or resumes, a line per
// epoch (training loss, validation score and, where there is a lower
// bound, the difference from it, the learning rate, the time, and "best
// so far"), a line within an epoch every `every` steps (0: none), and
// the end. It is what Train prints nothing without:
//
//	cfg := nsrnn.TrainConfig{LR: 0.005, Recorder: nsrnn.TextLog(os.Stderr, 0)}
//
// A write error stops training with that error. A nil w is a programmer
// error: TextLog panics.
func TextLog(w io.Writer, every int) Recorder {
	if w == nil {
		panic("nsrnn: TextLog to a nil writer")
	}
	return RecorderFunc(func(e Event) error {
		var err error
		switch e.Kind {
		case Started:
			how := "starts"
			if e.Resumed {
				how = fmt.Sprintf("resumes in epoch %d after step %d of %d", e.Epoch, e.Step, e.Steps)
			}
			_, err = fmt.Fprintf(w, "training %s: at most %d epochs of %d steps, learning rate %g\n", how, e.MaxEpochs, e.Steps, e.LearningRate)
		case StepDone:
			if every > 0 && e.Step%every == 0 && e.Step < e.Steps {
				_, err = fmt.Fprintf(w, "epoch %d: step %d of %d, training loss %s\n", e.Epoch, e.Step, e.Steps, score4(e.Loss))
			}
		case EpochDone:
			r := e.Record
			diff := ""
			if !r.NoLowerBound {
				diff = fmt.Sprintf(" (%s above the lower bound)", score4(r.ValidDifference))
			}
			best := ""
			if r.Improved {
				best = "; best so far"
			}
			_, err = fmt.Fprintf(w, "epoch %d of at most %d: training loss %s, validation %s%s; lr %g; %.1fs%s\n",
				r.Epoch, e.MaxEpochs, score4(r.TrainLoss), score4(r.ValidCrossEntropy), diff, r.LearningRate, r.ElapsedSeconds, best)
		case Finished:
			bestEpoch, best := 0, math.Inf(1)
			for _, r := range e.History {
				if r.Improved {
					bestEpoch, best = r.Epoch, r.ValidCrossEntropy
				}
			}
			_, err = fmt.Fprintf(w, "training finished after %d epochs: the best validation score %s, epoch %d, whose parameters the model now holds\n",
				len(e.History), score4(best), bestEpoch)
		}
		return err
	})
}

func (m *Model) paramSizes() []int {
	sizes := make([]int, len(m.params))
	for i, p := range m.params {
		sizes[i] = p.Size()
	}
	return sizes
}

// settings describes the run for the checkpoint's resume check.
func (c *TrainConfig) settings(m *Model, obj Objective) map[string]string {
	cfg, _ := json.Marshal(m.cfg)
	s := map[string]string{
		"model":       string(cfg),
		"optimizer":   c.Optimizer.Name(),
		"clip":        fmt.Sprint(c.Clip),
		"schedule":    scheduleSetting(c.Schedule),
		"early_stop":  fmt.Sprint(c.EarlyStop),
		"seed":        fmt.Sprint(c.Seed),
		"lower_bound": lowerBoundSetting(c),
		"steps":       fmt.Sprint(obj.Steps()),
	}
	for k, v := range c.Settings {
		s["settings."+k] = v
	}
	return s
}

// lowerBoundSetting is the checkpoint's setting of the lower bound:
// "none" for NoLowerBound.
func lowerBoundSetting(c *TrainConfig) string {
	if c.NoLowerBound {
		return "none"
	}
	return fmt.Sprint(c.LowerBound)
}

// difference returns ce − the lower bound, 0 without one.
func (c *TrainConfig) difference(ce float64) float64 {
	if c.NoLowerBound {
		return 0
	}
	return ce - c.LowerBound
}

// CrossEntropy returns the model's per-symbol cross-entropy over batches,
// in nats: the total −log p of every symbol and EOS divided by their count.
func (m *Model) CrossEntropy(batches []Batch) (float64, error) {
	total, count := 0.0, 0
	for _, b := range batches {
		loss, err := m.Loss(b)
		if err != nil {
			return 0, err
		}
		total += loss * float64(len(b))
		count += len(b) * (len(b[0]) + 1)
	}
	if count == 0 {
		return 0, errors.New("nsrnn: cross-entropy of an empty set")
	}
	return total / float64(count), nil
}

// sentences is the formal-language objective: shuffled batches of whole
// strings, validated by per-symbol cross-entropy.
type sentences struct {
	m            *Model
	train, valid []Batch
	seed         uint64
	epoch        int
	order        []int
}

func (s *sentences) Steps() int { return len(s.train) }

func (s *sentences) Gradient(e, i int) (float64, float64, [][]float64, error) {
	b := s.batch(e, i)
	loss, grads, err := s.m.Gradient(b)
	if err != nil {
		return 0, 0, nil, err
	}
	// The gradient is of the per-sequence loss (the protocol); the
	// reported loss is per symbol, the unit of the validation score.
	symbols := float64(len(b[0]) + 1)
	return loss / symbols, float64(len(b)) * symbols, grads, nil
}

func (s *sentences) deviceGradient(e, i int) (float64, float64, error) {
	b := s.batch(e, i)
	if err := s.m.check(b); err != nil {
		return 0, 0, err
	}
	if err := s.m.acquire(); err != nil {
		return 0, 0, err
	}
	r, err := s.m.engine().sentence(b, pass{grad: true})
	s.m.release()
	if err != nil {
		return 0, 0, err
	}
	symbols := float64(len(b[0]) + 1)
	return r.loss / symbols, float64(len(b)) * symbols, nil
}

// batch returns step i's batch of epoch e.
func (s *sentences) batch(e, i int) Batch {
	if e != s.epoch || s.order == nil {
		s.order = rand.New(rand.NewPCG(s.seed, uint64(e))).Perm(len(s.train))
		s.epoch = e
	}
	return s.train[s.order[i]]
}

func (s *sentences) Validate() (float64, error) { return s.m.CrossEntropy(s.valid) }

// SentenceObjective is the formal-language objective: each epoch visits the
// training batches in an order drawn from seed and the epoch, with one
// gradient step per batch (of the per-sequence loss averaged over the
// batch); validation is the per-symbol cross-entropy on valid. The epoch's
// training loss is reported in the same unit, nats per symbol.
func SentenceObjective(m *Model, train, valid []Batch, seed uint64) (Objective, error) {
	if m == nil {
		return nil, errors.New("nsrnn: SentenceObjective needs a model")
	}
	if len(train) == 0 || len(valid) == 0 {
		return nil, errors.New("nsrnn: training needs training and validation batches")
	}
	// Every batch is checked now, before a step changes the model: a bad
	// one found in the middle of training (or a bad validation batch
	// after the first epoch) would leave the model half trained, and the
	// shuffled step would not say which batch it was.
	s := &sentences{m: m, train: train, valid: valid, seed: seed}
	if err := s.eachBatch(m.check); err != nil {
		return nil, err
	}
	if err := s.checkSizes(); err != nil {
		return nil, err
	}
	return s, nil
}

// eachBatch calls check on every training and validation batch and
// returns the first error, naming the set and the batch.
func (s *sentences) eachBatch(check func(b [][]int) error) error {
	for _, set := range []struct {
		name    string
		batches []Batch
	}{{"training", s.train}, {"validation", s.valid}} {
		for i, b := range set.batches {
			if err := check(b); err != nil {
				return &prefixedError{fmt.Sprintf("nsrnn: %s batch %d (of %d): ", set.name, i, len(set.batches)), err}
			}
		}
	}
	return nil
}

// checkSizes applies the memory rules (CheckBatch) to every batch, split
// as the model's Workers split it now: SentenceObjective checks them when
// it is made, and Fit again, since Workers may have changed since.
func (s *sentences) checkSizes() error {
	return s.eachBatch(func(b [][]int) error { return s.m.CheckBatch(s.m.LargestPart(len(b)), len(b[0])) })
}

// model is the model whose gradients the objective computes (Fit
// refuses another).
func (s *sentences) model() *Model { return s.m }

// Train trains m on the training batches with the formal-language
// protocol: SentenceObjective with cfg.Seed, whose validation score has
// the lower bound cfg.LowerBound (or none, with cfg.NoLowerBound;
// WithLowerBound, WithoutLowerBound), then Fit.
func Train(m *Model, train, valid []Batch, cfg TrainConfig) (*TrainResult, error) {
	if m == nil {
		return nil, errors.New("nsrnn: Train needs a model")
	}
	obj, err := SentenceObjective(m, train, valid, cfg.Seed)
	if err != nil {
		return nil, err
	}
	if cfg.NoLowerBound {
		if cfg.LowerBound != 0 {
			return nil, fmt.Errorf("nsrnn: lower bound %g given with NoLowerBound", cfg.LowerBound)
		}
		obj = WithoutLowerBound(obj)
	} else {
		obj = WithLowerBound(obj, cfg.LowerBound)
	}
	cfg.LowerBound, cfg.NoLowerBound = 0, false
	return Fit(m, obj, cfg)
}

// Bounded is an Objective whose validation score (a cross-entropy) has a
// known lower bound, such as the true entropy of the data of a task with
// a known distribution, or is known to have none (data of no known
// distribution). Fit then reports, per epoch, the difference of the
// score from the bound (EpochRecord.ValidDifference), or marks the records
// NoLowerBound. WithLowerBound and WithoutLowerBound make one from any
// objective: the bound belongs to the evaluation, not to the trainer.
type Bounded interface {
	Objective
	// LowerBound returns the bound and true, or 0 and false where the
	// score has none.
	LowerBound() (bound float64, known bool)
}

// boundedObjective wraps an objective with the bound of its score.
type boundedObjective struct {
	Objective
	bound float64
	known bool
}

func (b *boundedObjective) LowerBound() (float64, bool) { return b.bound, b.known }

// Unwrap returns the objective wrapped: Fit finds through it what the
// objective can do (carry a state, stay on a device).
func (b *boundedObjective) Unwrap() Objective { return b.Objective }

// WithLowerBound returns obj, whose validation score has the lower bound
// bound (finite; Fit refuses another).
func WithLowerBound(obj Objective, bound float64) Bounded {
	return &boundedObjective{Objective: obj, bound: bound, known: true}
}

// WithoutLowerBound returns obj, whose validation score has no known lower
// bound: Fit marks its records NoLowerBound.
func WithoutLowerBound(obj Objective) Bounded { return &boundedObjective{Objective: obj} }

// unwrapObjective returns the objective that obj wraps (Unwrap), all the
// way in.
func unwrapObjective(obj Objective) Objective {
	for {
		u, ok := obj.(interface{ Unwrap() Objective })
		if !ok {
			return obj
		}
		obj = u.Unwrap()
	}
}

// boundOf returns the bound of the first Bounded objective on the chain
// of obj's wrappers.
func boundOf(obj Objective) (Bounded, bool) {
	for {
		if b, ok := obj.(Bounded); ok {
			return b, true
		}
		u, ok := obj.(interface{ Unwrap() Objective })
		if !ok {
			return nil, false
		}
		obj = u.Unwrap()
	}
}

// Fit trains m on obj: each step's gradient is clipped by global norm and
// applied by the optimizer; after each epoch the model is validated, the
// schedule adjusts the learning rate, the best parameters so far are kept,
// and training stops early after cfg.EarlyStop epochs without
// improvement, or after cfg.MaxEpochs. The model ends with the best
// parameters. With a Checkpoint, Fit resumes from that file when it exists
// and reaches exactly the result of an uninterrupted run.
func Fit(m *Model, obj Objective, cfg TrainConfig) (*TrainResult, error) {
	t, err := newTrainer(m, obj, cfg)
	if err != nil {
		return nil, err
	}
	if !t.done() {
		if err := t.rec.Record(t.event(Started)); err != nil {
			return t.stop(err)
		}
	}
	for !t.done() {
		if err := t.trainEpoch(); err != nil {
			return t.stop(err)
		}
		if err := t.endEpoch(); err != nil {
			return t.stop(err)
		}
	}
	return t.finish()
}

// trainer is one call of Fit: the model, objective and protocol, and the
// state a checkpoint saves.
type trainer struct {
	m        *Model
	obj      Objective
	cfg      TrainConfig
	rec      Recorder
	st       *trainState
	steps    int
	resumed  bool
	lastSave time.Time // of the latest checkpoint
	start    time.Time // of the epoch's time not yet added to st.EpochTime
}

// newTrainer checks the protocol and loads the checkpoint, if any.
func newTrainer(m *Model, obj Objective, cfg TrainConfig) (*trainer, error) {
	if m == nil || obj == nil || unwrapObjective(obj) == nil {
		return nil, errors.New("nsrnn: Fit needs a model and an objective")
	}
	m.mustBeMade()
	if err := m.cfg.CheckTraining(); err != nil {
		return nil, err
	}
	// The library's objectives compute the gradients of one model: Fit
	// would otherwise update m with another's.
	if o, ok := unwrapObjective(obj).(interface{ model() *Model }); ok && o.model() != m {
		return nil, errors.New("nsrnn: Fit: the objective was made for another model (SentenceObjective or StreamObjective of a different Model): its gradients are not m's")
	}
	if s, ok := unwrapObjective(obj).(*sentences); ok {
		if err := s.checkSizes(); err != nil {
			return nil, err
		}
	}
	if b, ok := boundOf(obj); ok {
		if cfg.LowerBound != 0 || cfg.NoLowerBound {
			return nil, errors.New("nsrnn: a lower bound given both by the objective (Bounded) and by TrainConfig")
		}
		bound, known := b.LowerBound()
		cfg.LowerBound, cfg.NoLowerBound = bound, !known
	}
	if err := cfg.defaults(m); err != nil {
		return nil, err
	}
	if obj.Steps() < 1 {
		return nil, errors.New("nsrnn: the objective has no training steps")
	}
	settings := cfg.settings(m, obj)
	t := &trainer{m: m, obj: obj, cfg: cfg, rec: cfg.Recorder, steps: obj.Steps(), lastSave: time.Now(),
		st: &trainState{Version: checkpointVersion, BestValid: math.Inf(1), Settings: settings}}
	if t.rec == nil {
		t.rec = Recorders(nil)
	}
	if cfg.Checkpoint != "" {
		loaded, err := loadCheckpoint(cfg.Checkpoint, m, settings, &t.cfg, t.cfg.Optimizer, obj)
		switch {
		case err == nil:
			t.st, t.resumed = loaded, true
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("nsrnn: checkpoint: %w", err)
		}
		// A checkpoint that cannot be written is said now, not after
		// the first epoch's steps (hours, for a language model).
		if err := atomicfile.CheckWritable(cfg.Checkpoint); err != nil {
			return nil, fmt.Errorf("nsrnn: checkpoint: %w", err)
		}
	}
	if t.st.Best == nil {
		var err error
		if t.st.Best, err = m.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// done reports whether training has ended: stopped early or at the last
// epoch.
func (t *trainer) done() bool { return t.st.Done || t.st.Epoch >= t.cfg.MaxEpochs }

// event is an event of kind k at the current step, with the epoch's mean
// loss so far.
func (t *trainer) event(k EventKind) Event {
	st, loss := t.st, 0.0
	if st.WeightSum > 0 {
		loss = st.LossSum / st.WeightSum
	}
	return Event{Kind: k, Epoch: st.Epoch + 1, Step: st.Step, Steps: t.steps, MaxEpochs: t.cfg.MaxEpochs,
		Loss: loss, LearningRate: t.cfg.Optimizer.LearningRate(), Resumed: t.resumed, History: st.History}
}

// stop ends Fit on err: a Recorder's ErrStop returns the unfinished
// result, anything else the error.
func (t *trainer) stop(err error) (*TrainResult, error) {
	if errors.Is(err, ErrStop) {
		return result(t.st, t.cfg, false), nil
	}
	return nil, err
}

// trainEpoch runs the remaining gradient steps of the current epoch,
// checkpointing every cfg.CheckpointEvery.
func (t *trainer) trainEpoch() error {
	st, epoch := t.st, t.st.Epoch+1
	t.start = time.Now()
	for st.Step < t.steps {
		loss, weight, err := t.step(epoch)
		if err != nil {
			return err
		}
		st.LossSum += loss * weight
		st.WeightSum += weight
		st.Step++
		if err := t.rec.Record(t.event(StepDone)); err != nil {
			if errors.Is(err, ErrStopAfterCheckpoint) && t.cfg.Checkpoint != "" && st.Step < t.steps {
				st.EpochTime += time.Since(t.start).Seconds()
				if err := t.checkpoint(); err != nil {
					return err
				}
			}
			return err
		}
		if t.cfg.Checkpoint != "" && t.cfg.CheckpointEvery > 0 && st.Step < t.steps && time.Since(t.lastSave) >= t.cfg.CheckpointEvery {
			st.EpochTime += time.Since(t.start).Seconds()
			t.start = time.Now()
			if err := t.checkpoint(); err != nil {
				return err
			}
			if err := t.rec.Record(t.event(Checkpointed)); err != nil {
				return err
			}
		}
	}
	return nil
}

// step takes one gradient step: the objective's gradient, clipped and
// applied by the optimizer. On a device the gradient of the library's own
// objectives stays there and the update runs there too.
func (t *trainer) step(epoch int) (loss, weight float64, err error) {
	st := t.st
	de, onDevice := t.m.eng.(deviceEngine)
	ds, deviceObj := unwrapObjective(t.obj).(deviceObjective)
	var grads [][]float64
	if onDevice && deviceObj {
		loss, weight, err = ds.deviceGradient(epoch, st.Step)
	} else {
		loss, weight, grads, err = t.obj.Gradient(epoch, st.Step)
	}
	if err != nil {
		return 0, 0, &prefixedError{fmt.Sprintf("nsrnn: epoch %d step %d: ", epoch, st.Step+1), err}
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, 0, fmt.Errorf("nsrnn: epoch %d step %d of %d: the loss is %g (training diverged; try a smaller learning rate)", epoch, st.Step+1, t.steps, loss)
	}
	if !(weight >= 0) || math.IsInf(weight, 0) {
		return 0, 0, fmt.Errorf("nsrnn: epoch %d step %d of %d: the objective's weight %g: want a finite weight ≥ 0", epoch, st.Step+1, t.steps, weight)
	}
	if onDevice && deviceObj {
		var ok bool
		t.m.writeParams(func() { ok, err = de.update(t.cfg.Optimizer, t.cfg.Clip) })
		if err != nil {
			return 0, 0, &prefixedError{fmt.Sprintf("nsrnn: epoch %d step %d: ", epoch, st.Step+1), err}
		}
		if ok {
			return loss, weight, nil
		}
		// An optimizer without a device implementation: the gradients
		// come to the host.
		if grads, err = de.hostGrads(); err != nil {
			return 0, 0, &prefixedError{fmt.Sprintf("nsrnn: epoch %d step %d: ", epoch, st.Step+1), err}
		}
	}
	if err := checkGradSizes(grads, t.m.params); err != nil {
		return 0, 0, fmt.Errorf("nsrnn: epoch %d step %d: the objective's gradient: %w", epoch, st.Step+1, err)
	}
	// The update holds the model, as a computation does, so that another
	// goroutine's computation or MarshalBinary sees the parameters of one
	// step, not a mixture.
	t.m.writeParams(func() {
		if onDevice {
			err = t.m.syncHost()
		}
		if err != nil {
			return
		}
		if norm := ClipGradNorm(grads, t.cfg.Clip); math.IsNaN(norm) || math.IsInf(norm, 0) {
			// Refused before the update, which would make every
			// parameter it touches NaN.
			err = fmt.Errorf("nsrnn: epoch %d step %d of %d: the gradient's norm is %g (training diverged: try a smaller learning rate; or the objective's gradient is not finite)", epoch, st.Step+1, t.steps, norm)
			return
		}
		t.cfg.Optimizer.Update(t.m.params, grads)
		t.m.paramsChanged()
	})
	if err != nil {
		return 0, 0, err
	}
	return loss, weight, nil
}

// deviceObjective is an objective whose gradient can stay on the model's
// device (the library's sentence and stream objectives).
type deviceObjective interface {
	deviceGradient(e, i int) (loss, weight float64, err error)
}

// checkpoint writes the checkpoint file.
func (t *trainer) checkpoint() error {
	if err := saveCheckpoint(t.cfg.Checkpoint, t.m, t.cfg.Optimizer, t.obj, t.st); err != nil {
		return fmt.Errorf("nsrnn: checkpoint: %w", err)
	}
	t.lastSave = time.Now()
	return nil
}

// scheduleState is where the schedule stands after some epochs: the best
// score and its epoch, the epochs without improvement since, and the
// learning rate of the next epoch.
//
// For a RateSchedule, rateBest and rateBad are the best score and the
// epochs without improvement by its RateImproves; a state made from a
// checkpoint's counters gets them from its history (rateState).
type scheduleState struct {
	best           float64
	bestEpoch, bad int
	lr             float64

	rateBest float64
	rateBad  int
}

// rateState replays a RateSchedule's rule over the validation scores of a
// history: the best score by RateImproves and the consecutive epochs
// without improvement by it at the end. Other schedules give +Inf, 0.
func rateState(sched Schedule, history []EpochRecord) (best float64, bad int) {
	best = math.Inf(1)
	rs, ok := sched.(RateSchedule)
	if !ok {
		return best, 0
	}
	for _, r := range history {
		if rs.RateImproves(r.ValidCrossEntropy, best) {
			best, bad = r.ValidCrossEntropy, 0
		} else {
			bad++
		}
	}
	return best, bad
}

// advance judges the score of epoch (1-based) and moves the state past
// it: the one place where a schedule advances, for the trainer and for
// the replay of a checkpoint's history alike. It reports whether the
// epoch improved.
func (s *scheduleState) advance(sched Schedule, epoch int, score float64) bool {
	improved := sched.Improves(score, s.best)
	if improved {
		s.best, s.bestEpoch, s.bad = score, epoch, 0
	} else {
		s.bad++
	}
	bad := s.bad
	if rs, ok := sched.(RateSchedule); ok {
		if rs.RateImproves(score, s.rateBest) {
			s.rateBest, s.rateBad = score, 0
		} else {
			s.rateBad++
		}
		bad = s.rateBad
	}
	s.lr = sched.Next(s.lr, epoch, bad)
	return improved
}

// endEpoch validates the model after the epoch's last step, lets the
// schedule judge the score (keeping the best parameters, decaying the
// learning rate, stopping early), records the epoch and checkpoints.
func (t *trainer) endEpoch() error {
	st, cfg, epoch := t.st, t.cfg, t.st.Epoch+1
	ce, err := t.obj.Validate()
	if err != nil {
		return err
	}
	if math.IsNaN(ce) || math.IsInf(ce, 0) {
		return fmt.Errorf("nsrnn: epoch %d: the validation score is %g", epoch, ce)
	}
	if !(st.WeightSum > 0) {
		return fmt.Errorf("nsrnn: epoch %d: its %d steps have a total weight of 0 (no targets to train on)", epoch, t.steps)
	}
	r := EpochRecord{
		Epoch: epoch, TrainLoss: st.LossSum / st.WeightSum, ValidCrossEntropy: ce,
		LowerBound: cfg.LowerBound, ValidDifference: cfg.difference(ce), NoLowerBound: cfg.NoLowerBound,
		LearningRate: cfg.Optimizer.LearningRate(),
	}
	sched := scheduleState{best: st.BestValid, bestEpoch: st.BestEpoch, bad: st.Bad, lr: cfg.Optimizer.LearningRate()}
	sched.rateBest, sched.rateBad = rateState(cfg.Schedule, st.History)
	r.Improved = sched.advance(cfg.Schedule, epoch, ce)
	st.BestValid, st.BestEpoch, st.Bad = sched.best, sched.bestEpoch, sched.bad
	cfg.Optimizer.SetLearningRate(sched.lr)
	if r.Improved {
		if st.Best, err = t.m.MarshalBinary(); err != nil {
			return err
		}
	} else if st.Bad >= cfg.EarlyStop {
		st.Done = true
	}
	st.Epoch, st.Step, st.LossSum, st.WeightSum = epoch, 0, 0, 0
	r.EpochSeconds = st.EpochTime + time.Since(t.start).Seconds()
	st.EpochTime = 0
	st.Elapsed += r.EpochSeconds
	r.ElapsedSeconds = st.Elapsed
	st.History = append(st.History, r)
	if cfg.Checkpoint != "" {
		if err := t.checkpoint(); err != nil {
			return err
		}
	}
	e := t.event(EpochDone)
	e.Epoch, e.Step, e.Record = epoch, t.steps, &r
	e.Loss = r.TrainLoss
	return t.rec.Record(e)
}

// finish restores the best parameters into the model and records the end.
func (t *trainer) finish() (*TrainResult, error) {
	best, err := UnmarshalModel(t.st.Best)
	if err != nil {
		return nil, err
	}
	t.m.writeParams(func() {
		if err = t.m.syncHost(); err == nil {
			for i, p := range t.m.params {
				copy(p.Data(), best.params[i].Data())
			}
			t.m.paramsChanged()
		}
	})
	if err != nil {
		return nil, err
	}
	e := t.event(Finished)
	e.Epoch = t.st.Epoch
	if err := t.rec.Record(e); err != nil && !errors.Is(err, ErrStop) {
		return nil, err
	}
	return result(t.st, t.cfg, true), nil
}

func result(st *trainState, cfg TrainConfig, finished bool) *TrainResult {
	return &TrainResult{
		Epochs: st.Epoch, BestEpoch: st.BestEpoch, BestValidCrossEntropy: st.BestValid,
		LowerBound: cfg.LowerBound, BestValidDifference: cfg.difference(st.BestValid), NoLowerBound: cfg.NoLowerBound,
		ElapsedSeconds: st.Elapsed, Finished: finished, History: st.History,
	}
}

// writeLog writes the JSON-lines log of the epochs so far.
func writeLog(path string, history []EpochRecord) error {
	if path == "" {
		return nil
	}
	err := atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, r := range history {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("nsrnn: writing the training log: %w", err)
	}
	return nil
}

// checkGradSizes returns an error unless grads holds one slice per
// parameter, of the parameter's size.
func checkGradSizes(grads [][]float64, params []*Param) error {
	if len(grads) != len(params) {
		return fmt.Errorf("%d slices for %d parameters", len(grads), len(params))
	}
	for i, p := range params {
		if len(grads[i]) != p.Size() {
			return fmt.Errorf("%d values for parameter %s of %d", len(grads[i]), p.Name, p.Size())
		}
	}
	return nil
}

// score4 formats a loss or score for TextLog: four decimals, or four
// significant digits where those would be many digits long (a diverging
// run's losses).
func score4(v float64) string {
	if math.Abs(v) < 1e6 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprintf("%.4f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// prefixedError is an error whose message is its prefix ("nsrnn: epoch E
// step S: ", say) and then the cause's message without the cause's own
// "nsrnn: "; it unwraps to the cause.
type prefixedError struct {
	prefix string
	err    error
}

func (e *prefixedError) Error() string {
	return e.prefix + strings.TrimPrefix(e.err.Error(), "nsrnn: ")
}
func (e *prefixedError) Unwrap() error { return e.err }
