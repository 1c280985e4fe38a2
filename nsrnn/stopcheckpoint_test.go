package nsrnn

import (
	"errors"
	"path/filepath"
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
	resumeAndCompare(t, cfg, c, 2, 4, want, full)
}
