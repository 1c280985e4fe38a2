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
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
)

// Batch is a set of sequences of one length, as symbol indices.
type Batch [][]int

// TrainConfig holds the training protocol (DESIGN §7). Zero values select
// the paper's settings where it has one.
type TrainConfig struct {
	// LR is Adam's initial learning rate (required).
	LR float64
	// Clip is the gradient-norm threshold (default 5; negative disables).
	Clip float64
	// DecayFactor multiplies the learning rate after Patience epochs
	// without validation improvement (default 0.9, patience 5).
	DecayFactor float64
	Patience    int
	// EarlyStop ends training after this many epochs without validation
	// improvement (default 10).
	EarlyStop int
	// MaxEpochs bounds the number of epochs (default 200).
	MaxEpochs int
	// Seed drives the shuffling of the training batches.
	Seed uint64
	// LowerBound is the validation set's true-entropy lower bound in nats
	// per symbol; the log reports the model's difference from it.
	LowerBound float64
	// Checkpoint, when set, is the file written atomically after every
	// epoch; Resume continues from it.
	Checkpoint string
	// LogFile, when set, is the JSON-lines training log, one EpochRecord
	// per epoch, rewritten atomically after every epoch from the history
	// the checkpoint holds, so that the two always agree.
	LogFile string
	// Progress, when set, shows a progress bar (use a terminal).
	Progress io.Writer
	// AfterEpoch, when set, is called after every epoch (after the
	// checkpoint is written) with the epoch's record; the model holds the
	// parameters reached at the end of that epoch. An error stops training.
	AfterEpoch func(rec EpochRecord) error
	// StopAfter, when positive, returns after that many epochs of this
	// call, as if the process had been killed right after a checkpoint;
	// it exists for tests of resuming.
	StopAfter int
}

func (c *TrainConfig) defaults() error {
	if c.LR <= 0 || math.IsNaN(c.LR) {
		return fmt.Errorf("nsrnn: learning rate %g must be positive", c.LR)
	}
	if c.Clip == 0 {
		c.Clip = 5
	}
	if c.DecayFactor == 0 {
		c.DecayFactor = 0.9
	}
	if c.Patience == 0 {
		c.Patience = 5
	}
	if c.EarlyStop == 0 {
		c.EarlyStop = 10
	}
	if c.MaxEpochs == 0 {
		c.MaxEpochs = 200
	}
	return nil
}

