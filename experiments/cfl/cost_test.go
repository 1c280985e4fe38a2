package main

import (
	"bytes"
	"encoding/json"
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
	if len(rep.Models) != 2 || rep.Models[0].TimeRatio != 1 || rep.Models[1].EpochSeconds <= 0 || rep.Models[1].Parameters <= rep.Models[0].Parameters {
		t.Errorf("report %+v", rep.Models)
	}
}
