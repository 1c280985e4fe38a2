package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/internal/readlimit"
)

// FileDigest names a data file of a run and its content's SHA-256 digest
// (lowercase hexadecimal), so that a resumed run on a changed file is
// refused.
type FileDigest struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// readDigest reads the file at path and returns its bytes and its digest,
// with its absolute path.
func readDigest(path string) ([]byte, FileDigest, error) {
	b, err := readlimit.File(path, readlimit.Text, false)
	if err != nil {
		return nil, FileDigest{}, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, FileDigest{}, err
	}
	sum := sha256.Sum256(b)
	return b, FileDigest{Path: abs, SHA256: hex.EncodeToString(sum[:])}, nil
}

// GrammarFileTask reads the grammar file at path (data.ReadPCFG) and
// returns its task, named by the file's base name (data.NewGrammarTask),
// and the file's absolute path and digest. Errors name the file, and the
// line where one is at fault.
func GrammarFileTask(path string) (*data.Task, FileDigest, error) {
	return grammarTask(path, filepath.Base(path))
}

// grammarTask reads the grammar file at path as the task named name (a
// run's copy of its grammar file, GrammarCopyFile, is named by the
// original's base name).
func grammarTask(path, name string) (*data.Task, FileDigest, error) {
	b, d, err := readDigest(path)
	if err != nil {
		return nil, FileDigest{}, err
	}
	g, err := data.ReadPCFG(bytes.NewReader(b), path)
	if err != nil {
		return nil, FileDigest{}, err
	}
	t, err := data.NewGrammarTask(name, g, "the grammar of "+d.Path)
	if err != nil {
		return nil, FileDigest{}, err
	}
	return t, d, nil
}

// TextFiles are the files of a run on the user's own strings: training,
// validation and (optional) test strings, one per line, and the
// vocabulary of the training file.
type TextFiles struct {
	Train FileDigest  `json:"train"`
	Valid FileDigest  `json:"valid"`
	Test  *FileDigest `json:"test,omitempty"`
	// Vocabulary is the training file's (data.ReadVocabularyFile): the
	// model's terminals, in order.
	Vocabulary []string `json:"vocabulary"`
}

// TextData is the user's strings read from TextFiles.
type TextData struct {
	// Task is the text task of the training file's vocabulary, named by
	// the training file's base name (data.NewTextTask).
	Task *data.Task
	// Train, Valid and Test are the strings of the files, in file order;
	// Test is nil without a test file.
	Train, Valid, Test [][]int
	// Files are the files with their digests and the vocabulary.
	Files TextFiles
}

// ReadTextFiles reads the user's strings: the vocabulary from the training
// file, then the strings of each file with it, so that a symbol of the
// validation or test file that is not in the training file is an error
// naming the file and the line (a *data.LineError). test may be empty. A
// file without strings is an error naming it.
func ReadTextFiles(train, valid, test string) (*TextData, error) {
	vocab, err := data.ReadVocabularyFile(train)
	if err != nil {
		return nil, err
	}
	td := &TextData{Files: TextFiles{Vocabulary: vocab}}
	if td.Task, err = data.NewTextTask(filepath.Base(train), vocab); err != nil {
		return nil, err
	}
	read := func(path string) ([][]int, FileDigest, error) {
		b, d, err := readDigest(path)
		if err != nil {
			return nil, d, err
		}
		ws, err := data.ReadStrings(bytes.NewReader(b), path, vocab)
		if err != nil {
			return nil, d, err
		}
		if len(ws) == 0 {
			return nil, d, fmt.Errorf("%s: no strings", path)
		}
		return ws, d, nil
	}
	if td.Train, td.Files.Train, err = read(train); err != nil {
		return nil, err
	}
	if td.Valid, td.Files.Valid, err = read(valid); err != nil {
		return nil, err
	}
	if test != "" {
		var d FileDigest
		if td.Test, d, err = read(test); err != nil {
			return nil, err
		}
		td.Files.Test = &d
	}
	return td, nil
}

// EmptyStrings returns, for each file of td that holds empty strings
// (empty lines, which data.ReadStrings reads as the empty string), a note
// naming the file and their number, so that a blank line a file ends with
// unawares is seen; none where there are none.
func (td *TextData) EmptyStrings() []string {
	var notes []string
	count := func(path string, ws [][]int) {
		n := 0
		for _, w := range ws {
			if len(w) == 0 {
				n++
			}
		}
		if n > 0 {
			notes = append(notes, fmt.Sprintf("%s holds %d empty string(s): each empty line is the empty string", path, n))
		}
	}
	count(td.Files.Train.Path, td.Train)
	count(td.Files.Valid.Path, td.Valid)
	if td.Files.Test != nil {
		count(td.Files.Test.Path, td.Test)
	}
	return notes
}

// Settings fills in the data settings of a run on the strings: Task, the
// files, TrainSize and ValidSize (the numbers of strings) and MinLength
// and MaxLength (the shortest and longest training strings); the task's
// parameters and definition are cleared.
func (td *TextData) Settings(s *Settings) {
	files := td.Files
	s.Task, s.TaskParams, s.Grammar, s.GrammarFile, s.Files = td.Task.Name(), nil, data.GrammarPaper, nil, &files
	s.TrainSize, s.ValidSize = len(td.Train), len(td.Valid)
	lens := make([]int, len(td.Train))
	for i, w := range td.Train {
		lens[i] = len(w)
	}
	s.MinLength, s.MaxLength = slices.Min(lens), slices.Max(lens)
}

// Run returns the training and validation batches of a run with settings
// s on the strings: each file's strings grouped by length into batches of
// s.BatchSize (data.BatchByLength), the training batches shuffled every
// epoch by training. The run has no lower bound (RunData.NoLowerBound).
// s must be the settings of these files (TextData.Settings).
func (td *TextData) Run(s Settings) (*RunData, error) {
	if s.Files == nil || s.Files.Train != td.Files.Train || s.Files.Valid != td.Files.Valid {
		return nil, errors.New("protocol: the settings are not those of the text files")
	}
	tr, err := data.BatchByLength(td.Train, s.BatchSize)
	if err != nil {
		return nil, err
	}
	va, err := data.BatchByLength(td.Valid, s.BatchSize)
	if err != nil {
		return nil, err
	}
	return &RunData{Train: Batches(tr), Valid: Batches(va), NoLowerBound: true}, nil
}

// readTest reads the test file of the files with their vocabulary; it
// must have its recorded digest. Without a test file it returns an error
// saying so.
func (f *TextFiles) readTest() ([][]int, error) {
	if f == nil || f.Test == nil {
		return nil, errors.New("the run has no test file (cfl train --test)")
	}
	b, d, err := readDigest(f.Test.Path)
	if err != nil {
		return nil, err
	}
	if d.SHA256 != f.Test.SHA256 {
		return nil, fmt.Errorf("test file %s has changed since the run: SHA-256 %s, the run's %s", d.Path, d.SHA256, f.Test.SHA256)
	}
	ws, err := data.ReadStrings(bytes.NewReader(b), f.Test.Path, f.Vocabulary)
	if err == nil && len(ws) == 0 {
		err = fmt.Errorf("%s: no strings", f.Test.Path)
	}
	return ws, err
}

// ReadTest reads the run's test file, for a run on the user's strings
// with one (cfl train --test): the file must have the digest recorded in
// the settings, and its strings are read with the run's vocabulary. It
// returns an error for a run without a test file.
func (s Settings) ReadTest() ([][]int, error) { return s.Files.readTest() }