// EpochRecord is one line of the training log.
type EpochRecord struct {
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

// TrainResult summarizes a finished training run.
type TrainResult struct {
	Epochs                int
	BestEpoch             int
	BestValidCrossEntropy float64
	LowerBound            float64
	BestValidDifference   float64
	ElapsedSeconds        float64
	// Finished is false when the run stopped early because of StopAfter.
	Finished bool
	History  []EpochRecord
}

// trainState is everything a checkpoint holds.
type trainState struct {
	Version   int
	Model     []byte
	Best      []byte
	Adam      *Adam
	Epoch     int
	BestEpoch int
	BestValid float64
	Bad       int
	Elapsed   float64
	History   []EpochRecord
	Done      bool
}

const checkpointVersion = 1

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

// Train trains m on the training batches with Adam, validating on valid
// after every epoch: gradient clipping by global norm, learning-rate decay
// on a validation plateau, early stopping, and the best parameters (by
// validation cross-entropy) restored at the end. With a Checkpoint it
// resumes from that file when it exists, and reaches exactly the result of
// an uninterrupted run.
func Train(m *Model, train, valid []Batch, cfg TrainConfig) (*TrainResult, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if len(train) == 0 || len(valid) == 0 {
		return nil, errors.New("nsrnn: training needs training and validation batches")
	}
	st := &trainState{Version: checkpointVersion, BestValid: math.Inf(1)}
	sizes := make([]int, len(m.params))
	for i, p := range m.params {
		sizes[i] = p.Size()
	}
	st.Adam = NewAdam(cfg.LR, sizes)
	if cfg.Checkpoint != "" {
		if loaded, err := loadCheckpoint(cfg.Checkpoint, m); err == nil {
			st = loaded
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if st.Best == nil {
		var err error
		if st.Best, err = m.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	var bar *progressbar.ProgressBar
	if cfg.Progress != nil {
		bar = progressbar.NewOptions(len(train)*(cfg.MaxEpochs-st.Epoch),
			progressbar.OptionSetWriter(cfg.Progress),
			progressbar.OptionSetDescription("training"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("batch"),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	ran := 0
	for !st.Done && st.Epoch < cfg.MaxEpochs {
		start := time.Now()
		epoch := st.Epoch + 1
		order := rand.New(rand.NewPCG(cfg.Seed, uint64(epoch))).Perm(len(train))
		lossSum, seqs := 0.0, 0
		for i, bi := range order {
			loss, grads, err := m.Gradient(train[bi])
			if err != nil {
				return nil, err
			}
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				return nil, fmt.Errorf("nsrnn: epoch %d batch %d: loss is %g", epoch, i+1, loss)
			}
			ClipGradNorm(grads, cfg.Clip)
			st.Adam.Update(m.params, grads)
			lossSum += loss * float64(len(train[bi]))
			seqs += len(train[bi])
			if bar != nil {
				bar.Describe(fmt.Sprintf("epoch %d/%d loss %.3f", epoch, cfg.MaxEpochs, lossSum/float64(seqs)))
				bar.Add(1)
			}
		}
		ce, err := m.CrossEntropy(valid)
		if err != nil {
			return nil, err
		}
		rec := EpochRecord{
			Epoch: epoch, TrainLoss: lossSum / float64(seqs), ValidCrossEntropy: ce,
			LowerBound: cfg.LowerBound, ValidDifference: ce - cfg.LowerBound,
			LearningRate: st.Adam.LR,
		}
		if ce < st.BestValid {
			st.BestValid, st.BestEpoch, st.Bad = ce, epoch, 0
			rec.Improved = true
			if st.Best, err = m.MarshalBinary(); err != nil {
				return nil, err
			}
		} else {
			st.Bad++
			if st.Bad%cfg.Patience == 0 {
				st.Adam.LR *= cfg.DecayFactor
			}
			if st.Bad >= cfg.EarlyStop {
				st.Done = true
			}
		}
		st.Epoch = epoch
		rec.EpochSeconds = time.Since(start).Seconds()
		st.Elapsed += rec.EpochSeconds
		rec.ElapsedSeconds = st.Elapsed
		st.History = append(st.History, rec)
		if st.Epoch >= cfg.MaxEpochs {
			st.Done = true
		}
		if cfg.Checkpoint != "" {
			if err := saveCheckpoint(cfg.Checkpoint, m, st); err != nil {
				return nil, err
			}
		}
		if err := writeLog(cfg.LogFile, st.History); err != nil {
			return nil, err
		}
		if cfg.AfterEpoch != nil {
			if err := cfg.AfterEpoch(rec); err != nil {
				return nil, err
			}
		}
		ran++
		if cfg.StopAfter > 0 && ran >= cfg.StopAfter && !st.Done {
			return result(st, cfg, false), nil
		}
	}
	if bar != nil {
		bar.Finish()
	}
	if err := writeLog(cfg.LogFile, st.History); err != nil {
		return nil, err
	}
	best, err := UnmarshalModel(st.Best)
	if err != nil {
		return nil, err
	}
	for i, p := range m.params {
		copy(p.Data(), best.params[i].Data())
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

func saveCheckpoint(path string, m *Model, st *trainState) error {
	var err error
	if st.Model, err = m.MarshalBinary(); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}

// loadCheckpoint reads a checkpoint into m (whose configuration must match)
// and returns the training state.
func loadCheckpoint(path string, m *Model) (*trainState, error) {
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
	for i, p := range m.params {
		copy(p.Data(), saved.params[i].Data())
	}
	if st.Adam == nil || len(st.Adam.M) != len(m.params) {
		return nil, fmt.Errorf("%s: checkpoint's optimizer state does not fit the model", path)
	}
	return &st, nil
}
