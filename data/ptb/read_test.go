package ptb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// words returns the words of ids under v.
func words(v *Vocab, ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = v.Word(id)
	}
	return out
}

func TestReadTrainTokens(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		words []string // the vocabulary in id order
		toks  string   // the stream, words separated by spaces
	}{
		{"lines", " a b\n b c\n", []string{"<eos>", "a", "b", "c", "<unk>"}, "a b <eos> b c <eos>"},
		{"no final newline", "a b\nc", []string{"<eos>", "a", "b", "c", "<unk>"}, "a b <eos> c <eos>"},
		{"empty lines", "a\n\n\nb\n", []string{"<eos>", "a", "b", "<unk>"}, "a <eos> <eos> <eos> b <eos>"},
		{"blank line of spaces", "a\n  \t \n", []string{"<eos>", "a", "<unk>"}, "a <eos> <eos>"},
		{"crlf", "a b\r\nc\r\n", []string{"<eos>", "a", "b", "c", "<unk>"}, "a b <eos> c <eos>"},
		{"unk seen", "x <unk> y\n", []string{"<eos>", "x", "<unk>", "y"}, "x <unk> y <eos>"},
		{"literal eos", "a <eos> b\n", []string{"<eos>", "a", "b", "<unk>"}, "a <eos> b <eos>"},
		{"unicode space", "a\u00a0b\u3000c\n", []string{"<eos>", "a", "b", "c", "<unk>"}, "a b c <eos>"},
		{"unicode words", "żółw 猫\n", []string{"<eos>", "żółw", "猫", "<unk>"}, "żółw 猫 <eos>"},
		{"cr only", "a b\rc\r", []string{"<eos>", "a", "b", "c", "<unk>"}, "a b <eos> c <eos>"},
		{"cr only, no final", "a\rb", []string{"<eos>", "a", "b", "<unk>"}, "a <eos> b <eos>"},
		{"cr empty lines", "a\r\r\rb\r", []string{"<eos>", "a", "b", "<unk>"}, "a <eos> <eos> <eos> b <eos>"},
		{"mixed ends", "a\rb\r\nc\nd", []string{"<eos>", "a", "b", "c", "d", "<unk>"}, "a <eos> b <eos> c <eos> d <eos>"},
		{"bom", "\uFEFFa b\n", []string{"<eos>", "a", "b", "<unk>"}, "a b <eos>"},
		{"bom crlf", "\uFEFFa\r\nb\r\n", []string{"<eos>", "a", "b", "<unk>"}, "a <eos> b <eos>"},
		{"bom alone on line", "\uFEFF\na\n", []string{"<eos>", "a", "<unk>"}, "<eos> a <eos>"},
		{"bom later is a word", "a\n\uFEFFb\n", []string{"<eos>", "a", "\uFEFFb", "<unk>"}, "a <eos> \uFEFFb <eos>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, toks, err := ReadTrainFrom(strings.NewReader(tc.text), "t.txt", nil)
			if err != nil {
				t.Fatal(err)
			}
			// Read a byte at a time, every line end falls on a buffer's
			// end: "\r" then "\n" is still one line end.
			v1, toks1, err := ReadTrainFrom(iotest.OneByteReader(strings.NewReader(tc.text)), "t.txt", nil)
			if err != nil || !reflect.DeepEqual(v1.Words(), v.Words()) || !reflect.DeepEqual(toks1, toks) {
				t.Errorf("byte by byte: %q %v, %v; want %q %v", v1.Words(), toks1, err, v.Words(), toks)
			}
			if got := v.Words(); !reflect.DeepEqual(got, tc.words) {
				t.Errorf("vocabulary %q, want %q", got, tc.words)
			}
			if got := strings.Join(words(v, toks), " "); got != tc.toks {
				t.Errorf("tokens %q, want %q", got, tc.toks)
			}
			if v.EOS() != 0 || v.Word(v.Unk()) != UnkWord {
				t.Errorf("EOS %d, Unk %d (%q)", v.EOS(), v.Unk(), v.Word(v.Unk()))
			}
		})
	}
}

