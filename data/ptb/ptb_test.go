package ptb

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedDir holds Mikolov's files when the shared data is present.
const sharedDir = "../../../shared/data/ptb"

func needData(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(sharedDir, TrainFile)); err != nil {
		tb.Skipf("Penn Treebank not available: %v", err)
	}
}

// TestPTB checks the corpus against the counts of the data README: tokens
// with <eos>, targets, the vocabulary, and the batching of every split.
func TestPTB(t *testing.T) {
	needData(t)
	c, err := Load(sharedDir, &Options{Strict: true}) // valid and test have no word outside train
	if err != nil {
		t.Fatal(err)
	}
	v := c.Vocab
	if v.Size() != 10000 {
		t.Errorf("vocabulary of %d words, want 10,000", v.Size())
	}
	if v.EOS() != 0 || v.Word(0) != EOSWord || v.Word(v.Unk()) != UnkWord {
		t.Errorf("EOS %d, Unk %d (%q)", v.EOS(), v.Unk(), v.Word(v.Unk()))
	}
	if first := v.Word(1); first != "aer" { // the first word of ptb.train.txt
		t.Errorf("id 1 is %q, want aer", first)
	}
	splits := []struct {
		name    string
		toks    []int
		n       int // tokens with <eos>
		targets int
		lines   int
	}{
		{"train", c.Train, 929589, 929588, 42068},
		{"valid", c.Valid, 73760, 73759, 3370},
		{"test", c.Test, 82430, 82429, 3761},
	}
	for _, s := range splits {
		t.Run(s.name, func(t *testing.T) {
			if len(s.toks) != s.n {
				t.Errorf("%d tokens, want %d", len(s.toks), s.n)
			}
			eos := 0
			for _, x := range s.toks {
				if x < 0 || x >= v.Size() {
					t.Fatalf("token id %d out of range", x)
				}
				if x == v.EOS() {
					eos++
				}
			}
			if eos != s.lines {
				t.Errorf("%d <eos>, want one per line, %d", eos, s.lines)
			}
			if s.toks[len(s.toks)-1] != v.EOS() {
				t.Error("the split does not end in <eos>")
			}
			for _, bt := range []struct{ B, T int }{{20, 35}, {10, 35}, {7, 33}, {1, 1000}} {
				b, err := NewBatcher(s.toks, bt.B, bt.T, v.EOS())
				if err != nil {
					t.Fatal(err)
				}
				if b.NumTargets() != s.targets {
					t.Errorf("B=%d T=%d: %d targets, want %d", bt.B, bt.T, b.NumTargets(), s.targets)
				}
				checkChunks(t, s.toks, bt.B, bt.T, v.EOS())
			}
		})
	}
	// The numbers the package documentation quotes for B = 20, T = 35.
	b, err := NewBatcher(c.Train, 20, 35, v.EOS())
	if err != nil {
		t.Fatal(err)
	}
	if b.RowLen() != 46480 || b.NumChunks() != 1328 || 20*b.RowLen()-b.NumTargets() != 12 {
		t.Errorf("train B=20 T=35: L %d, %d chunks, %d padded; want 46,480, 1,328, 12", b.RowLen(), b.NumChunks(), 20*b.RowLen()-b.NumTargets())
	}

	// Save and load the real vocabulary.
	path := filepath.Join(t.TempDir(), "vocab.txt")
	if err := v.Save(path); err != nil {
		t.Fatal(err)
	}
	w, err := LoadVocab(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.Size() != v.Size() || w.Unk() != v.Unk() || w.EOS() != v.EOS() {
		t.Errorf("loaded vocabulary differs: %d %d %d", w.Size(), w.Unk(), w.EOS())
	}
	for id := range v.Size() {
		if w.Word(id) != v.Word(id) {
			t.Fatalf("loaded word %d is %q, want %q", id, w.Word(id), v.Word(id))
		}
	}
	// Reading valid with the loaded vocabulary gives the same ids.
	valid, err := ReadSplit(filepath.Join(sharedDir, ValidFile), w, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range valid {
		if valid[i] != c.Valid[i] {
			t.Fatalf("valid token %d: %d with the loaded vocabulary, %d before", i, valid[i], c.Valid[i])
		}
	}
}

func TestLoadErrorsNameFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		setup func()
		is    error
		want  string
	}{
		{func() {}, os.ErrNotExist, TrainFile},
		{func() { write(TrainFile, "a b\n") }, os.ErrNotExist, ValidFile},
		{func() { write(ValidFile, "a\n") }, os.ErrNotExist, TestFile},
		{func() { write(TestFile, "") }, ErrEmpty, TestFile + ": no words"},
		{func() { write(TestFile, "b\na \xff\n") }, ErrInvalidUTF8, TestFile + ":2: invalid UTF-8"},
	}
	for i, tc := range tests {
		tc.setup()
		c, err := Load(dir, nil)
		if c != nil || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), filepath.Join(dir, tc.want)) {
			t.Errorf("case %d: error %v, want %v naming %s", i, err, tc.is, tc.want)
		}
	}
	// A directory in a split's place: its read error names the file and
	// no line, since none was read.
	test := filepath.Join(dir, TestFile)
	if err := os.Remove(test); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(test, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, nil); err == nil || !strings.Contains(err.Error(), test+": ") || strings.Contains(err.Error(), test+":1:") {
		t.Errorf("a directory as %s: error %v, want one naming it without a line", TestFile, err)
	}
	if err := os.Remove(test); err != nil {
		t.Fatal(err)
	}
	write(TestFile, "b z a\n")
	c, err := Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Train) != 3 || len(c.Valid) != 2 || len(c.Test) != 4 || c.Test[1] != c.Vocab.Unk() {
		t.Errorf("corpus %+v", c)
	}
}

func BenchmarkReadTrain(b *testing.B) {
	needData(b)
	path := filepath.Join(sharedDir, TrainFile)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		if _, _, err := ReadTrain(path, nil); err != nil {
			b.Fatal(err)
		}
	}
}
