package main

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
)

func TestParseLengths(t *testing.T) {
	for _, test := range []struct {
		in       string
		min, max int
		err      string
	}{
		{in: "40:80", min: 40, max: 80},
		{in: "0:0", min: 0, max: 0},
		{in: " 3 : 5 ", min: 3, max: 5},
		{in: "40", err: "MIN:MAX"},
		{in: "40-80", err: "MIN:MAX"},
		{in: "a:80", err: "integer"},
		{in: "40:", err: "integer"},
		{in: "1:2:3", err: "integer"},
		{in: "80:40", err: "MIN 80 > MAX 40"},
		{in: "-1:4", err: "negative"},
		{in: "0:100000", err: "exceeds"},
	} {
		lo, hi, err := parseLengths(test.in)
		if test.err != "" {
			if err == nil || !strings.Contains(err.Error(), test.err) {
				t.Errorf("parseLengths(%q): error %v, want one containing %q", test.in, err, test.err)
			}
			continue
		}
		if err != nil || lo != test.min || hi != test.max {
			t.Errorf("parseLengths(%q) = %d, %d, %v; want %d, %d", test.in, lo, hi, err, test.min, test.max)
		}
	}
}

// run runs prog with args and returns the exit status, stdout and stderr.
func run(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	status := prog.Main(args, &stdout, &stderr)
	return status, stdout.String(), stderr.String()
}

func TestSampleCommand(t *testing.T) {
	for _, test := range []struct {
		task     string
		lengths  string
		min, max int
	}{
		{data.MarkedReversal, "40:80", 40, 80},
		{data.Dyck, "2:9", 2, 9},
		{data.HardestCFL, "0:12", 6, 12},
	} {
		args := []string{"sample", "--task", test.task, "--count", "30", "--lengths", test.lengths, "--seed", "3"}
		status, out, errOut := run(args...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", args, status, errOut)
		}
		task, _ := data.NewTask(test.task)
		ws, err := data.ReadStrings(strings.NewReader(out), "stdout", task.Terminals())
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != 30 {
			t.Errorf("%s: %d strings, want 30", test.task, len(ws))
		}
		for _, w := range ws {
			if len(w) < test.min || len(w) > test.max {
				t.Errorf("%s: length %d outside [%d, %d]", test.task, len(w), test.min, test.max)
			}
			if lp, _ := task.Grammar().LogProb(w); math.IsInf(lp, -1) {
				t.Errorf("%s: sampled a string outside the language", test.task)
			}
		}
		if _, again, _ := run(args...); again != out {
			t.Errorf("%s: the same seed gave different output", test.task)
		}
		args[len(args)-1] = "4"
		if _, other, _ := run(args...); other == out {
			t.Errorf("%s: different seeds gave the same output", test.task)
		}
	}
}

// TestSampleCommandChunks checks that cfl sample, which draws and writes
// its strings a chunk at a time, writes the strings of one call of
// data.SampleStrings with its seed, across chunks.
func TestSampleCommandChunks(t *testing.T) {
	const count = 9000 // more than two chunks
	status, out, errOut := run("sample", "--task", data.Dyck, "--count", "9000", "--lengths", "2:6", "--seed", "5")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	task, _ := data.NewTask(data.Dyck)
	want, err := data.SampleStrings(task, count, 2, 6, rand.New(rand.NewPCG(5, 0)))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := data.WriteStrings(&b, want, task.Terminals()); err != nil {
		t.Fatal(err)
	}
	if out != b.String() {
		t.Error("the chunked output differs from data.SampleStrings'")
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

var errWriterFull = errors.New("writer full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errWriterFull
	}
	w.n -= len(p)
	return len(p), nil
}

// TestSampleCommandHugeCount checks that a count far beyond memory is
// streamed: the command fails at its writer's error, after about as much
// as the writer took, instead of exhausting memory before it writes.
func TestSampleCommandHugeCount(t *testing.T) {
	err := runSample([]string{"--task", data.Dyck, "--count", "100000000000", "--lengths", "40:80"}, &failingWriter{n: 1 << 20}, io.Discard)
	if !errors.Is(err, errWriterFull) {
		t.Fatalf("error %v, want the writer's", err)
	}
}

func TestSampleCommandErrors(t *testing.T) {
	for _, test := range []struct {
		args []string
		want []string // substrings of stderr
	}{
		{[]string{"--task", "dyk", "--count", "1", "--lengths", "2:4"}, []string{"--task", "dyk", "marked-reversal", "hardest-cfl"}},
		{[]string{"--count", "1", "--lengths", "2:4"}, []string{"--task is required"}},
		{[]string{"--task", "dyck", "--lengths", "2:4"}, []string{"--count is required"}},
		{[]string{"--task", "dyck", "--count", "1"}, []string{"--lengths is required"}},
		{[]string{"--task", "dyck", "--count", "1", "--lengths", "4"}, []string{"--lengths", "MIN:MAX"}},
		{[]string{"--task", "dyck", "--count", "1", "--lengths", "8:4"}, []string{"--lengths", "MIN 8 > MAX 4"}},
		{[]string{"--task", "dyck", "--count", "-1", "--lengths", "2:4"}, []string{"--count -1 must be at least 1"}},
		{[]string{"--task", "dyck", "--count", "0", "--lengths", "2:4"}, []string{"--count 0 must be at least 1"}},
		{[]string{"--task", "dyck", "--count", "1", "--lengths", "3:3"}, []string{"--lengths", "no strings"}},
		{[]string{"--task", "dyck", "--count", "x", "--lengths", "2:4"}, []string{"count"}},
		{[]string{"--bogus"}, []string{"bogus"}},
	} {
		status, out, errOut := run(append([]string{"sample"}, test.args...)...)
		if status == 0 {
			t.Errorf("%v: status 0", test.args)
		}
		if out != "" {
			t.Errorf("%v: wrote %q to stdout", test.args, out)
		}
		for _, w := range test.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q does not contain %q", test.args, errOut, w)
			}
		}
	}
}
