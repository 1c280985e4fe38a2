package ptb

import (
	"slices"
	"strings"
	"testing"
)

func TestVocabSize(t *testing.T) {
	const text = "c b a b\nd a b <unk>\nd c\n"
	// Counts: b 3, a 2, d 2, c 2, <unk> 1; first occurrences c, b, a, d, <unk>.
	for _, test := range []struct {
		n     int
		words []string // the vocabulary, in id order
		toks  string   // the training split, by word
	}{
		{0, []string{"<eos>", "c", "b", "a", "d", "<unk>"}, "c b a b <eos> d a b <unk> <eos> d c <eos>"},
		{1, []string{"<eos>", "b", "<unk>"}, "<unk> b <unk> b <eos> <unk> <unk> b <unk> <eos> <unk> <unk> <eos>"},
		// a, c and d tie at 2: c occurs first, then a.
		{3, []string{"<eos>", "c", "b", "a", "<unk>"}, "c b a b <eos> <unk> a b <unk> <eos> <unk> c <eos>"},
		{5, []string{"<eos>", "c", "b", "a", "d", "<unk>"}, "c b a b <eos> d a b <unk> <eos> d c <eos>"},
		{9, []string{"<eos>", "c", "b", "a", "d", "<unk>"}, "c b a b <eos> d a b <unk> <eos> d c <eos>"},
	} {
		v, toks, err := ReadTrainFrom(strings.NewReader(text), "train", &Options{VocabSize: test.n})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v.Words(), test.words) || v.Word(v.Unk()) != UnkWord || v.Word(v.EOS()) != EOSWord {
			t.Errorf("VocabSize %d: vocabulary %q, want %q", test.n, v.Words(), test.words)
		}
		var got []string
		for _, id := range toks {
			got = append(got, v.Word(id))
		}
		if strings.Join(got, " ") != test.toks {
			t.Errorf("VocabSize %d: tokens %q, want %q", test.n, strings.Join(got, " "), test.toks)
		}
	}
	if _, _, err := ReadTrainFrom(strings.NewReader(text), "train", &Options{VocabSize: -1}); err == nil {
		t.Error("VocabSize -1: no error")
	}
}
