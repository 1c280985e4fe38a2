package nsrnn

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// streamTC is the training configuration of the stream checkpoint tests
// (that of TestFitStreamResumeMidEpoch, with settings).
func streamTC(path string) TrainConfig {
	return TrainConfig{
		Optimizer: NewSGD(0.5), Clip: 1, Schedule: &Plateau{Factor: 1 / 1.5, Patience: 0, Threshold: 1e-4},
		EarlyStop: 2, MaxEpochs: 4, Seed: 3, Checkpoint: path, CheckpointEvery: time.Nanosecond,
		Settings: map[string]string{"data": "tiny", "batch": "2"},
	}
}

// stoppedStream trains the rns-D3 stream model of streamTC into the
// checkpoint path and stops right after the mid-epoch checkpoint at the
// given epoch and step.
func stoppedStream(t *testing.T, path string, epoch, step int) {
	t.Helper()
	stoppedStreamOf(t, path, epoch, step, func(o Objective) Objective { return o })
}

// stoppedStreamOf is stoppedStream with the stream objective wrapped by
// wrap (a lower bound, or none).
func stoppedStreamOf(t *testing.T, path string, epoch, step int, wrap func(Objective) Objective) {
	t.Helper()
	m := newTiny(t, streamConfigs()["rns-D3"], 1)
	c := streamTC(path)
	c.Recorder = RecorderFunc(func(e Event) error {
		if e.Kind == Checkpointed && e.Epoch == epoch && e.Step == step {
			return ErrStop
		}
		return nil
	})
	res, err := Fit(m, wrap(tinyStream(t, m, 4)), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Finished || res.Epochs != epoch-1 {
		t.Fatalf("the run did not stop at epoch %d: %+v", epoch, res)
	}
}

// readState decodes the checkpoint at path (of either version).
func readState(t *testing.T, path string) *trainState {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := decodeCheckpoint(data)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// writeLegacy writes st to path as a version-2 checkpoint: the bare gob
// encoding, as the code before the checksum wrote it.
func writeLegacy(t *testing.T, path string, st *trainState) {
	t.Helper()
	st.Version = legacyCheckpointVersion
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeV3 writes st to path as a version-3 checkpoint: the magic, the gob
// encoding of the whole state and its SHA-256, as the code before the
// sectioned format wrote it.
func writeV3(t *testing.T, path string, st *trainState) {
	t.Helper()
	st.Version = v3CheckpointVersion
	var buf bytes.Buffer
	buf.WriteString(v3CheckpointMagic)
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeV4 writes st to path as a version-4 checkpoint, with the bytes of
// its Model, Best and Optimizer as its sections.
func writeV4(t *testing.T, path string, st *trainState) {
	t.Helper()
	st.Version = checkpointVersion
	head := *st
	head.Model, head.Best, head.Optimizer = nil, nil, nil
	var state bytes.Buffer
	if err := gob.NewEncoder(&state).Encode(&head); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString(checkpointMagic)
	secs := [][]byte{state.Bytes(), st.Model, st.Best, st.Optimizer}
	for _, s := range secs {
		buf.Write(s)
	}
	for _, s := range secs {
		buf.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(s))))
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointVersion2Resumes checks that a checkpoint in the format
// before the checksum (version 2) still resumes, bit for bit where an
// uninterrupted run ends, with Settings keys it lacks not compared, and
// is rewritten in the current format; and that the version-2 files that
// the code before it wrote (testdata) resume.
func TestCheckpointVersion2Resumes(t *testing.T) {
	dir := t.TempDir()
	cfg := streamConfigs()["rns-D3"]
	full := newTiny(t, cfg, 1)
	want, err := Fit(full, tinyStream(t, full, 4), streamTC(filepath.Join(dir, "full")))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "part")
	stoppedStream(t, path, 2, 3)
	writeLegacy(t, path, readState(t, path))

	c := streamTC(path)
	c.Settings["seed"] = "1" // a setting the version-2 checkpoint lacks
	resumeAndCompare(t, cfg, c, 2, 3, want, full)
	if b, _ := os.ReadFile(path); !bytes.HasPrefix(b, []byte(checkpointMagic)) {
		t.Error("the resumed run did not rewrite the checkpoint in the current format")
	}
	if st := readState(t, path); st.Settings["settings.seed"] != "1" {
		t.Errorf("the rewritten checkpoint's settings %v lack the new one", st.Settings)
	}

	// Files written by the code before the checksum (version 2) and by
	// the code before the sectioned format (version 3: the whole state,
	// Adam's moments in gob, in one encoding; made by stoppedStream and by
	// the Train below with MaxEpochs 1).
	for _, v := range []string{"v2", "v3"} {
		t.Run("testdata stream "+v, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "ckpt")
			copyFile(t, filepath.Join("testdata", "checkpoint-"+v+"-stream"), p)
			m := newTiny(t, cfg, 99)
			res, err := Fit(m, tinyStream(t, m, 4), streamTC(p))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Finished || len(res.History) != len(want.History) {
				t.Errorf("result %+v", res)
			}
			// The file was written by the pure-Go build; under the
			// openblas tag the products round differently from the
			// checkpoint on, so the scores agree to rounding, not bits
			// (exact resumption within one build is tested above).
			if v == "v3" {
				for i, r := range res.History {
					w := want.History[i]
					if r.Epoch != w.Epoch || r.LearningRate != w.LearningRate || r.Improved != w.Improved ||
						math.Abs(r.ValidCrossEntropy-w.ValidCrossEntropy) > 1e-12*math.Abs(w.ValidCrossEntropy) ||
						math.Abs(r.TrainLoss-w.TrainLoss) > 1e-12*math.Abs(w.TrainLoss) {
						t.Errorf("epoch %d of the run resumed from version 3: %+v; the uninterrupted run's %+v", i+1, r, w)
					}
				}
			}
		})
		t.Run("testdata sentences "+v, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "ckpt")
			copyFile(t, filepath.Join("testdata", "checkpoint-"+v+"-sentences"), p)
			train, valid, _, in, out := tinyTask(t, 10, 5)
			res, err := Train(newTiny(t, tinyConfig(LSTM, in, out), 99), train, valid,
				TrainConfig{LR: 0.01, MaxEpochs: 2, Seed: 1, Checkpoint: p, Settings: map[string]string{"task": "marked-reversal"}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Finished || res.Epochs != 2 {
				t.Errorf("result %+v", res)
			}
			if b, _ := os.ReadFile(p); !bytes.HasPrefix(b, []byte(checkpointMagic)) {
				t.Error("the resumed run did not rewrite the checkpoint in the current format")
			}
		})
	}
}

