package ptb

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestVocabLookup(t *testing.T) {
	v, err := NewVocab([]string{"the", UnkWord, "cat", EOSWord})
	if err != nil {
		t.Fatal(err)
	}
	if v.Size() != 4 || v.EOS() != 3 || v.Unk() != 1 {
		t.Errorf("Size %d EOS %d Unk %d, want 4 3 1", v.Size(), v.EOS(), v.Unk())
	}
	tests := []struct {
		word string
		id   int
		ok   bool
	}{{"the", 0, true}, {"cat", 2, true}, {EOSWord, 3, true}, {"dog", 1, false}, {"", 1, false}}
	for _, tc := range tests {
		if got := v.ID(tc.word); got != tc.id {
			t.Errorf("ID(%q) = %d, want %d", tc.word, got, tc.id)
		}
		if id, ok := v.Lookup(tc.word); ok != tc.ok || (ok && id != tc.id) {
			t.Errorf("Lookup(%q) = %d, %v", tc.word, id, ok)
		}
	}
	for id, w := range map[int]string{0: "the", 2: "cat", -1: "", 4: ""} {
		if got := v.Word(id); got != w {
			t.Errorf("Word(%d) = %q, want %q", id, got, w)
		}
	}
}

func TestNewVocabErrors(t *testing.T) {
	tests := []struct {
		words []string
		is    error
	}{
		{[]string{EOSWord, UnkWord, "a", "a"}, ErrDuplicateWord},
		{[]string{EOSWord, UnkWord, ""}, ErrBadWord},
		{[]string{EOSWord, UnkWord, "a b"}, ErrBadWord},
		{[]string{EOSWord, UnkWord, "\xff"}, ErrInvalidUTF8},
		{[]string{EOSWord, "a"}, ErrMissingWord},
		{[]string{UnkWord}, ErrMissingWord},
		{nil, ErrMissingWord},
	}
	for _, tc := range tests {
		if _, err := NewVocab(tc.words); !errors.Is(err, tc.is) {
			t.Errorf("NewVocab(%q): error %v, want %v", tc.words, err, tc.is)
		}
	}
}

func TestVocabSaveLoad(t *testing.T) {
	dir := t.TempDir()
	v, _, err := ReadTrainFrom(strings.NewReader("the cat sat\non the <unk> mat\n"), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "vocab.txt")
	if err := os.WriteFile(path, []byte("old content\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := v.Save(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "<eos>\nthe\ncat\nsat\non\n<unk>\nmat\n"; string(b) != want {
		t.Errorf("file %q, want %q", b, want)
	}
	w, err := LoadVocab(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w.Words(), v.Words()) || w.EOS() != v.EOS() || w.Unk() != v.Unk() {
		t.Errorf("loaded %q (EOS %d Unk %d), saved %q (EOS %d Unk %d)", w.Words(), w.EOS(), w.Unk(), v.Words(), v.EOS(), v.Unk())
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only vocab.txt (no temporary file left)", len(ents))
	}

	// Byte form.
	text, err := v.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	if string(text) != string(b) {
		t.Errorf("MarshalText %q differs from the file %q", text, b)
	}
	var u Vocab
	if err := u.UnmarshalText(text); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(u.Words(), v.Words()) || u.ID("mat") != v.ID("mat") || u.Unk() != v.Unk() {
		t.Errorf("UnmarshalText gave %q", u.Words())
	}
	if _, err := new(Vocab).MarshalText(); err == nil {
		t.Error("MarshalText of the zero Vocab: no error")
	}
	if err := new(Vocab).Save(filepath.Join(dir, "zero.txt")); err == nil {
		t.Error("Save of the zero Vocab: no error")
	}
	if err := v.Save(filepath.Join(dir, "no", "such", "dir.txt")); err == nil {
		t.Error("Save into a missing directory: no error")
	}
}

// TestLoadVocabErrors checks that bad vocabulary files give errors naming
// the file and line.
func TestLoadVocabErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		opt     *Options
		is      error
		want    string // after the path
	}{
		{"duplicate", "<eos>\n<unk>\na\nb\na\n", nil, ErrDuplicateWord, `:5: duplicate word "a" (also line 3)`},
		{"empty word", "<eos>\n<unk>\n\na\n", nil, ErrBadWord, ":3: bad word: empty"},
		{"space in word", "<eos>\na b\n<unk>\n", nil, ErrBadWord, ":2: bad word"},
		{"invalid utf8", "<eos>\n<unk>\nok\n\xfe\n", nil, ErrInvalidUTF8, ":4: invalid UTF-8"},
		{"missing eos", "<unk>\na\n", nil, ErrMissingWord, ": missing required word <eos>"},
		{"missing unk", "<eos>\na\n", nil, ErrMissingWord, ": missing required word <unk>"},
		{"empty file", "", nil, ErrEmpty, ": no words"},
		{"too many", "<eos>\n<unk>\na\nb\n", &Options{MaxVocab: 3}, ErrVocabTooLarge, ":4: vocabulary too large"},
		{"line too long", "<eos>\n<unk>\nabcdefghij\n", &Options{MaxLineBytes: 5}, ErrLineTooLong, ":3: line too long"},
		{"missing file", "", nil, os.ErrNotExist, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			if tc.is != os.ErrNotExist {
				if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadVocab(path, tc.opt)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), path+tc.want) {
				t.Errorf("error %v, want %v containing %q", err, tc.is, path+tc.want)
			}
			if tc.opt != nil || tc.is == os.ErrNotExist {
				return
			}
			// The byte form reports the same line without a file name.
			var v Vocab
			err = v.UnmarshalText([]byte(tc.content))
			if !errors.Is(err, tc.is) {
				t.Errorf("UnmarshalText: error %v, want %v", err, tc.is)
			}
			if v.Size() != 0 {
				t.Errorf("UnmarshalText changed the Vocab on error")
			}
		})
	}
	var v Vocab
	err := v.UnmarshalText([]byte("<eos>\n<unk>\n<eos>\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3: duplicate") {
		t.Errorf("UnmarshalText duplicate: error %v, want one naming line 3", err)
	}
	// No final newline is fine.
	if err := v.UnmarshalText([]byte("<eos>\n<unk>\nlast")); err != nil || v.ID("last") != 2 {
		t.Errorf("UnmarshalText without final newline: %v, ID %d", err, v.ID("last"))
	}
}

// TestVocabLineEnds: a vocabulary file with a byte-order mark and CR,
// CRLF or LF line ends reads as the same words.
func TestVocabLineEnds(t *testing.T) {
	want := []string{EOSWord, UnkWord, "a", "b"}
	for _, text := range []string{"<eos>\n<unk>\na\nb\n", "<eos>\r<unk>\ra\rb\r", "\uFEFF<eos>\r\n<unk>\r\na\r\nb", "\uFEFF<eos>\r<unk>\na\r\nb\r"} {
		var v Vocab
		if err := v.UnmarshalText([]byte(text)); err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		if got := v.Words(); !slices.Equal(got, want) {
			t.Errorf("%q: words %q, want %q", text, got, want)
		}
	}
}
