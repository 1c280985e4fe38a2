package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

func TestCostAllModels(t *testing.T) {
	args := []string{"--in-process", "--train-size", "4", "--valid-size", "2", "--batch-size", "2", "--lengths", "5:7", "--epochs", "1", "--hidden", "4"}
	var stdout, stderr bytes.Buffer
	if err := runCost(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range append([]string{"scaling", "× LSTM"}, nsrnn.KindNames()...) {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	stdout.Reset()
	if err := runCost(append(args, "--json", "--models", "lstm,rns"), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var rep costReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Models) != 2 || rep.Models[0].Model != "lstm" || rep.Models[1].Model != "rns" {
		t.Fatalf("report %+v", rep.Models)
	}
	// The numbers reported, recomputed: the LSTM's parameters by the
	// closed form 4H(v + H + 2) + (H + 1)(v + 1) for v = 3 inputs and
	// H = 4 units, the RNS-RNN's by nsrnn.CountParams; the epoch scaled
	// from the subset's passes to the protocol's 10,000 + 1,000 strings;
	// the time ratio to the LSTM's.
	rns, err := nsrnn.CountParams(nsrnn.Config{Kind: nsrnn.RNS, InputVocab: 3, OutputVocab: 4, Hidden: 4, States: 2, Symbols: 3})
	if err != nil {
		t.Fatal(err)
	}
	lstm := rep.Models[0]
	for i, want := range []int{4*4*(3+4+2) + 5*4, rns} {
		m := rep.Models[i]
		if m.Parameters != want {
			t.Errorf("%s: %d parameters, want %d", m.Model, m.Parameters, want)
		}
		if !(m.TrainSeconds > 0 && m.ValidSeconds > 0) {
			t.Errorf("%s: passes of %g and %g s", m.Model, m.TrainSeconds, m.ValidSeconds)
		}
		if want := m.TrainSeconds*10000/4 + m.ValidSeconds*1000/2; math.Abs(m.EpochSeconds-want) > 1e-9*want {
			t.Errorf("%s: epoch %g s, want %g from its passes", m.Model, m.EpochSeconds, want)
		}
		if want := m.EpochSeconds / lstm.EpochSeconds; math.Abs(m.TimeRatio-want) > 1e-12*want {
			t.Errorf("%s: time ratio %g, want %g", m.Model, m.TimeRatio, want)
		}
	}
}
