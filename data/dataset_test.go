package data

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSampleBatches(t *testing.T) {
	for _, test := range []struct {
		task                            string
		numStrings, batchSize, min, max int
		sizes                           []int
	}{
		{MarkedReversal, 25, 10, 40, 80, []int{10, 10, 5}},
		{Dyck, 30, 10, 40, 80, []int{10, 10, 10}},
		{HardestCFL, 3, 10, 40, 80, []int{3}},
		{PaddedReversal, 0, 10, 40, 80, nil},
		{UnmarkedReversal, 7, 1, 3, 5, []int{1, 1, 1, 1, 1, 1, 1}},
	} {
		g := mustTask(t, test.task).Grammar()
		valid, _ := g.ValidLengths(test.min, test.max)
		sample := func(seed uint64) [][][]int {
			b, err := SampleBatches(g, test.numStrings, test.batchSize, test.min, test.max, rand.New(rand.NewPCG(seed, 1)))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		batches := sample(1)
		var sizes []int
		for _, b := range batches {
			sizes = append(sizes, len(b))
			for _, w := range b {
				if len(w) != len(b[0]) {
					t.Errorf("%s: batch with lengths %d and %d", test.task, len(b[0]), len(w))
				}
				if lp, _ := g.LogProb(w); math.IsInf(lp, -1) {
					t.Errorf("%s: sampled a string outside the language", test.task)
				}
			}
			if len(b) > 0 && !containsInt(valid, len(b[0])) {
				t.Errorf("%s: batch length %d not valid", test.task, len(b[0]))
			}
		}
		if !reflect.DeepEqual(sizes, test.sizes) {
			t.Errorf("%s: batch sizes %v, want %v", test.task, sizes, test.sizes)
		}
		if again := sample(1); !reflect.DeepEqual(batches, again) {
			t.Errorf("%s: same seed gave different batches", test.task)
		}
		if test.numStrings > 5 && reflect.DeepEqual(batches, sample(2)) {
			t.Errorf("%s: different seeds gave the same batches", test.task)
		}
		split, err := SplitBatches(Flatten(batches), test.batchSize)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(split, batches) {
			t.Errorf("%s: SplitBatches(Flatten(b)) != b", test.task)
		}
	}
}

func containsInt(s []int, x int) bool {
	for _, y := range s {
		if x == y {
			return true
		}
	}
	return false
}

func TestBatchLengthsUniform(t *testing.T) {
	// Batch lengths are uniform over the valid lengths: every valid length
	// of marked reversal in [1, 9] appears about equally often.
	g := mustTask(t, MarkedReversal).Grammar()
	batches, err := SampleBatches(g, 5000, 1, 0, 9, rand.New(rand.NewPCG(7, 7)))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int]int{}
	for _, b := range batches {
		counts[len(b[0])]++
	}
	for _, n := range []int{1, 3, 5, 7, 9} {
		if c := counts[n]; c < 850 || c > 1150 {
			t.Errorf("length %d drawn %d times out of 5000, want about 1000", n, c)
		}
	}
	if len(counts) != 5 {
		t.Errorf("lengths drawn: %v", counts)
	}
}

