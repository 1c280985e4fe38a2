package nsrnn

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
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

func (p Plateau) improves(score, best float64) bool {
	if math.IsInf(best, 1) {
		return !math.IsNaN(score)
	}
	return best-score > p.Threshold*math.Abs(best)
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
	// Schedule is the learning-rate schedule; nil is CFLPlateau.
	Schedule *Plateau
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
	// per symbol; the records report the difference from it.
	LowerBound float64
	// Checkpoint, when set, is the file written atomically after every
	// epoch (and every CheckpointEvery within one); Fit resumes from it.
	// A checkpoint made with another configuration, seed, optimizer or
	// data size is refused with an error that lists the differences.
	Checkpoint string
	// CheckpointEvery, when positive, also checkpoints within an epoch
	// once this much time has passed since the last checkpoint.
	CheckpointEvery time.Duration
	// Settings are further settings of the run (the task, the data
	// files, …) that a resumed run must share with the checkpoint.
	Settings map[string]string
	// Recorder, when set, receives the training events; an error from it
	// stops training (ErrStop stops it cleanly, as if the process had been
	// killed right after the latest checkpoint).
	Recorder Recorder
}

func (c *TrainConfig) defaults(m *Model) error {
	if c.Optimizer == nil {
		if !(c.LR > 0) || math.IsInf(c.LR, 0) {
			return fmt.Errorf("nsrnn: learning rate %g must be positive and finite", c.LR)
		}
		c.Optimizer = NewAdam(c.LR, m.paramSizes())
	} else if lr := c.Optimizer.LearningRate(); !(lr > 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("nsrnn: learning rate %g must be positive and finite", lr)
	}
	if math.IsNaN(c.Clip) || math.IsInf(c.Clip, 0) {
		return fmt.Errorf("nsrnn: clipping threshold %g must be finite", c.Clip)
	}
	if c.Clip == 0 {
		c.Clip = 5
	}
	if c.Schedule == nil {
		p := CFLPlateau
		c.Schedule = &p
	}
	if s := c.Schedule; !(s.Factor > 0 && s.Factor <= 1) || s.Patience < 0 || !(s.Threshold >= 0 && s.Threshold < 1) {
		return fmt.Errorf("nsrnn: invalid schedule %+v (want 0 < factor ≤ 1, patience ≥ 0, 0 ≤ threshold < 1)", *s)
	}
	if c.EarlyStop == 0 {
		c.EarlyStop = 10
	}
	if c.MaxEpochs == 0 {
		c.MaxEpochs = 200
	}
	if c.EarlyStop < 0 || c.MaxEpochs < 0 {
		return fmt.Errorf("nsrnn: early stop %d and max epochs %d must not be negative", c.EarlyStop, c.MaxEpochs)
	}
	return nil
}

// EpochRecord is one line of the training log.
type EpochRecord struct {
	// TrainLoss is the epoch's mean training loss per unit of the
	// objective's weights (nats per symbol for SentenceObjective, per
	// token for StreamObjective); ValidCrossEntropy is the validation
	// score after the epoch.
	Epoch             int     `json:"epoch"`
	TrainLoss         float64 `json:"train_loss"`
	ValidCrossEntropy float64 `json:"valid_cross_entropy"`
	LowerBound        float64 `json:"lower_bound"`
	ValidDifference   float64 `json:"valid_cross_entropy_diff"`
	LearningRate      float64 `json:"learning_rate"`
	ElapsedSeconds    float64 `json:"elapsed_seconds"`
	EpochSeconds      float64 `json:"epoch_seconds"`
	Improved          bool    `json:"improved"`
}