// TestCheckpointDamaged checks that a checkpoint damaged anywhere, or edited
// into an inconsistent state, is refused with an error that names the file
// and wraps ErrBadCheckpoint, and is left as it was: in the current format
// by its checksum (one byte changed anywhere), in the format before it by
// the range and consistency checks of every field.
func TestCheckpointDamaged(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	// Epoch 3 step 3: two epochs of history (the second without
	// improvement, so with a decay), a stream state.
	stoppedStream(t, good, 3, 3)
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if st := readState(t, good); st.Epoch != 2 || st.Step != 3 || st.Objective == nil {
		t.Fatalf("checkpoint at epoch %d step %d", st.Epoch, st.Step)
	}

	// The checksum: a byte changed anywhere is detected (every 13th
	// byte, and all of the first and last 64).
	for i := range goodBytes {
		if i%13 != 0 && i >= 64 && i < len(goodBytes)-64 {
			continue
		}
		b := bytes.Clone(goodBytes)
		b[i] ^= 0x10
		if _, err := decodeCheckpoint(b); err == nil {
			t.Fatalf("byte %d of %d changed: no error", i, len(goodBytes))
		}
	}

	resume := func(t *testing.T, path string) {
		t.Helper()
		before, _ := os.ReadFile(path)
		m := newTiny(t, streamConfigs()["rns-D3"], 1)
		_, err := Fit(m, tinyStream(t, m, 4), streamTC(path))
		if err == nil {
			t.Fatal("no error")
		}
		if !errors.Is(err, ErrBadCheckpoint) || !strings.Contains(err.Error(), path) {
			t.Errorf("error %q, want one naming %s and wrapping ErrBadCheckpoint", err, path)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Error("the checkpoint was changed")
		}
	}
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
	}{
		{"step counter byte", func(b []byte) []byte { b[len(b)/3] ^= 1; return b }},
		{"last byte of the checksum", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }},
		{"header only", func(b []byte) []byte { return b[:len(checkpointMagic)+5] }},
	} {
		t.Run("current "+c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "ckpt")
			if err := os.WriteFile(p, c.edit(bytes.Clone(goodBytes)), 0o644); err != nil {
				t.Fatal(err)
			}
			resume(t, p)
		})
	}

	sgd := func(lr float64) []byte { b, _ := NewSGD(lr).MarshalBinary(); return b }
	nanLSTM := func(st *trainState) {
		// The first LSTM value of the stream state: after the magic, the
		// batch, the number of layers and the layer's value count.
		at := len(stateMagic) + 3*8
		binary.LittleEndian.PutUint64(st.Objective[at:], math.Float64bits(math.NaN()))
	}
	for _, c := range []struct {
		name string
		edit func(*trainState)
		want string
	}{
		{"step beyond the epoch", func(st *trainState) { st.Step = 64 }, "step counter 64 is outside the epoch's 6 steps"},
		{"negative step", func(st *trainState) { st.Step = -1 }, "step counter"},
		{"epoch counter", func(st *trainState) { st.Epoch = 7 }, "7 epochs done"},
		{"running loss NaN", func(st *trainState) { st.LossSum = math.NaN() }, "running loss"},
		{"running loss infinite", func(st *trainState) { st.LossSum = math.Inf(1) }, "running loss"},
		{"negative weight", func(st *trainState) { st.WeightSum = -1 }, "weight"},
		{"elapsed time", func(st *trainState) { st.Elapsed++ }, "elapsed time"},
		{"epoch time NaN", func(st *trainState) { st.EpochTime = math.NaN() }, "elapsed times"},
		{"record epoch", func(st *trainState) { st.History[1].Epoch = 5 }, "record 2"},
		{"record learning rate", func(st *trainState) { st.History[1].LearningRate *= 2 }, "learning rate"},
		{"record improvement", func(st *trainState) { st.History[1].Improved = !st.History[1].Improved }, "improved"},
		{"record score", func(st *trainState) { st.History[0].ValidCrossEntropy = math.NaN() }, "NaN"},
		{"record training loss", func(st *trainState) { st.History[0].TrainLoss = math.Inf(1) }, "training loss"},
		{"record elapsed time", func(st *trainState) { st.History[0].ElapsedSeconds++ }, "elapsed time"},
		{"record lower bound", func(st *trainState) { st.History[0].LowerBound = 1 }, "lower bound"},
		{"history cut", func(st *trainState) { st.History = st.History[:1] }, "records of 1"},
		{"best epoch", func(st *trainState) { st.BestEpoch = st.BestEpoch%2 + 1 }, "best epoch"},
		{"best score", func(st *trainState) { st.BestValid /= 2 }, "best epoch"},
		{"bad epochs", func(st *trainState) { st.Bad++ }, "without improvement"},
		{"early stop", func(st *trainState) { st.Done = true }, "early"},
		{"model damaged", func(st *trainState) { st.Model[len(st.Model)/2] ^= 1 }, "its model"},
		{"best model damaged", func(st *trainState) { st.Best[len(st.Best)/2] ^= 1 }, "best model"},
		{"best model missing", func(st *trainState) { st.Best = nil }, "best model"},
		{"optimizer learning rate", func(st *trainState) { st.Optimizer = sgd(0.25) }, "learning rate 0.25"},
		{"optimizer state", func(st *trainState) { st.Optimizer = []byte("junk") }, "optimizer state"},
		{"objective state missing", func(st *trainState) { st.Objective = nil }, "no state of the objective"},
		{"objective state truncated", func(st *trainState) { st.Objective = st.Objective[:len(st.Objective)-8] }, "objective state"},
		{"objective state NaN", nanLSTM, "LSTM state"},
	} {
		t.Run("version 2 "+c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "ckpt")
			st := readState(t, good)
			c.edit(st)
			writeLegacy(t, p, st)
			resume(t, p)
			m := newTiny(t, streamConfigs()["rns-D3"], 1)
			if _, err := Fit(m, tinyStream(t, m, 4), streamTC(p)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
	// The unedited version-2 form resumes: the checks refuse only what is
	// inconsistent.
	t.Run("version 2 unedited", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "ckpt")
		writeLegacy(t, p, readState(t, good))
		m := newTiny(t, streamConfigs()["rns-D3"], 1)
		if _, err := Fit(m, tinyStream(t, m, 4), streamTC(p)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCheckpointOtherSeedSetting checks that a checkpoint copied from a run
// whose Settings give another seed is refused, naming the file and the
// setting, in both formats.
func TestCheckpointOtherSeedSetting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt")
	stoppedStream(t, path, 2, 3)
	withSeed := func(seed string) TrainConfig {
		c := streamTC(path)
		c.Settings["seed"] = seed
		return c
	}
	for _, version := range []int{4, 3, 2} {
		legacy := version
		st := readState(t, path)
		st.Settings["settings.seed"] = "1"
		switch version {
		case 2:
			writeLegacy(t, path, st)
		case 3:
			writeV3(t, path, st)
		default:
			writeV4(t, path, st)
		}
		m := newTiny(t, streamConfigs()["rns-D3"], 1)
		_, err := Fit(m, tinyStream(t, m, 4), withSeed("2"))
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "settings.seed: 1 in the checkpoint, now 2") {
			t.Errorf("version %d: error %v, want one naming %s and the seed", legacy, err, path)
		}
	}
	// A setting the checkpoint lacks (added to the program after it was
	// written) is not compared; one it has and the run has not is refused.
	path = filepath.Join(t.TempDir(), "ckpt")
	stoppedStream(t, path, 2, 3)
	c := streamTC(path)
	c.Settings["digest"] = "abc"
	delete(c.Settings, "data")
	m := newTiny(t, streamConfigs()["rns-D3"], 1)
	if _, err := Fit(m, tinyStream(t, m, 4), c); err == nil || !strings.Contains(err.Error(), "settings.data: tiny in the checkpoint, not set now") || strings.Contains(err.Error(), "digest") {
		t.Errorf("a setting dropped: %v", err)
	}
	c.Settings["data"] = "tiny"
	m = newTiny(t, streamConfigs()["rns-D3"], 1)
	if _, err := Fit(m, tinyStream(t, m, 4), c); err != nil {
		t.Errorf("a setting added since the checkpoint: %v", err)
	}
}

// TestLoadCheckpointModels reads the models of a finished run's
// checkpoint (its best model is the one Fit ended with, bit for bit) and
// of one stopped within an epoch (the model at the checkpoint is not the
// best), and refuses a damaged file, naming it.
func TestLoadCheckpointModels(t *testing.T) {
	dir := t.TempDir()
	finished := filepath.Join(dir, "finished")
	m := newTiny(t, streamConfigs()["rns-D3"], 1)
	res, err := Fit(m, tinyStream(t, m, 4), streamTC(finished))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := LoadCheckpointModels(finished)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := m.MarshalBinary()
	got, _ := cm.Best.MarshalBinary()
	if !bytes.Equal(got, want) {
		t.Error("the checkpoint's best model is not the model Fit ended with")
	}
	if cm.Epochs != res.Epochs || cm.BestEpoch != res.BestEpoch || cm.Steps != 0 || len(cm.History) != res.Epochs {
		t.Errorf("epochs %d, best %d, steps %d, %d records; Fit gave %d epochs, best %d", cm.Epochs, cm.BestEpoch, cm.Steps, len(cm.History), res.Epochs, res.BestEpoch)
	}

	stopped := filepath.Join(dir, "stopped")
	stoppedStream(t, stopped, 3, 3)
	cm, err = LoadCheckpointModels(stopped)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Epochs != 2 || cm.Steps != 3 || cm.BestEpoch < 1 || cm.Best == nil {
		t.Fatalf("epochs %d, steps %d, best epoch %d", cm.Epochs, cm.Steps, cm.BestEpoch)
	}
	now, _ := cm.Model.MarshalBinary()
	best, _ := cm.Best.MarshalBinary()
	if bytes.Equal(now, best) {
		t.Error("three steps into epoch 3, the model at the checkpoint is the best epoch's")
	}
	if cm.Model.Config() != m.Config() {
		t.Errorf("config %+v, want %+v", cm.Model.Config(), m.Config())
	}

	b, _ := os.ReadFile(stopped)
	b[len(b)/2] ^= 1
	damaged := filepath.Join(dir, "damaged")
	if err := os.WriteFile(damaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpointModels(damaged); !errors.Is(err, ErrBadCheckpoint) || !strings.Contains(err.Error(), damaged) {
		t.Errorf("damaged checkpoint: error %v, want one naming %s and wrapping ErrBadCheckpoint", err, damaged)
	}
	if _, err := LoadCheckpointModels(filepath.Join(dir, "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent checkpoint: error %v", err)
	}
}

// TestCheckpointMapCountBomb: a checkpoint whose training state declares
// a map of 2³⁰ settings in a few bytes (encoding/gob makes a map of the
// declared size before reading an entry) is refused as a bad checkpoint
// instead of exhausting memory, as a legacy gob file and inside a
// version 4 file whose checksum agrees.
func TestCheckpointMapCountBomb(t *testing.T) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&trainState{Version: legacyCheckpointVersion, Settings: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	bomb := gobWithMapCount(t, buf.Bytes(), []byte("\x01\x01a\x01b"), []byte{0xfc, 0x40, 0x00, 0x00, 0x00}) // 1<<30
	// The same state as the first section of a version 4 file.
	var v4 bytes.Buffer
	v4.WriteString(checkpointMagic)
	v4.Write(bomb)
	for i := range checkpointSections {
		n := 0
		if i == 0 {
			n = len(bomb)
		}
		v4.Write(binary.LittleEndian.AppendUint64(nil, uint64(n)))
	}
	sum := sha256.Sum256(v4.Bytes())
	v4.Write(sum[:])
	for name, data := range map[string][]byte{"version 2": bomb, "version 4": v4.Bytes()} {
		if _, err := decodeCheckpoint(data); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("%s: %v; want ErrBadCheckpoint", name, err)
		}
	}
	// An honest state still decodes.
	if st, err := decodeCheckpoint(buf.Bytes()); err != nil || st.Settings["a"] != "b" {
		t.Errorf("honest state: %+v, %v", st, err)
	}
}

// gobWithMapCount returns the gob stream enc with the single occurrence
// of entry (a map's count and its entries) in its last message given the
// count count (a gob unsigned integer) instead, that message's length
// adjusted.
func gobWithMapCount(t *testing.T, enc, entry, count []byte) []byte {
	t.Helper()
	// Messages: a length (gob unsigned integer), then that many bytes.
	start := 0
	var last, lastBody int
	for start < len(enc) {
		n, w := uint64(enc[start]), 1
		if enc[start] >= 0x80 {
			k := 256 - int(enc[start])
			n, w = 0, 1+k
			for _, b := range enc[start+1 : start+1+k] {
				n = n<<8 | uint64(b)
			}
		}
		last, lastBody = start, start+w
		start += w + int(n)
	}
	body := enc[lastBody:]
	if bytes.Count(body, entry) != 1 {
		t.Fatalf("the map's entry %q is not once in the last message %q", entry, body)
	}
	i := bytes.Index(body, entry)
	body = append(append(append([]byte(nil), body[:i]...), count...), body[i+1:]...)
	if len(body) >= 0x80 {
		t.Fatalf("message of %d bytes: want one byte of length", len(body))
	}
	return append(append(append([]byte(nil), enc[:last]...), byte(len(body))), body...)
}