func TestSampleTestSet(t *testing.T) {
	g := mustTask(t, UnmarkedReversal).Grammar()
	ws, err := SampleTestSet(g, 3, 40, 45, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	var lens []int
	for _, w := range ws {
		lens = append(lens, len(w))
	}
	if want := []int{40, 40, 40, 42, 42, 42, 44, 44, 44}; !reflect.DeepEqual(lens, want) {
		t.Errorf("lengths %v, want %v", lens, want)
	}
	again, _ := SampleTestSet(g, 3, 40, 45, rand.New(rand.NewPCG(1, 1)))
	if !reflect.DeepEqual(ws, again) {
		t.Error("same seed gave different test sets")
	}
}

func TestSampleStrings(t *testing.T) {
	g := mustTask(t, HardestCFL).Grammar()
	a, err := SampleStrings(g, 50, 6, 12, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := SampleStrings(g, 50, 6, 12, rand.New(rand.NewPCG(9, 9)))
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed gave different strings")
	}
	for _, w := range a {
		if len(w) < 6 || len(w) > 12 {
			t.Errorf("length %d outside [6, 12]", len(w))
		}
	}
}

func TestDatasetErrors(t *testing.T) {
	g := mustTask(t, HardestCFL).Grammar()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, test := range []struct {
		name string
		err  error
	}{
		{"no valid lengths", func() error { _, err := SampleBatches(g, 10, 2, 0, 5, rng); return err }()},
		{"min > max", func() error { _, err := SampleBatches(g, 10, 2, 50, 40, rng); return err }()},
		{"zero batch", func() error { _, err := SampleBatches(g, 10, 0, 40, 80, rng); return err }()},
		{"negative count", func() error { _, err := SampleStrings(g, -1, 40, 80, rng); return err }()},
		{"nil rng", func() error { _, err := SampleTestSet(g, 1, 40, 80, nil); return err }()},
		{"split zero", func() error { _, err := SplitBatches(nil, 0); return err }()},
		// More than MaxSampleWords of strings: refused before any is drawn.
		{"too many strings", func() error { _, err := SampleStrings(g, 1e11, 40, 80, rng); return err }()},
		{"too many batches", func() error { _, err := SampleBatches(g, 1e11, 10, 40, 80, rng); return err }()},
		{"too many per length", func() error { _, err := SampleTestSet(g, 1e8, 40, 80, rng); return err }()},
		{"overflowing per length", func() error { _, err := SampleTestSet(g, math.MaxInt/2, 40, 80, rng); return err }()},
	} {
		if test.err == nil {
			t.Errorf("%s: no error", test.name)
		}
	}
}

// TestCheckSampleSize checks the limit of MaxSampleWords at its edge.
func TestCheckSampleSize(t *testing.T) {
	for _, c := range []struct {
		count, maxLen int
		ok            bool
	}{
		{0, 0, true},
		{10000, 80, true},
		{MaxSampleWords / 83, 80, true},
		{MaxSampleWords/83 + 1, 80, false},
		{math.MaxInt, 1, false},
		{1, math.MaxInt - 3, false},
		{5, math.MaxInt, false},
		{-1, 80, false},
		{1, -1, false},
	} {
		err := CheckSampleSize(c.count, c.maxLen)
		if (err == nil) != c.ok {
			t.Errorf("CheckSampleSize(%d, %d) = %v; want ok %v", c.count, c.maxLen, err, c.ok)
		}
		if err != nil && strings.Contains(err.Error(), "-") && c.count >= 0 && c.maxLen >= 0 {
			t.Errorf("CheckSampleSize(%d, %d): %v, a negative size", c.count, c.maxLen, err)
		}
	}
}

func TestTextRoundTrip(t *testing.T) {
	for _, name := range TaskNames() {
		task := mustTask(t, name)
		ws, err := SampleStrings(task.Grammar(), 20, 0, 12, rand.New(rand.NewPCG(2, 3)))
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, []int{}) // the empty string, as an empty line
		var buf bytes.Buffer
		if err := WriteStrings(&buf, ws, task.Terminals()); err != nil {
			t.Fatal(err)
		}
		got, err := ReadStrings(&buf, "buf", task.Terminals())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ws) {
			t.Errorf("%s: round trip changed the strings", name)
		}
		path := filepath.Join(t.TempDir(), "set.txt")
		if err := WriteStringsFile(path, ws, task.Terminals()); err != nil {
			t.Fatal(err)
		}
		got, err = ReadStringsFile(path, task.Terminals())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ws) {
			t.Errorf("%s: file round trip changed the strings", name)
		}
		// A write that fails (an index out of range) leaves the file as
		// it was, and no temporary file beside it.
		if err := WriteStringsFile(path, [][]int{{0}, {len(task.Terminals())}}, task.Terminals()); err == nil {
			t.Errorf("%s: an index out of range was written", name)
		}
		if got, err = ReadStringsFile(path, task.Terminals()); err != nil || !reflect.DeepEqual(got, ws) {
			t.Errorf("%s: a failed write changed the file (%v)", name, err)
		}
		if ents, err := os.ReadDir(filepath.Dir(path)); err != nil || len(ents) != 1 {
			t.Errorf("%s: %d entries beside the file after a failed write (%v)", name, len(ents), err)
		}
	}
}