// TrainResult summarizes a training run.
type TrainResult struct {
	Epochs                int
	BestEpoch             int
	BestValidCrossEntropy float64
	LowerBound            float64
	BestValidDifference   float64
	ElapsedSeconds        float64
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

// RecorderFunc is a function that is a Recorder.
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

// trainState is everything a checkpoint holds.
type trainState struct {
	Version   int
	Settings  map[string]string
	Model     []byte
	Best      []byte
	Optimizer []byte
	Epoch     int // epochs completed
	Step      int // steps completed in epoch Epoch+1
	LossSum   float64
	WeightSum float64
	Objective []byte // the objective's state within the epoch
	BestEpoch int
	BestValid float64
	Bad       int
	Elapsed   float64
	EpochTime float64 // seconds spent in epoch Epoch+1 so far
	History   []EpochRecord
	// Done is set when training stopped early; reaching MaxEpochs is not
	// recorded, so that a resumed run may be given more epochs.
	Done bool
}

const checkpointVersion = 2

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
		"schedule":    fmt.Sprintf("%+v", *c.Schedule),
		"early_stop":  fmt.Sprint(c.EarlyStop),
		"seed":        fmt.Sprint(c.Seed),
		"lower_bound": fmt.Sprint(c.LowerBound),
		"steps":       fmt.Sprint(obj.Steps()),
	}
	for k, v := range c.Settings {
		s["settings."+k] = v
	}
	return s
}

