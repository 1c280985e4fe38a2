package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// TestProgressLines checks the lines written without a terminal: the
// epoch it resumes at, and one line per epoch with its numbers and units.
func TestProgressLines(t *testing.T) {
	var b bytes.Buffer
	rec := Progress(&b, "rns", false)
	events := []nsrnn.Event{
		{Kind: nsrnn.Started, Epoch: 3, Steps: 100, MaxEpochs: 200, Resumed: true},
		{Kind: nsrnn.StepDone, Epoch: 3, Step: 1, Steps: 100, MaxEpochs: 200, Loss: 0.6},
		{Kind: nsrnn.EpochDone, Epoch: 3, Step: 100, Steps: 100, MaxEpochs: 200, Record: &nsrnn.EpochRecord{
			Epoch: 3, TrainLoss: 0.51234, ValidCrossEntropy: 0.45671, LowerBound: 0.38, ValidDifference: 0.07671,
			LearningRate: 0.005, ElapsedSeconds: 208.4, Improved: true}},
		{Kind: nsrnn.EpochDone, Epoch: 4, Step: 100, Steps: 100, MaxEpochs: 200, Record: &nsrnn.EpochRecord{
			Epoch: 4, TrainLoss: 0.5, ValidCrossEntropy: 0.46, ValidDifference: 0.08, LearningRate: 0.0045, ElapsedSeconds: 300}},
	}
	for _, e := range events {
		if err := rec.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), b.String())
	}
	if want := "rns: resuming at epoch 3 of at most 200 (2 epochs done, from the checkpoint)"; lines[0] != want {
		t.Errorf("resume line %q, want %q", lines[0], want)
	}
	for _, want := range []string{"rns epoch 3 of at most 200", "nats per symbol", "train 0.5123", "validation 0.4567",
		"+0.0767 from the lower bound", "lr 0.005", "3m28s elapsed", "best so far"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("epoch line %q lacks %q", lines[1], want)
		}
	}
	if strings.Contains(lines[2], "best") || !strings.Contains(lines[2], "epoch 4 ") {
		t.Errorf("second epoch line %q", lines[2])
	}
}
