package ptb

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzLoadVocab reads arbitrary bytes as a vocabulary file (LoadVocab and
// UnmarshalText). They are refused with an error naming the file (a
// LineError), or give a vocabulary of distinct words, each of which
// NewVocab accepts, that has EOSWord and UnkWord, looks up each word's
// id, and writes (MarshalText) and reads back unchanged. A failed
// UnmarshalText leaves its Vocab unchanged. The seeds are the
// vocabularies of vocab_test.go and damaged ones.
func FuzzLoadVocab(f *testing.F) {
	for _, s := range []string{
		"<eos>\nthe\ncat\nsat\non\n<unk>\nmat\n",
		"<eos>\n<unk>\na\nb\n", "<eos>\r<unk>\ra\rb\r", "\uFEFF<eos>\r\n<unk>\r\na\r\nb", "\uFEFF<eos>\r<unk>\na\r\nb\r",
		"", "\n", "<eos>\n", "<eos>\n<unk>\n<eos>\n", "<eos>\n<unk>\n\n", "<eos>\n<unk>\na b\n",
		"<eos>\n<unk>\n\xff\n", "<eos>\n<unk>\na\u00a0b\n", "<unk>\n<eos>",
	} {
		f.Add([]byte(s))
	}
	opt := &Options{MaxVocab: 1000, MaxLineBytes: 1 << 12}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "vocab.txt")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := LoadVocab(path, opt)
		var le *LineError
		if err != nil {
			if !errors.As(err, &le) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
		}
		u := Vocab{words: []string{"x"}}
		uerr := u.UnmarshalText(b)
		if (uerr == nil) != (err == nil) && len(b) <= 1<<12 && countLines(b) < 1000 {
			t.Fatalf("LoadVocab: %v; UnmarshalText: %v", err, uerr)
		}
		if uerr != nil && !slices.Equal(u.words, []string{"x"}) {
			t.Fatalf("a failed UnmarshalText changed the vocabulary to %q", u.words)
		}
		if err != nil {
			return
		}
		words := v.Words()
		if v.Word(v.EOS()) != EOSWord || v.Word(v.Unk()) != UnkWord {
			t.Fatalf("vocabulary %q: EOS %d, Unk %d", words, v.EOS(), v.Unk())
		}
		if _, err := NewVocab(words); err != nil {
			t.Fatalf("vocabulary %q refused by NewVocab: %v", words, err)
		}
		for i, w := range words {
			if id, ok := v.Lookup(w); !ok || id != i || v.ID(w) != i {
				t.Fatalf("word %d %q looked up as %d, %v", i, w, id, ok)
			}
		}
		text, err := v.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var w Vocab
		if err := w.UnmarshalText(text); err != nil || !slices.Equal(w.Words(), words) || w.EOS() != v.EOS() || w.Unk() != v.Unk() {
			t.Fatalf("written and read back: %q, %v; want %q", w.Words(), err, words)
		}
	})
}
