package protocol

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// The records of runs without a lower bound are written as they were
// before one helper wrote them (internal/boundjson): the same bytes as
// the embedded-struct encodings that each type had.
func TestBoundJSONUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	f := func() float64 { return rng.NormFloat64() }
	for range 50 {
		sum := Summary{Task: "t", Model: nsrnn.Config{Kind: nsrnn.RNS, Hidden: 3}, Parameters: rng.IntN(100), Epochs: rng.IntN(9),
			BestEpoch: rng.IntN(9), BestValidCrossEntropy: f(), ElapsedSeconds: f(), SecondsPerEpoch: f(),
			NoLowerBound: true, BestValidPerplexity: f(), BLAS: "gonum"}
		got, err := json.Marshal(sum)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(struct {
			summaryJSON
			ValidLowerBound           *float64 `json:"valid_lower_bound"`
			BestValidCrossEntropyDiff *float64 `json:"best_valid_cross_entropy_diff"`
		}{summaryJSON: summaryJSON(sum)})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("Summary:\n%s\nwant\n%s", got, want)
		}
		sel := Selected{Task: "t", Model: "rns", LR: f(), Seed: uint64(rng.IntN(5)), Dir: "d", NoLowerBound: true, ValidCrossEntropy: f()}
		got, err = json.Marshal(sel)
		if err != nil {
			t.Fatal(err)
		}
		want, err = json.Marshal(struct {
			selectedJSON
			ValidDiff *float64 `json:"valid_cross_entropy_diff,omitempty"`
		}{selectedJSON: selectedJSON(sel)})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("Selected:\n%s\nwant\n%s", got, want)
		}
		rec := nsrnn.EpochRecord{Epoch: rng.IntN(9), TrainLoss: f(), ValidCrossEntropy: f(), LearningRate: f(), ElapsedSeconds: f(),
			EpochSeconds: f(), Improved: rng.IntN(2) == 0, NoLowerBound: true}
		got, err = json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		type recJSON nsrnn.EpochRecord
		want, err = json.Marshal(struct {
			recJSON
			LowerBound      *float64 `json:"lower_bound,omitempty"`
			ValidDifference *float64 `json:"valid_cross_entropy_diff,omitempty"`
		}{recJSON: recJSON(rec)})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("EpochRecord:\n%s\nwant\n%s", got, want)
		}
	}
}