func TestReadStrings(t *testing.T) {
	syms := []string{"(", ")", "[", "]"}
	for _, test := range []struct {
		in      string
		want    [][]int
		errLine int
	}{
		{in: "", want: [][]int{}},
		{in: "\n", want: [][]int{{}}},
		{in: "( )\n[ ]", want: [][]int{{0, 1}, {2, 3}}},
		{in: "( )\r\n\n[ ]\n", want: [][]int{{0, 1}, {}, {2, 3}}},
		{in: "( )\r\r[ ]\r", want: [][]int{{0, 1}, {}, {2, 3}}},
		{in: "\uFEFF( )\n[ ]", want: [][]int{{0, 1}, {2, 3}}},
		{in: "\uFEFF( )\r( x )\r", errLine: 2},
		{in: "( )\n( x )\n", errLine: 2},
		{in: "(\n)\n\n[ ] {\n", errLine: 4},
	} {
		got, err := ReadStrings(strings.NewReader(test.in), "f.txt", syms)
		if test.errLine > 0 {
			var le *LineError
			if !errors.As(err, &le) || le.Line != test.errLine || le.Name != "f.txt" {
				t.Errorf("%q: error %v, want one for f.txt line %d", test.in, err, test.errLine)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", test.in, err)
			continue
		}
		if !reflect.DeepEqual(got, test.want) {
			t.Errorf("%q: got %v, want %v", test.in, got, test.want)
		}
	}
	if err := WriteStrings(&bytes.Buffer{}, [][]int{{0, 4}}, syms); err == nil {
		t.Error("WriteStrings accepted an out-of-range index")
	}
	// A large vocabulary: every symbol maps to its index (a map, not a
	// search per token), and a repeated symbol to its first index.
	big := make([]string, 50000)
	var line strings.Builder
	for i := range big {
		big[i] = fmt.Sprint("s", i)
	}
	// In lines of 1,000 symbols (MaxLength bounds a string).
	for i := range big {
		fmt.Fprint(&line, big[len(big)-1-i], " ")
		if i%1000 == 999 {
			line.WriteString("\n")
		}
	}
	got, err := ReadStrings(strings.NewReader(line.String()), "big.txt", big)
	if err != nil || len(got) != 50 || len(got[0]) != 1000 || got[0][0] != len(big)-1 || got[49][999] != 0 {
		t.Errorf("large vocabulary: %d strings, %v", len(got), err)
	}
	if w, err := ParseString("a b a", []string{"a", "b", "a"}); err != nil || !reflect.DeepEqual(w, []int{0, 1, 0}) {
		t.Errorf("repeated symbol: %v, %v", w, err)
	}
}

// TestReadFilesEndless: the File readers of strings, vocabularies and
// grammars refuse a file that does not end (a link to /dev/zero), naming
// it, instead of reading it into memory.
func TestReadFilesEndless(t *testing.T) {
	zero := filepath.Join(t.TempDir(), "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip(err)
	}
	for name, read := range map[string]func() error{
		"ReadStringsFile":    func() error { _, err := ReadStringsFile(zero, []string{"a"}); return err },
		"ReadVocabularyFile": func() error { _, err := ReadVocabularyFile(zero); return err },
		"ReadPCFGFile":       func() error { _, err := ReadPCFGFile(zero); return err },
	} {
		if err := read(); err == nil || !strings.Contains(err.Error(), zero) {
			t.Errorf("%s: %v, want an error naming %s", name, err, zero)
		}
	}
}

// TestReadInvalidUTF8 checks that every reader of the user's strings
// refuses a line that is not valid UTF-8 with an error naming the file
// and the line, instead of reading its bytes as symbols.
func TestReadInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	for _, test := range []struct {
		name, text string
		line       int
	}{
		{"lone byte", "a b\nb \xff a\n", 2},
		{"truncated sequence", "a \xc3\n", 1},
		{"surrogate", "a\nb\n\xed\xa0\x80\n", 3},
		{"after a BOM", "\ufeffa\r\xfe\xff\r", 2},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(test.name, " ", "-")+".txt")
		if err := os.WriteFile(path, []byte(test.text), 0o644); err != nil {
			t.Fatal(err)
		}
		for reader, read := range map[string]func() error{
			"ReadStrings": func() error {
				_, err := ReadStrings(strings.NewReader(test.text), path, []string{"a", "b", "\ufffd"})
				return err
			},
			"ReadStringsFile": func() error { _, err := ReadStringsFile(path, []string{"a", "b", "\ufffd"}); return err },
			"ReadTokens": func() error {
				_, err := ReadTokens(strings.NewReader(test.text), path)
				return err
			},
			"ReadVocabularyFile": func() error { _, err := ReadVocabularyFile(path); return err },
		} {
			err := read()
			le, ok := errors.AsType[*LineError](err)
			if !ok || le.Name != path || le.Line != test.line || !errors.Is(err, ErrInvalidUTF8) {
				t.Errorf("%s: %s: error %v, want %v at %s line %d", test.name, reader, err, ErrInvalidUTF8, path, test.line)
			}
		}
	}
}
