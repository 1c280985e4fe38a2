package nsrnn

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

// TestFitStopAfterCheckpoint: ErrStopAfterCheckpoint at a step within an
// epoch, with no periodic checkpoint, writes one of that step, so that
// the resumed run continues at the next step and ends bit for bit where
// an uninterrupted run ends.
func TestFitStopAfterCheckpoint(t *testing.T) {
	if !errors.Is(ErrStopAfterCheckpoint, ErrStop) {
		t.Fatal("ErrStopAfterCheckpoint does not wrap ErrStop")
	}
	cfg := streamConfigs()["rns-D3"]
	dir := t.TempDir()
	tc := func(name string) TrainConfig {
		return TrainConfig{
			Optimizer: NewSGD(0.5), Clip: 1, Schedule: &Plateau{Factor: 1 / 1.5, Patience: 0, Threshold: 1e-4},
			EarlyStop: 2, MaxEpochs: 3, Seed: 3, Checkpoint: filepath.Join(dir, name),
		}
	}
	full := newTiny(t, cfg, 1)
	want, err := Fit(full, tinyStream(t, full, 4), tc("full"))
	if err != nil {
		t.Fatal(err)
	}
	part := newTiny(t, cfg, 1)
	c := tc("part")
	c.Recorder = RecorderFunc(func(e Event) error {
		if e.Kind == StepDone && e.Epoch == 2 && e.Step == 4 {
			return ErrStopAfterCheckpoint
		}
		return nil
	})
	if stopped, err := Fit(part, tinyStream(t, part, 4), c); err != nil || stopped.Finished {
		t.Fatalf("stopped run: %+v, %v", stopped, err)
	}
	resumed := newTiny(t, cfg, 99)
	var started Event
	c.Recorder = RecorderFunc(func(e Event) error {
		if e.Kind == Started {
			started = e
		}
		return nil
	})
	got, err := Fit(resumed, tinyStream(t, resumed, 4), c)
	if err != nil {
		t.Fatal(err)
	}
	if !started.Resumed || started.Epoch != 2 || started.Step != 4 {
		t.Errorf("resumed at epoch %d step %d (resumed %v), want epoch 2 step 4", started.Epoch, started.Step, started.Resumed)
	}
	if !reflect.DeepEqual(withoutTiming(got.History), withoutTiming(want.History)) || !sameBits(paramData(resumed), paramData(full)) {
		t.Error("the run stopped with a checkpoint and resumed ends elsewhere than an uninterrupted run")
	}
}
