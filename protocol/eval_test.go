package protocol

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func TestEvaluateByLength(t *testing.T) {
	task, _ := data.NewTask(data.MarkedReversal)
	m, err := nsrnn.New(tinySettings().Model, 1)
	if err != nil {
		t.Fatal(err)
	}
	strs, err := SampleTestSet(task, TestSpec{MinLength: 5, MaxLength: 12, PerLength: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := EvaluateByLength(m, task, strs, 5, 12, 2)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Task != data.MarkedReversal || rep.Model != "" || len(rep.ByLength) != 4 {
		t.Fatalf("report %+v; want marked reversal, lengths 5, 7, 9, 11", rep)
	}
	var syms int
	var ce, lb float64
	for i, r := range rep.ByLength {
		if r.Length != 5+2*i || r.Strings != 3 || r.Symbols != 3*(r.Length+1) {
			t.Errorf("row %d: %+v", i, r)
		}
		// The model's cross-entropy of the length, directly.
		var want float64
		for _, w := range strs {
			if len(w) == r.Length {
				lp, err := m.LogProb(w)
				if err != nil {
					t.Fatal(err)
				}
				want -= lp
			}
		}
		if want /= float64(r.Symbols); math.Abs(r.CrossEntropy-want) > 1e-9 {
			t.Errorf("length %d: cross-entropy %v, want %v", r.Length, r.CrossEntropy, want)
		}
		if !(r.LowerBound > 0) || r.Difference != r.CrossEntropy-r.LowerBound {
			t.Errorf("length %d: %+v", r.Length, r)
		}
		syms += r.Symbols
		ce += r.CrossEntropy * float64(r.Symbols)
		lb += r.LowerBound * float64(r.Symbols)
	}
	o := rep.Overall
	if o.Length != 0 || o.Strings != 12 || o.Symbols != syms || math.Abs(o.CrossEntropy-ce/float64(syms)) > 1e-12 ||
		math.Abs(o.LowerBound-lb/float64(syms)) > 1e-12 || o.Difference != o.CrossEntropy-o.LowerBound {
		t.Errorf("overall %+v is not the symbol-weighted mean", o)
	}
	if m.Graphs() == 0 {
		t.Error("EvaluateByLength built no graphs (or released them)")
	}

	var csv strings.Builder
	if err := rep.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if len(lines) != 6 || lines[0] != "length,strings,symbols,cross_entropy,lower_bound,cross_entropy_diff,cross_entropy_diff_given_length" ||
		!strings.HasPrefix(lines[1], "5,3,18,") || !strings.HasPrefix(lines[5], "all,12,"+strconv.Itoa(syms)+",") {
		t.Errorf("CSV:\n%s", csv.String())
	}

	// The difference given the length, against its closed form: given its
	// length n, a marked reversal string v#v^R has probability 2^−(n−1)/2,
	// so the bound of a length is (n−1)/2·log 2 nats per string, over n+1
	// predictions; the overall row weighs each string by its symbols.
	if rep.ValidLengths != 4 {
		t.Errorf("ValidLengths %d, want 4 (lengths 5, 7, 9, 11)", rep.ValidLengths)
	}
	var boundAll float64
	for i, line := range lines[1:] {
		f := strings.Split(line, ",")
		got, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("CSV line %d: %v", i+2, err)
		}
		r := rep.Overall
		want := r.CrossEntropy - boundAll/float64(r.Symbols)
		if i < len(rep.ByLength) {
			r = rep.ByLength[i]
			bound := float64(r.Strings) * float64(r.Length-1) / 2 * math.Log(2)
			boundAll += bound
			want = r.CrossEntropy - bound/float64(r.Symbols)
		}
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("CSV line %d (%q): difference given the length %v, want %v", i+2, line, got, want)
		}
	}
}

func TestEvaluateByLengthErrors(t *testing.T) {
	task, _ := data.NewTask(data.MarkedReversal)
	dyck, _ := data.NewTask(data.Dyck)
	m, _ := nsrnn.New(tinySettings().Model, 1)
	good := [][]int{{0, 2, 0}}
	if _, err := EvaluateByLength(m, task, good, 3, 5, 0); err == nil {
		t.Error("batch size 0: no error")
	}
	if _, err := EvaluateByLength(m, task, nil, 3, 5, 1); err == nil {
		t.Error("no strings: no error")
	}
	if _, err := EvaluateByLength(m, dyck, [][]int{{0, 1}}, 2, 4, 1); err == nil || !strings.Contains(err.Error(), "vocabulary") {
		t.Errorf("other vocabulary: error %v", err)
	}
	_, err := EvaluateByLength(m, task, [][]int{{0, 2, 0}, {0, 1, 2, 0, 1}}, 3, 5, 1)
	if se, ok := errors.AsType[*data.StringError](err); !ok || se.Index != 1 {
		t.Errorf("a string outside the language: error %v, want a *data.StringError of index 1", err)
	}
}