func TestReadSplitUnknown(t *testing.T) {
	v, _, err := ReadTrainFrom(strings.NewReader("a b\n"), "train", nil)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := ReadSplitFrom(strings.NewReader("a z b\n"), "valid", v, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(words(v, toks), " "), "a <unk> b <eos>"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Options.Unknown hears of every unknown word, with its file and line.
	var heard []string
	opt := &Options{Unknown: func(file string, line int, w string) { heard = append(heard, fmt.Sprintf("%s:%d:%s", file, line, w)) }}
	if _, err := ReadSplitFrom(strings.NewReader("a z\nb\ny b <unk> x\n"), "valid", v, opt); err != nil {
		t.Fatal(err)
	}
	if want := []string{"valid:1:z", "valid:3:y", "valid:3:x"}; !reflect.DeepEqual(heard, want) {
		t.Errorf("Unknown heard %q, want %q", heard, want)
	}
	_, err = ReadSplitFrom(strings.NewReader("a b\nb z\n"), "valid", v, &Options{Strict: true})
	if !errors.Is(err, ErrUnknownWord) || !strings.Contains(err.Error(), "valid:2:") || !strings.Contains(err.Error(), `"z"`) {
		t.Errorf("strict: error %v, want ErrUnknownWord at valid:2 naming z", err)
	}
}

// TestReadErrors checks that bad files give errors naming the file and line.
func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content *string // nil: no file
		opt     *Options
		is      error  // wanted errors.Is target; nil: only check want
		want    string // substring after the path, e.g. ":3:"
	}{
		{"missing", nil, nil, os.ErrNotExist, ""},
		{"empty", ptr(""), nil, ErrEmpty, ": no words"},
		{"only newlines", ptr("\n \n\n"), nil, ErrEmpty, ": no words"},
		{"invalid utf8 line 3", ptr("a b\nc\nd \xff e\nf\n"), nil, ErrInvalidUTF8, ":3: invalid UTF-8 at byte 3"},
		{"invalid utf8 line 1", ptr("\xc3(\n"), nil, ErrInvalidUTF8, ":1: invalid UTF-8 at byte 1"},
		{"vocab too large", ptr("a b\nc d\ne\n"), &Options{MaxVocab: 5}, ErrVocabTooLarge, ":2: vocabulary too large"},
		{"line too long", ptr("abc\nabcdefgh\n"), &Options{MaxLineBytes: 4}, ErrLineTooLong, ":2: line too long"},
		{"line too long in buffer", ptr("abc\nabcde\n"), &Options{MaxLineBytes: 4}, ErrLineTooLong, ":2: line too long"},
		{"bad option", ptr("a\n"), &Options{MaxVocab: -1}, nil, "MaxVocab"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".txt")
			if tc.content != nil {
				if err := os.WriteFile(path, []byte(*tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := ReadTrain(path, tc.opt)
			check := func(err error) {
				t.Helper()
				if err == nil {
					t.Fatal("no error")
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("error %v is not %v", err, tc.is)
				}
				if tc.is != nil && !strings.Contains(err.Error(), path+tc.want) {
					t.Errorf("error %q does not contain %q", err, path+tc.want)
				}
				if tc.is == nil && !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q does not contain %q", err, tc.want)
				}
			}
			check(err)
			if tc.is == ErrVocabTooLarge {
				return // ReadSplit builds no vocabulary
			}
			v, err := NewVocab([]string{EOSWord, UnkWord, "a", "b", "c", "d", "e"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = ReadSplit(path, v, tc.opt)
			check(err)
		})
	}
}

func ptr(s string) *string { return &s }

func TestLineErrorAs(t *testing.T) {
	_, _, err := ReadTrainFrom(strings.NewReader("a\n\xff\n"), "f", nil)
	var le *LineError
	if !errors.As(err, &le) || le.File != "f" || le.Line != 2 {
		t.Fatalf("error %v: want a *LineError for f line 2, got %+v", err, le)
	}
}

func TestReadMaxVocabCountsUnk(t *testing.T) {
	// <eos>, a, b and the reserved <unk> fill MaxVocab = 4; c is one too many.
	if _, _, err := ReadTrainFrom(strings.NewReader("a b\n"), "f", &Options{MaxVocab: 4}); err != nil {
		t.Errorf("4 words within MaxVocab 4: %v", err)
	}
	if _, _, err := ReadTrainFrom(strings.NewReader("a b c\n"), "f", &Options{MaxVocab: 4}); !errors.Is(err, ErrVocabTooLarge) {
		t.Errorf("5 words over MaxVocab 4: error %v", err)
	}
	// With <unk> in the text no room is reserved for it.
	if _, _, err := ReadTrainFrom(strings.NewReader("a <unk> b\n"), "f", &Options{MaxVocab: 4}); err != nil {
		t.Errorf("<eos> a <unk> b within MaxVocab 4: %v", err)
	}
}

// TestReadMaxTokens: a split of more tokens than Options.MaxTokens is
// ErrSplitTooLarge naming the file and line; one within it is read.
func TestReadMaxTokens(t *testing.T) {
	text := "a b c\nd e f\ng h i\n"
	if _, toks, err := ReadTrainFrom(strings.NewReader(text), "t.txt", &Options{MaxTokens: 12}); err != nil || len(toks) != 12 {
		t.Errorf("12 tokens within 12: %d, %v", len(toks), err)
	}
	_, _, err := ReadTrainFrom(strings.NewReader(text), "t.txt", &Options{MaxTokens: 6})
	var le *LineError
	if !errors.Is(err, ErrSplitTooLarge) || !errors.As(err, &le) || le.File != "t.txt" || le.Line != 3 {
		t.Errorf("12 tokens over 6: %v", err)
	}
	v, _, err := ReadTrainFrom(strings.NewReader(text), "t.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSplitFrom(strings.NewReader(text), "v.txt", v, &Options{MaxTokens: 6}); !errors.Is(err, ErrSplitTooLarge) {
		t.Errorf("ReadSplitFrom over the limit: %v", err)
	}
	if _, _, err := ReadTrainFrom(strings.NewReader(text), "t.txt", &Options{MaxTokens: -1}); err == nil {
		t.Error("MaxTokens -1: no error")
	}
}
