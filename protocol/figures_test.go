package protocol

import (
	"math"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// TestLengthConditioned evaluates a model by length, converts its curve
// with LengthConditioned, and checks each length's difference against the
// one computed directly from the task: the model's cross-entropy less the
// strings' −log p(w | n) per symbol (SourceLogProb gives log p(w | n)/K).
// A panel without a bound, and the panels given, are left as they were.
func TestLengthConditioned(t *testing.T) {
	task, _ := data.NewTask(data.MarkedReversal)
	m, err := nsrnn.New(tinySettings().Model, 1)
	if err != nil {
		t.Fatal(err)
	}
	const lo, hi = 5, 12 // valid lengths 5, 7, 9, 11: K = 4
	strs, err := SampleTestSet(task, TestSpec{MinLength: lo, MaxLength: hi, PerLength: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := EvaluateByLength(m, task, strs, lo, hi, 2)
	if err != nil {
		t.Fatal(err)
	}
	curve := Curve{Model: nsrnn.LSTM}
	for _, r := range rep.ByLength {
		curve.Points = append(curve.Points, Point{X: float64(r.Length), Y: r.Difference})
	}
	// A second curve that lacks a length (a model whose report is
	// partial) does not change K: the panel's lengths do.
	partial := Curve{Model: nsrnn.RNS, Points: curve.Points[1:]}
	panels := []Panel{{Task: data.MarkedReversal, Curves: []Curve{curve, partial}}, {Task: "user", NoBound: true, Curves: []Curve{curve}}}
	got := LengthConditioned(panels)
	if len(got) != 2 || len(got[0].Curves) != 2 || len(got[0].Curves[0].Points) != 4 || len(got[0].Curves[1].Points) != 3 {
		t.Fatalf("LengthConditioned: %+v", got)
	}
	const K = 4
	for i, r := range rep.ByLength {
		var negLogP float64 // Σ −log p(w | n) over the strings of the length
		for _, w := range strs {
			if len(w) == r.Length {
				lp, err := data.SourceLogProb(task, w, lo, hi)
				if err != nil {
					t.Fatal(err)
				}
				negLogP -= lp + math.Log(K)
			}
		}
		want := r.CrossEntropy - negLogP/float64(r.Symbols)
		pt := got[0].Curves[0].Points[i]
		if pt.X != float64(r.Length) || math.Abs(pt.Y-want) > 1e-12 {
			t.Errorf("length %d: %v, want the length-conditioned difference %v (the 1/K one is %v)", r.Length, pt, want, r.Difference)
		}
		if i > 0 && got[0].Curves[1].Points[i-1] != pt {
			t.Errorf("length %d: the partial curve has %v, want %v", r.Length, got[0].Curves[1].Points[i-1], pt)
		}
		if panels[0].Curves[0].Points[i].Y != r.Difference {
			t.Errorf("length %d: the panel given was modified", r.Length)
		}
		if got[1].Curves[0].Points[i] != curve.Points[i] {
			t.Errorf("length %d: a panel without a bound was converted", r.Length)
		}
	}
}
