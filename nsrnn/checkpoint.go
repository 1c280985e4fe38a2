package nsrnn

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"sort"
	"strings"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/readlimit"
)

// The checkpoint format, version 4, written in pieces (the memory a
// checkpoint takes besides the model's and the optimizer's does not grow
// with them):
//
//	magic "nsrnn-checkpoint-v4\x00"
//	section 1: the gob encoding of a trainState (Version 4) without
//	           Model, Best and Optimizer
//	section 2: the model (Model.MarshalBinary's encoding)
//	section 3: the best model so far (empty: none yet)
//	section 4: the optimizer's state (Optimizer.MarshalBinary's encoding)
//	the four sections' lengths, uint64 little-endian each
//	the SHA-256 of everything before it (32 bytes)
//
// Version 3 is the magic "nsrnn-checkpoint\x00", the gob encoding of the
// whole trainState (Version 3), and the SHA-256 of both. Version 2,
// written before the checksum existed, is the bare gob encoding of a
// trainState (Version 2). Both are still read, so that runs in flight
// resume exactly; without a checksum, version 2 is checked field by field
// only (checkState), and the program settings it predates are not
// compared (see loadCheckpoint). An older checkpoint is rewritten as
// version 4 at the next save.
const (
	checkpointMagic         = "nsrnn-checkpoint-v4\x00"
	checkpointVersion       = 4
	checkpointSections      = 4
	v3CheckpointMagic       = "nsrnn-checkpoint\x00"
	v3CheckpointVersion     = 3
	legacyCheckpointVersion = 2
)

// ErrBadCheckpoint is wrapped by every error about a checkpoint file that
// is damaged, truncated or inconsistent (as opposed to one made with other
// settings): the error also names the file.
var ErrBadCheckpoint = errors.New("not a valid nsrnn checkpoint")

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

// saveCheckpoint writes the training state atomically in the format of
// version 4, with the model's and the optimizer's current state and the
// objective's state within the epoch, streaming the model and the
// optimizer's state (where it is a stateWriter) to the file.
func saveCheckpoint(path string, m *Model, opt Optimizer, obj Objective, st *trainState) error {
	var err error
	st.Model, st.Optimizer = nil, nil
	st.Objective = nil
	if so, ok := unwrapObjective(obj).(StatefulObjective); ok && st.Step > 0 {
		if st.Objective, err = so.MarshalState(); err != nil {
			return err
		}
	}
	st.Version = checkpointVersion
	head := *st
	head.Best = nil
	var state bytes.Buffer
	if err := gob.NewEncoder(&state).Encode(&head); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		sum := sha256.New()
		cw := &countingWriter{w: io.MultiWriter(w, sum)}
		if _, err := io.WriteString(cw, checkpointMagic); err != nil {
			return err
		}
		var lens [checkpointSections]uint64
		section := func(i int, write func(io.Writer) error) error {
			before := cw.n
			if err := write(cw); err != nil {
				return err
			}
			lens[i] = uint64(cw.n - before)
			return nil
		}
		bytesOf := func(b []byte) func(io.Writer) error {
			return func(w io.Writer) error { _, err := w.Write(b); return err }
		}
		optState := func(w io.Writer) error {
			if sw, ok := opt.(stateWriter); ok {
				return sw.writeState(w)
			}
			b, err := opt.MarshalBinary()
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}
		for i, write := range []func(io.Writer) error{bytesOf(state.Bytes()), m.writeModel, bytesOf(st.Best), optState} {
			if err := section(i, write); err != nil {
				return err
			}
		}
		trailer := make([]byte, 0, 8*checkpointSections)
		for _, n := range lens {
			trailer = binary.LittleEndian.AppendUint64(trailer, n)
		}
		if _, err := cw.Write(trailer); err != nil {
			return err
		}
		_, err := w.Write(sum.Sum(nil))
		return err
	})
}

