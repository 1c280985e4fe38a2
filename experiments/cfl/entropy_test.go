package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "strings.txt")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEntropyCommandJSON(t *testing.T) {
	// Marked reversal has a closed form: p(w) = (1/K)·2^{-(|w|-1)/2}.
	path := writeFile(t, "#\n0 # 0\n1 0 # 0 1\n")
	status, out, errOut := run("entropy", "--task", "marked-reversal", "--lengths", "0:6", "--in", path, "--json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output %q is not a JSON object: %v", out, err)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"log_probs_given_length", "lower_bound", "strings", "symbols", "valid_lengths"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("output is not one line: %q", out)
	}
	var got struct {
		Strings      int       `json:"strings"`
		Symbols      int       `json:"symbols"`
		ValidLengths int       `json:"valid_lengths"`
		LowerBound   float64   `json:"lower_bound"`
		LogProbs     []float64 `json:"log_probs_given_length"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	const k = 3 // lengths 1, 3, 5
	wantLP := []float64{0, -math.Ln2, -2 * math.Ln2}
	wantH := (3*math.Log(k) + 3*math.Ln2) / (2 + 4 + 6)
	if got.Strings != 3 || got.Symbols != 12 || got.ValidLengths != k {
		t.Errorf("strings %d, symbols %d, K %d; want 3, 12, 3", got.Strings, got.Symbols, got.ValidLengths)
	}
	if math.Abs(got.LowerBound-wantH) > 1e-12 {
		t.Errorf("lower bound %v, want %v", got.LowerBound, wantH)
	}
	for i := range wantLP {
		if i >= len(got.LogProbs) || math.Abs(got.LogProbs[i]-wantLP[i]) > 1e-12 {
			t.Errorf("log probabilities %v, want %v", got.LogProbs, wantLP)
			break
		}
	}
}

func TestEntropyCommandStdin(t *testing.T) {
	task, _ := data.NewTask(data.HardestCFL)
	ws, err := data.SampleStrings(task.Grammar(), 20, 40, 80, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "in.txt")
	if err := data.WriteStringsFile(path, ws, task.Terminals()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdin := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = stdin }()
	status, out, errOut := run("entropy", "--task", "hardest-cfl", "--lengths", "40:80")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	// --in - is standard input too, as it is to most commands.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if status, dash, errOut := run("entropy", "--task", "hardest-cfl", "--lengths", "40:80", "--in", "-"); status != 0 || dash != out {
		t.Errorf("--in -: status %d, %s\n%s\nwant\n%s", status, errOut, dash, out)
	}
	lb, err := data.ComputeLowerBound(task.Grammar(), ws, 40, 80)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"strings        20\n", "lengths        41 in [40, 80] that the task's strings can have\n", "lower bound"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q does not contain %q", out, want)
		}
	}
	var h float64
	if _, err := fmt.Sscanf(out[strings.Index(out, "lower bound"):], "lower bound %f nats/symbol", &h); err != nil || math.Abs(h-lb.Entropy) > 1e-6 {
		t.Errorf("output %q, want lower bound %.6f (%v)", out, lb.Entropy, err)
	}
}

func TestEntropyCommandErrors(t *testing.T) {
	dyck := writeFile(t, "( )\n[ ( ) ]\n( ]\n")
	unknown := writeFile(t, "( )\n\n{ }\n")
	long := writeFile(t, "( )\n( ) ( ) ( )\n")
	empty := writeFile(t, "")
	emptyLine := writeFile(t, "( )\n\n[ ]\n")
	mrEmpty := writeFile(t, "0 # 0\n\n")
	for _, test := range []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"not in language", []string{"--task", "dyck", "--lengths", "0:10", "--in", dyck}, []string{dyck + ":3", "not in the language"}},
		{"unknown symbol", []string{"--task", "dyck", "--lengths", "0:10", "--in", unknown, "--json"}, []string{unknown + ":3", `unknown symbol "{"`}},
		{"too long", []string{"--task", "dyck", "--lengths", "0:4", "--in", long}, []string{long + ":2", "length 6 outside"}},
		{"empty line not in language", []string{"--task", "marked-reversal", "--lengths", "0:10", "--in", mrEmpty}, []string{mrEmpty + ":2", "the empty string (an empty line) is not in the language of marked-reversal"}},
		{"empty line too short", []string{"--task", "dyck", "--lengths", "2:4", "--in", emptyLine}, []string{emptyLine + ":2", "length 0 outside"}},
		{"empty file", []string{"--task", "dyck", "--lengths", "2:4", "--in", empty}, []string{"no strings"}},
		{"missing file", []string{"--task", "dyck", "--lengths", "2:4", "--in", empty + ".missing"}, []string{"--in"}},
		{"unknown task", []string{"--task", "palindrome", "--lengths", "2:4", "--in", dyck}, []string{"--task", "palindrome", "dyck", "padded-reversal"}},
		{"missing task", []string{"--lengths", "2:4", "--in", dyck}, []string{"--task is required"}},
		{"missing lengths", []string{"--task", "dyck", "--in", dyck}, []string{"--lengths is required"}},
		{"malformed lengths", []string{"--task", "dyck", "--lengths", "2..4", "--in", dyck}, []string{"--lengths", "MIN:MAX"}},
		{"min > max", []string{"--task", "dyck", "--lengths", "5:4", "--in", dyck}, []string{"--lengths", "MIN 5 > MAX 4"}},
		{"no valid lengths", []string{"--task", "dyck", "--lengths", "3:3", "--in", dyck}, []string{"--lengths", "no strings"}},
		{"unknown flag", []string{"--task", "dyck", "--lengths", "2:4", "--nope"}, []string{"nope"}},
		{"extra argument", []string{"--task", "dyck", "--lengths", "2:4", dyck}, []string{"unexpected"}},
	} {
		status, out, errOut := run(append([]string{"entropy"}, test.args...)...)
		if status == 0 {
			t.Errorf("%s: status 0", test.name)
		}
		if out != "" {
			t.Errorf("%s: wrote %q to stdout", test.name, out)
		}
		for _, w := range test.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr %q does not contain %q", test.name, errOut, w)
			}
		}
	}
}