func diffSettings(saved, now map[string]string) []string {
	var keys []string
	for k := range saved {
		keys = append(keys, k)
	}
	for k := range now {
		if _, ok := saved[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		a, okA := saved[k]
		b, okB := now[k]
		switch {
		case !okA:
			out = append(out, fmt.Sprintf("%s: not in the checkpoint, now %s", k, b))
		case !okB:
			out = append(out, fmt.Sprintf("%s: %s in the checkpoint, not set now", k, a))
		case a != b:
			out = append(out, fmt.Sprintf("%s: %s in the checkpoint, now %s", k, a, b))
		}
	}
	return out
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
	if e != s.epoch || s.order == nil {
		s.order = rand.New(rand.NewPCG(s.seed, uint64(e))).Perm(len(s.train))
		s.epoch = e
	}
	b := s.train[s.order[i]]
	loss, grads, err := s.m.Gradient(b)
	// The gradient is of the per-sequence loss (the protocol); the
	// reported loss is per symbol, the unit of the validation score.
	symbols := float64(len(b[0]) + 1)
	return loss / symbols, float64(len(b)) * symbols, grads, err
}

func (s *sentences) Validate() (float64, error) { return s.m.CrossEntropy(s.valid) }

// SentenceObjective is the formal-language objective: each epoch visits the
// training batches in an order drawn from seed and the epoch, with one
// gradient step per batch (of the per-sequence loss averaged over the
// batch); validation is the per-symbol cross-entropy on valid. The epoch's
// training loss is reported in the same unit, nats per symbol.
func SentenceObjective(m *Model, train, valid []Batch, seed uint64) (Objective, error) {
	if len(train) == 0 || len(valid) == 0 {
		return nil, errors.New("nsrnn: training needs training and validation batches")
	}
	return &sentences{m: m, train: train, valid: valid, seed: seed}, nil
}

// Train trains m on the training batches with the formal-language
// protocol (SentenceObjective with cfg.Seed, then Fit).
func Train(m *Model, train, valid []Batch, cfg TrainConfig) (*TrainResult, error) {
	obj, err := SentenceObjective(m, train, valid, cfg.Seed)
	if err != nil {
		return nil, err
	}
	return Fit(m, obj, cfg)
}

// Fit trains m on obj: each step's gradient is clipped by global norm and
// applied by the optimizer; after each epoch the model is validated, the
// schedule adjusts the learning rate, the best parameters so far are kept,
// and training stops early after cfg.EarlyStop epochs without
// improvement, or after cfg.MaxEpochs. The model ends with the best
// parameters. With a Checkpoint, Fit resumes from that file when it exists
// and reaches exactly the result of an uninterrupted run.
func Fit(m *Model, obj Objective, cfg TrainConfig) (*TrainResult, error) {
	if err := cfg.defaults(m); err != nil {
		return nil, err
	}
	if obj.Steps() < 1 {
		return nil, errors.New("nsrnn: the objective has no training steps")
	}
	settings := cfg.settings(m, obj)
	st := &trainState{Version: checkpointVersion, BestValid: math.Inf(1), Settings: settings}
	resumed := false
	if cfg.Checkpoint != "" {
		loaded, err := loadCheckpoint(cfg.Checkpoint, m, settings)
		switch {
		case err == nil:
			st, resumed = loaded, true
			if err := cfg.Optimizer.UnmarshalBinary(st.Optimizer); err != nil {
				return nil, fmt.Errorf("%s: optimizer state: %w", cfg.Checkpoint, err)
			}
			if st.Objective != nil {
				so, ok := obj.(StatefulObjective)
				if !ok {
					return nil, fmt.Errorf("%s: the checkpoint holds an objective state, the objective has none", cfg.Checkpoint)
				}
				if err := so.UnmarshalState(st.Objective); err != nil {
					return nil, fmt.Errorf("%s: %w", cfg.Checkpoint, err)
				}
			}
		case !errors.Is(err, os.ErrNotExist):
			return nil, err
		}
	}
	if st.Best == nil {
		var err error
		if st.Best, err = m.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	done := func() bool { return st.Done || st.Epoch >= cfg.MaxEpochs }
	rec := cfg.Recorder
	if rec == nil {
		rec = Recorders(nil)
	}
	steps := obj.Steps()
	ev := func(k EventKind) Event {
		loss := 0.0
		if st.WeightSum > 0 {
			loss = st.LossSum / st.WeightSum
		}
		return Event{Kind: k, Epoch: st.Epoch + 1, Step: st.Step, Steps: steps, MaxEpochs: cfg.MaxEpochs,
			Loss: loss, LearningRate: cfg.Optimizer.LearningRate(), Resumed: resumed, History: st.History}
	}
	stop := func(err error) (*TrainResult, error) {
		if errors.Is(err, ErrStop) {
			return result(st, cfg, false), nil
		}
		return nil, err
	}
	if !done() {
		if err := rec.Record(ev(Started)); err != nil {
			return stop(err)
		}
	}
	lastSave := time.Now()
	for !done() {
		start := time.Now()
		epoch := st.Epoch + 1
		for st.Step < steps {
			loss, weight, grads, err := obj.Gradient(epoch, st.Step)
			if err != nil {
				return nil, fmt.Errorf("nsrnn: epoch %d step %d: %w", epoch, st.Step+1, err)
			}
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				return nil, fmt.Errorf("nsrnn: epoch %d step %d of %d: the loss is %g (training diverged; try a smaller learning rate)", epoch, st.Step+1, steps, loss)
			}
			ClipGradNorm(grads, cfg.Clip)
			cfg.Optimizer.Update(m.params, grads)
			st.LossSum += loss * weight
			st.WeightSum += weight
			st.Step++
			if err := rec.Record(ev(StepDone)); err != nil {
				return stop(err)
			}
			if cfg.Checkpoint != "" && cfg.CheckpointEvery > 0 && st.Step < steps && time.Since(lastSave) >= cfg.CheckpointEvery {
				st.EpochTime += time.Since(start).Seconds()
				start = time.Now()
				if err := saveCheckpoint(cfg.Checkpoint, m, cfg.Optimizer, obj, st); err != nil {
					return nil, err
				}
				lastSave = time.Now()
				if err := rec.Record(ev(Checkpointed)); err != nil {
					return stop(err)
				}
			}
		}
		ce, err := obj.Validate()
		if err != nil {
			return nil, err
		}
		if math.IsNaN(ce) {
			return nil, fmt.Errorf("nsrnn: epoch %d: the validation score is NaN", epoch)
		}
		r := EpochRecord{
			Epoch: epoch, TrainLoss: st.LossSum / st.WeightSum, ValidCrossEntropy: ce,
			LowerBound: cfg.LowerBound, ValidDifference: ce - cfg.LowerBound,
			LearningRate: cfg.Optimizer.LearningRate(),
		}
		if cfg.Schedule.improves(ce, st.BestValid) {
			st.BestValid, st.BestEpoch, st.Bad = ce, epoch, 0
			r.Improved = true
			if st.Best, err = m.MarshalBinary(); err != nil {
				return nil, err
			}
		} else {
			st.Bad++
			if st.Bad%(cfg.Schedule.Patience+1) == 0 {
				cfg.Optimizer.SetLearningRate(cfg.Optimizer.LearningRate() * cfg.Schedule.Factor)
			}
			if st.Bad >= cfg.EarlyStop {
				st.Done = true
			}
		}
		st.Epoch, st.Step, st.LossSum, st.WeightSum = epoch, 0, 0, 0
		r.EpochSeconds = st.EpochTime + time.Since(start).Seconds()
		st.EpochTime = 0
		st.Elapsed += r.EpochSeconds
		r.ElapsedSeconds = st.Elapsed
		st.History = append(st.History, r)
		if cfg.Checkpoint != "" {
			if err := saveCheckpoint(cfg.Checkpoint, m, cfg.Optimizer, obj, st); err != nil {
				return nil, err
			}
			lastSave = time.Now()
		}
		e := ev(EpochDone)
		e.Epoch, e.Step, e.Record = epoch, steps, &r
		e.Loss = r.TrainLoss
		if err := rec.Record(e); err != nil {
			return stop(err)
		}
	}
	best, err := UnmarshalModel(st.Best)
	if err != nil {
		return nil, err
	}
	for i, p := range m.params {
		copy(p.Data(), best.params[i].Data())
	}
	e := ev(Finished)
	e.Epoch = st.Epoch
	if err := rec.Record(e); err != nil && !errors.Is(err, ErrStop) {
		return nil, err
	}
	return result(st, cfg, true), nil
}

func result(st *trainState, cfg TrainConfig, finished bool) *TrainResult {
	return &TrainResult{
		Epochs: st.Epoch, BestEpoch: st.BestEpoch, BestValidCrossEntropy: st.BestValid,
		LowerBound: cfg.LowerBound, BestValidDifference: st.BestValid - cfg.LowerBound,
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

func saveCheckpoint(path string, m *Model, opt Optimizer, obj Objective, st *trainState) error {
	var err error
	if st.Model, err = m.MarshalBinary(); err != nil {
		return err
	}
	if st.Optimizer, err = opt.MarshalBinary(); err != nil {
		return err
	}
	st.Objective = nil
	if so, ok := obj.(StatefulObjective); ok && st.Step > 0 {
		if st.Objective, err = so.MarshalState(); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}

// loadCheckpoint reads a checkpoint into m (whose configuration must match)
// and returns the training state; it refuses a checkpoint whose settings
// differ from the current ones.
func loadCheckpoint(path string, m *Model, settings map[string]string) (*trainState, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st trainState
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		return nil, fmt.Errorf("%s: not a valid nsrnn checkpoint: %v", path, err)
	}
	if st.Version != checkpointVersion {
		return nil, fmt.Errorf("%s: checkpoint format version %d, this library reads %d", path, st.Version, checkpointVersion)
	}
	saved, err := UnmarshalModel(st.Model)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if saved.cfg != m.cfg {
		return nil, fmt.Errorf("%s: checkpoint is of a different model (%+v, not %+v)", path, saved.cfg, m.cfg)
	}
	if d := diffSettings(st.Settings, settings); len(d) > 0 {
		return nil, fmt.Errorf("%s: the checkpoint was made with other settings; resume with the same ones or start afresh in another place:\n  %s", path, strings.Join(d, "\n  "))
	}
	for i, p := range m.params {
		copy(p.Data(), saved.params[i].Data())
	}
	return &st, nil
}