// stateWriter is an optimizer that writes the encoding of its
// MarshalBinary to a writer in pieces, without building it in memory.
type stateWriter interface {
	writeState(w io.Writer) error
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// maxCheckpointBytes bounds the size of a checkpoint file: the model and
// the best model so far, an optimizer state of up to two values per
// parameter, and room for the rest.
const maxCheckpointBytes = 4*maxModelFileBytes + 256<<20

// decodeCheckpoint decodes a checkpoint of version 3 (checksum verified)
// or 2.
func decodeCheckpoint(data []byte) (*trainState, error) {
	var st trainState
	if bytes.HasPrefix(data, []byte(checkpointMagic)) {
		return decodeSections(data)
	}
	if bytes.HasPrefix(data, []byte(v3CheckpointMagic)) {
		if len(data) < len(v3CheckpointMagic)+sha256.Size {
			return nil, fmt.Errorf("%w: truncated", ErrBadCheckpoint)
		}
		body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
		if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
			return nil, fmt.Errorf("%w: SHA-256 checksum mismatch (the file is truncated or corrupted)", ErrBadCheckpoint)
		}
		if err := decodeTrainState(body[len(v3CheckpointMagic):], &st); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
		}
		if st.Version != v3CheckpointVersion {
			return nil, fmt.Errorf("%w: format version %d under the header of version %d", ErrBadCheckpoint, st.Version, v3CheckpointVersion)
		}
		return &st, nil
	}
	if err := decodeTrainState(data, &st); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
	}
	if st.Version != legacyCheckpointVersion {
		return nil, fmt.Errorf("%w: format version %d; this library reads versions %d, %d and %d", ErrBadCheckpoint, st.Version, legacyCheckpointVersion, v3CheckpointVersion, checkpointVersion)
	}
	return &st, nil
}

// decodeTrainState decodes the gob encoding of a trainState. encoding/gob
// makes a map of the count its input declares before it reads an entry,
// so that a crafted file of a hundred bytes could declare a billion
// settings and exhaust memory. The input is first decoded into a value
// that keeps the version alone: gob then skips every other field entry
// by entry (its slices it grows as their elements arrive), so a count
// beyond the entries present fails at the input's end, and the map that
// the second decoding makes holds at most as many entries as there are
// bytes.
func decodeTrainState(data []byte, st *trainState) error {
	var version struct{ Version int }
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&version); err != nil {
		return err
	}
	return gob.NewDecoder(bytes.NewReader(data)).Decode(st)
}

// decodeSections decodes a checkpoint of version 4 (checksum verified);
// its Model, Best and Optimizer share data's memory.
func decodeSections(data []byte) (*trainState, error) {
	const tail = 8*checkpointSections + sha256.Size
	if len(data) < len(checkpointMagic)+tail {
		return nil, fmt.Errorf("%w: truncated", ErrBadCheckpoint)
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("%w: SHA-256 checksum mismatch (the file is truncated or corrupted)", ErrBadCheckpoint)
	}
	trailer := body[len(body)-8*checkpointSections:]
	rest := body[len(checkpointMagic) : len(body)-8*checkpointSections]
	var secs [checkpointSections][]byte
	for i := range secs {
		n := binary.LittleEndian.Uint64(trailer[8*i:])
		if n > uint64(len(rest)) {
			return nil, fmt.Errorf("%w: section %d of %d bytes, %d left", ErrBadCheckpoint, i+1, n, len(rest))
		}
		secs[i], rest = rest[:n:n], rest[n:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes beyond its sections", ErrBadCheckpoint, len(rest))
	}
	var st trainState
	if err := decodeTrainState(secs[0], &st); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
	}
	if st.Version != checkpointVersion {
		return nil, fmt.Errorf("%w: format version %d under the header of version %d", ErrBadCheckpoint, st.Version, checkpointVersion)
	}
	if st.Model != nil || st.Best != nil || st.Optimizer != nil {
		return nil, fmt.Errorf("%w: its state holds a model or optimizer besides its sections", ErrBadCheckpoint)
	}
	st.Model, st.Optimizer = secs[1], secs[3]
	if len(secs[2]) > 0 {
		st.Best = secs[2]
	}
	return &st, nil
}

