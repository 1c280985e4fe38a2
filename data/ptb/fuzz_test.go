package ptb

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzReadSplits reads arbitrary text as a training split, with and
// without a vocabulary size. Text is refused with an error, or gives a
// vocabulary with EOSWord and UnkWord and tokens in it, one EOSWord per
// line; the vocabulary writes and reads back unchanged; and the same text
// read as a validation split in that vocabulary gives the same tokens
// (and, with every type kept, reads under Strict).
func FuzzReadSplits(f *testing.F) {
	for _, s := range []string{
		"",
		"a b c\n",
		" the cat <unk> sat \n\nthe end",
		"x\r\ny\rz\n\uFEFFw",
		"a a a b b c\nc d\n",
		"\xff\xfe bad utf-8\n",
		"<eos> word\n",
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, text []byte, size uint8) {
		opt := &Options{VocabSize: int(size), MaxVocab: 1000, MaxLineBytes: 1 << 12}
		v, toks, err := ReadTrainFrom(bytes.NewReader(text), "train.txt", opt)
		if err != nil {
			return
		}
		if v.Word(v.EOS()) != EOSWord || v.Word(v.Unk()) != UnkWord || size > 0 && v.Size() > int(size)+2 {
			t.Fatalf("vocabulary %v (size %d)", v.Words(), size)
		}
		eos := 0
		for _, id := range toks {
			if id < 0 || id >= v.Size() {
				t.Fatalf("token id %d outside the vocabulary of %d", id, v.Size())
			}
			if id == v.EOS() {
				eos++
			}
		}
		if len(toks) > 0 && toks[len(toks)-1] != v.EOS() {
			t.Fatalf("tokens %v do not end with EOS", toks)
		}
		b, err := v.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var w Vocab
		if err := w.UnmarshalText(b); err != nil || !slices.Equal(w.Words(), v.Words()) || w.EOS() != v.EOS() || w.Unk() != v.Unk() {
			t.Fatalf("vocabulary round trip: %v, %v; want %v", w.Words(), err, v.Words())
		}
		for _, strict := range []bool{false, true} {
			if strict && size > 0 {
				continue
			}
			got, err := ReadSplitFrom(bytes.NewReader(text), "valid.txt", v, &Options{Strict: strict, MaxLineBytes: 1 << 12})
			if err != nil || !slices.Equal(got, toks) {
				t.Fatalf("as a split (strict %v): %v, %v; want %v", strict, got, err, toks)
			}
		}
		if !bytes.Contains(text, []byte(EOSWord)) && eos != countLines(text) {
			t.Fatalf("%d EOS tokens for %d lines", eos, countLines(text))
		}
	})
}

// countLines counts the lines of text as the readers do: each ends at
// "\n", "\r\n" or a lone "\r", a last line may lack its end, and a
// byte-order mark at the start is not text.
func countLines(text []byte) int {
	text = bytes.TrimPrefix(text, []byte("\uFEFF"))
	n, start := 0, 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			fallthrough
		case '\n':
			n++
			start = i + 1
		}
	}
	if start < len(text) {
		n++
	}
	return n
}
