package ptb

import "path/filepath"

// The file names of the three splits inside a corpus directory.
const (
	TrainFile = "ptb.train.txt"
	ValidFile = "ptb.valid.txt"
	TestFile  = "ptb.test.txt"
)

// Corpus is the Penn Treebank: the vocabulary built from the training split
// and the three splits as token ids.
type Corpus struct {
	Vocab *Vocab
	Train []int
	Valid []int
	Test  []int
}

// LoadFiles reads a corpus from its three split files, wherever they are
// and whatever their names (WikiText-2's wiki.train.tokens,
// wiki.valid.tokens and wiki.test.tokens, say), as Load does: the
// vocabulary from the training split (ReadTrain, limited by
// Options.VocabSize for a corpus that is not preprocessed to one) and the
// other splits read with it. Errors name the file.
func LoadFiles(train, valid, test string, opt *Options) (*Corpus, error) {
	v, toks, err := ReadTrain(train, opt)
	if err != nil {
		return nil, err // names the file
	}
	c := &Corpus{Vocab: v, Train: toks}
	if c.Valid, err = readSplit(valid, "validation split", v, opt); err != nil {
		return nil, err // names the file
	}
	if c.Test, err = readSplit(test, "test split", v, opt); err != nil {
		return nil, err // names the file
	}
	return c, nil
}

// Load reads TrainFile, ValidFile and TestFile from dir, building the
// vocabulary from the training split (ReadTrain) and reading the others
// with it (ReadSplit). Errors are those of ReadTrain and ReadSplit, which
// name the file.
func Load(dir string, opt *Options) (*Corpus, error) {
	v, train, err := ReadTrain(filepath.Join(dir, TrainFile), opt)
	if err != nil {
		return nil, err // names the file
	}
	c := &Corpus{Vocab: v, Train: train}
	if c.Valid, err = readSplit(filepath.Join(dir, ValidFile), "validation split", v, opt); err != nil {
		return nil, err // names the file
	}
	if c.Test, err = readSplit(filepath.Join(dir, TestFile), "test split", v, opt); err != nil {
		return nil, err // names the file
	}
	return c, nil
}