// loadCheckpoint reads the checkpoint at path and restores it into m, the
// optimizer opt (whose learning rate is still the initial one) and obj,
// after checking all of it: the checksum (version 3), the model's and the
// best model's encodings and configurations, the settings (those under
// "settings." that the checkpoint lacks, added to the program after it was
// written, are not compared), every field's range and the
// history's consistency with the schedule (checkState), the optimizer's
// state and learning rate, and the objective's state. Every error names
// the file; nothing is restored unless the whole checkpoint is valid,
// except the optimizer and objective states, which are restored last.
func loadCheckpoint(path string, m *Model, settings map[string]string, c *TrainConfig, opt Optimizer, obj Objective) (*trainState, error) {
	data, err := readlimit.File(path, maxCheckpointBytes, true)
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", path, ErrBadCheckpoint, fmt.Sprintf(format, args...))
	}
	st, err := decodeCheckpoint(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	saved, err := UnmarshalModel(st.Model)
	if err != nil {
		return nil, bad("its model: %v", err)
	}
	if saved.cfg != m.cfg {
		return nil, fmt.Errorf("%s: checkpoint is of a different model: %s", path, configDiffs(saved.cfg, m.cfg))
	}
	// Settings that programs add (TrainConfig.Settings) and that the
	// checkpoint lacks were added after it was written (by a later version
	// of the program): they cannot be compared, and a run in flight must
	// resume all the same.
	now := maps.Clone(settings)
	for k := range now {
		if _, ok := st.Settings[k]; !ok && strings.HasPrefix(k, "settings.") {
			delete(now, k)
		}
	}
	// A bound of 0 is what a program passed for data of no known bound
	// before it could say so (WithoutLowerBound): a cross-entropy is never
	// below 0, so the records' differences were the cross-entropies
	// themselves, and the best epoch the same. Such a run resumes without
	// a bound.
	if st.Settings["lower_bound"] == "0" && now["lower_bound"] == "none" {
		now["lower_bound"] = "0"
		for i := range st.History {
			r := &st.History[i]
			if r.LowerBound == 0 && r.ValidDifference == r.ValidCrossEntropy {
				r.NoLowerBound, r.ValidDifference = true, 0
			}
		}
	}
	if d := diffSettings(st.Settings, now); len(d) > 0 {
		return nil, fmt.Errorf("%s: the checkpoint was made with other settings; resume with the same ones or start afresh in another place:\n  %s", path, strings.Join(d, "\n  "))
	}
	_, stateful := unwrapObjective(obj).(StatefulObjective)
	lr, err := checkState(st, c, obj.Steps(), stateful, opt.LearningRate())
	if err != nil {
		return nil, bad("%v", err)
	}
	if st.Best != nil {
		best, err := UnmarshalModel(st.Best)
		if err != nil {
			return nil, bad("its copy of the best model (epoch %d): %v", st.BestEpoch, err)
		}
		if best.cfg != m.cfg {
			return nil, bad("its copy of the best model is of a different model (%+v)", best.cfg)
		}
	}
	if err := opt.UnmarshalBinary(st.Optimizer); err != nil {
		return nil, bad("optimizer state: %v", err)
	}
	if got := opt.LearningRate(); got != lr {
		return nil, bad("the optimizer's learning rate %g is not %g, the rate the schedule gives after the recorded epochs", got, lr)
	}
	if st.Objective != nil {
		if err := unwrapObjective(obj).(StatefulObjective).UnmarshalState(st.Objective); err != nil {
			return nil, bad("objective state: %v", err)
		}
	}
	m.writeParams(func() {
		for i, p := range m.params {
			copy(p.Data(), saved.params[i].Data())
		}
		m.paramsChanged()
	})
	st.Settings = settings
	return st, nil
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// checkState range-checks every field of a checkpoint's training state for
// a run of c whose epochs have steps steps, whose objective is stateful or
// not, and whose optimizer started at learning rate lr0, and checks the
// history against itself: the records are epochs 1, 2, …; the elapsed
// times are the sums of the epochs' times; and replaying the schedule over
// the recorded validation scores gives the recorded improvements, learning
// rates, best epoch and score, count of epochs without improvement and
// early stop. It returns the learning rate the optimizer must have now.
//
// MaxEpochs may change when a run is resumed (a run that has done more
// epochs than the new bound simply ends), so the epoch is checked against
// the history rather than against MaxEpochs.
func checkState(st *trainState, c *TrainConfig, steps int, stateful bool, lr0 float64) (float64, error) {
	switch {
	case st.Epoch < 0 || st.Epoch != len(st.History):
		return 0, fmt.Errorf("it counts %d epochs done but holds the records of %d", st.Epoch, len(st.History))
	case st.Step < 0 || st.Step >= steps:
		return 0, fmt.Errorf("its step counter %d is outside the epoch's %d steps", st.Step, steps)
	case !finite(st.LossSum) || !finite(st.WeightSum) || st.WeightSum < 0:
		return 0, fmt.Errorf("the epoch's running loss %g and weight %g are not finite and non-negative", st.LossSum, st.WeightSum)
	case !finite(st.Elapsed) || st.Elapsed < 0 || !finite(st.EpochTime) || st.EpochTime < 0:
		return 0, fmt.Errorf("the elapsed times %g and %g are not finite and non-negative", st.Elapsed, st.EpochTime)
	case st.Step == 0 && (st.LossSum != 0 || st.WeightSum != 0 || st.EpochTime != 0 || st.Objective != nil):
		return 0, fmt.Errorf("at the start of an epoch it holds a running loss, time or objective state")
	case st.Step > 0 && stateful && st.Objective == nil:
		return 0, fmt.Errorf("in the middle of epoch %d it holds no state of the objective", st.Epoch+1)
	case st.Objective != nil && !stateful:
		return 0, fmt.Errorf("it holds an objective state, the objective has none")
	case st.Done && st.Step != 0:
		return 0, fmt.Errorf("it stopped early in the middle of an epoch")
	case st.BestEpoch > 0 && st.Best == nil:
		return 0, fmt.Errorf("it has no copy of the best model")
	}
	sched := scheduleState{best: math.Inf(1), lr: lr0, rateBest: math.Inf(1)}
	elapsed := 0.0
	for i, r := range st.History {
		e := i + 1
		switch {
		case r.Epoch != e:
			return 0, fmt.Errorf("record %d of its history is of epoch %d", e, r.Epoch)
		case !finite(r.TrainLoss):
			return 0, fmt.Errorf("epoch %d: training loss %g", e, r.TrainLoss)
		case math.IsNaN(r.ValidCrossEntropy):
			return 0, fmt.Errorf("epoch %d: validation score NaN", e)
		case r.NoLowerBound != c.NoLowerBound:
			return 0, fmt.Errorf("epoch %d: no lower bound %v, the run's %v", e, r.NoLowerBound, c.NoLowerBound)
		case r.LowerBound != c.LowerBound || r.ValidDifference != c.difference(r.ValidCrossEntropy):
			return 0, fmt.Errorf("epoch %d: lower bound %g and difference %g do not fit the score %g and the run's lower bound %g", e, r.LowerBound, r.ValidDifference, r.ValidCrossEntropy, c.LowerBound)
		case r.LearningRate != sched.lr:
			return 0, fmt.Errorf("epoch %d: learning rate %g, the schedule gives %g", e, r.LearningRate, sched.lr)
		case !finite(r.EpochSeconds) || r.EpochSeconds < 0:
			return 0, fmt.Errorf("epoch %d: epoch time %g", e, r.EpochSeconds)
		}
		elapsed += r.EpochSeconds
		if r.ElapsedSeconds != elapsed {
			return 0, fmt.Errorf("epoch %d: elapsed time %g is not the sum %g of the epochs' times", e, r.ElapsedSeconds, elapsed)
		}
		before := sched.best
		if improved := sched.advance(c.Schedule, e, r.ValidCrossEntropy); r.Improved != improved {
			return 0, fmt.Errorf("epoch %d: improved %v, but its score %g against the best %g says %v", e, r.Improved, r.ValidCrossEntropy, before, improved)
		}
	}
	lr, best, bestEpoch, bad := sched.lr, sched.best, sched.bestEpoch, sched.bad
	switch {
	case st.BestEpoch != bestEpoch || st.BestValid != best:
		return 0, fmt.Errorf("its best epoch %d (score %g) is not that of its history, %d (score %g)", st.BestEpoch, st.BestValid, bestEpoch, best)
	case st.Bad != bad:
		return 0, fmt.Errorf("it counts %d epochs without improvement, its history %d", st.Bad, bad)
	case st.Done != (bad >= c.EarlyStop):
		return 0, fmt.Errorf("its early stop (%v) does not fit its %d epochs without improvement (early stop after %d)", st.Done, bad, c.EarlyStop)
	case st.Elapsed != elapsed:
		return 0, fmt.Errorf("its elapsed time %g is not the sum %g of the epochs' times", st.Elapsed, elapsed)
	}
	return lr, nil
}

// CheckpointModels are the models a training checkpoint holds
// (LoadCheckpointModels).
type CheckpointModels struct {
	// Model has the parameters as they were when the checkpoint was
	// written: after Epochs epochs and Steps steps of the next.
	Model *Model
	// Best has the parameters of the best epoch so far, BestEpoch; it is
	// nil when BestEpoch is 0 (no epoch validated yet).
	Best *Model
	// Epochs and Steps count the epochs done and the steps done of the
	// next; BestEpoch is the best epoch so far (0: none yet).
	Epochs, Steps int
	BestEpoch     int
	// History has the records of the Epochs epochs done.
	History []EpochRecord
}

// LoadCheckpointModels reads the models of the checkpoint file at path,
// written by Fit for a run in progress or stopped (before or after it
// finished), so that they can be evaluated, decoded or sampled without
// finishing the run. It checks the file's checksum (of a checkpoint in the
// current format; an older one is read without) and the models'
// encodings: an error names the file, and wraps ErrBadCheckpoint for a
// damaged one. The training state is not checked against a run's
// settings, as resuming does.
func LoadCheckpointModels(path string) (*CheckpointModels, error) {
	data, err := readlimit.File(path, maxCheckpointBytes, true)
	if err != nil {
		return nil, err
	}
	st, err := decodeCheckpoint(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", path, ErrBadCheckpoint, fmt.Sprintf(format, args...))
	}
	m, err := UnmarshalModel(st.Model)
	if errors.Is(err, ErrUnknownKind) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err != nil {
		return nil, bad("its model: %v", err)
	}
	cm := &CheckpointModels{Model: m, Epochs: st.Epoch, Steps: st.Step, BestEpoch: st.BestEpoch, History: st.History}
	switch {
	case st.Epoch < 0 || st.Epoch != len(st.History) || st.Step < 0:
		return nil, bad("it counts %d epochs and %d steps done but holds the records of %d epochs", st.Epoch, st.Step, len(st.History))
	case st.BestEpoch < 0 || st.BestEpoch > st.Epoch:
		return nil, bad("its best epoch %d is not one of its %d epochs", st.BestEpoch, st.Epoch)
	case st.BestEpoch > 0 && st.Best == nil:
		return nil, bad("it has no copy of the best model")
	case st.BestEpoch > 0:
		if cm.Best, err = UnmarshalModel(st.Best); err != nil {
			return nil, bad("its copy of the best model (epoch %d): %v", st.BestEpoch, err)
		}
		if cm.Best.cfg != m.cfg {
			return nil, bad("its copy of the best model is of a different model (%+v)", cm.Best.cfg)
		}
	}
	return cm, nil
}

// configDiffs lists the fields of the configurations a (a checkpoint's)
// and b (the model's) that differ, by their JSON names, as diffSettings
// does: "hidden: 8 in the checkpoint, now 9".
func configDiffs(a, b Config) string {
	fields := func(c Config) map[string]string {
		out := map[string]string{}
		raw, err := json.Marshal(c)
		var m map[string]json.RawMessage
		if err == nil {
			err = json.Unmarshal(raw, &m)
		}
		if err != nil {
			return map[string]string{"configuration": fmt.Sprintf("%+v", c)}
		}
		for k, v := range m {
			out[k] = string(v)
		}
		return out
	}
	return strings.Join(diffSettings(fields(a), fields(b)), "; ")
}
