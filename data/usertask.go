package data

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/nsrnn/nsrnn/internal/lines"
	"github.com/nsrnn/nsrnn/internal/readlimit"
)

// ErrNoDistribution is the error of sampling, valid lengths and
// probabilities for a task known only by its vocabulary (NewTextTask):
// the user's strings come from no known distribution, so there is no
// lower bound to measure a model against.
var ErrNoDistribution = errors.New("the task is the user's strings, with no known distribution")

// NewGrammarTask returns the task defined by the grammar g of the user's
// (read by ReadPCFGFile, say), named name: a task like the paper's, with
// exact sampling, p(w | n), valid lengths and lower bound, under the
// definition GrammarPaper (the grammar as given; WithGrammar gives
// GrammarReleased too). It is not in the task table: its Info has Group
// GroupUser, Title name, and the |Q| = 2 and |Γ| = 3 of most of the
// paper's tasks. It returns an error for an empty name or a nil grammar.
func NewGrammarTask(name string, g *PCFG, description string) (*Task, error) {
	if name == "" || g == nil {
		return nil, errors.New("data: a grammar task needs a name and a grammar")
	}
	if slices.Contains(g.Terminals(), EOS) {
		return nil, fmt.Errorf("data: grammar task %s: terminal %s is the name of the end symbol, which a model's outputs add to the terminals; rename it", name, EOS)
	}
	info := &TaskInfo{
		Name: name, Title: name, Strings: description, Group: GroupUser, States: 2, Symbols: 3,
		New: func(Params) (Language, error) { return g, nil },
	}
	return &Task{name: name, def: GrammarPaper, lang: g, g: g, paper: g, info: info}, nil
}

// NewTextTask returns a task known only by its terminals, the vocabulary
// of the user's strings (see ReadVocabularyFile), named name. A model is
// trained and evaluated on such a task's strings as on any other, but it
// has no distribution: HasDistribution is false, and Sample,
// ValidLengths, LogProbGivenLength and Contains return errors wrapping
// ErrNoDistribution. It returns an error for an empty name, no terminals,
// or terminals that are repeated, empty, hold white space or are EOS.
func NewTextTask(name string, terminals []string) (*Task, error) {
	if name == "" {
		return nil, errors.New("data: a text task needs a name")
	}
	if len(terminals) == 0 {
		return nil, fmt.Errorf("data: text task %s has no terminals", name)
	}
	seen := map[string]bool{}
	for _, t := range terminals {
		switch {
		case t == "" || strings.ContainsFunc(t, isSpace):
			return nil, fmt.Errorf("data: text task %s: terminal %q is empty or holds white space", name, t)
		case t == EOS:
			return nil, fmt.Errorf("data: text task %s: terminal %s is the name of the end symbol", name, EOS)
		case seen[t]:
			return nil, fmt.Errorf("data: text task %s: terminal %q listed twice", name, t)
		}
		seen[t] = true
	}
	info := &TaskInfo{
		Name: name, Title: name, Strings: "the user's strings", Group: GroupUser, States: 2, Symbols: 3,
		New: func(Params) (Language, error) { return nil, ErrNoDistribution },
	}
	return &Task{name: name, def: GrammarPaper, lang: vocabOnly(slices.Clone(terminals)), info: info}, nil
}

// HasDistribution reports whether the task has a distribution over
// strings to sample from and to measure a model against (a lower bound):
// every task but those of NewTextTask.
func (t *Task) HasDistribution() bool {
	_, ok := t.lang.(vocabOnly)
	return !ok
}

// vocabOnly is the Language of a text task: terminals and nothing else.
type vocabOnly []string

func (v vocabOnly) Terminals() []string { return slices.Clone(v) }

func (v vocabOnly) ValidLengths(int, int) ([]int, error) {
	return nil, fmt.Errorf("data: valid lengths: %w", ErrNoDistribution)
}

func (v vocabOnly) Sample(int, *rand.Rand) ([]int, error) {
	return nil, fmt.Errorf("data: sampling: %w", ErrNoDistribution)
}

func (v vocabOnly) LogProbGivenLength([]int) (float64, error) {
	return 0, fmt.Errorf("data: probabilities: %w", ErrNoDistribution)
}

// ReadVocabularyFile returns the vocabulary of a file of strings in text
// form (one string per line, symbols separated by white space): its
// distinct symbols, sorted (by bytes), so that the same symbols give the
// same vocabulary whatever their order. A symbol named EOS, the end
// symbol's name, is an error naming the file and line (a *LineError), as
// is a line that is not valid UTF-8 (wrapping ErrInvalidUTF8) or of more
// than MaxLength symbols (wrapping ErrTooLong), and so is
// a file without any symbol, and one larger than MaxTextBytes.
func ReadVocabularyFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read line by line, as ReadTokens does, keeping only the symbols.
	sc := bufio.NewScanner(readlimit.Reader(f, path, MaxTextBytes))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<26)
	sc.Split(lines.Split())
	seen := map[string]bool{}
	var vocab []string
	for line := 1; sc.Scan(); line++ {
		if err := checkUTF8(sc.Bytes()); err != nil {
			return nil, &LineError{Name: path, Line: line, Err: err}
		}
		fields := strings.Fields(sc.Text())
		if err := checkStringLength(len(fields)); err != nil {
			return nil, &LineError{Name: path, Line: line, Err: err}
		}
		if len(fields) == 1 && fields[0] == EmptyString {
			// The empty string (ParseString), which adds no symbol; a
			// symbol only if another line has it among others.
			continue
		}
		for _, s := range fields {
			if s == EOS {
				return nil, &LineError{Name: path, Line: line, Err: fmt.Errorf("symbol %s is the name of the end symbol", EOS)}
			}
			if !seen[s] {
				seen[s] = true
				vocab = append(vocab, s)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(vocab) == 0 {
		return nil, fmt.Errorf("%s: no symbols", path)
	}
	slices.Sort(vocab)
	return vocab, nil
}

// BatchByLength groups strings into batches of strings of one length, as
// the paper's protocol trains (an nsrnn.Batch is strings of one length):
// the lengths in increasing order, and for each length its strings in
// their order in ws, batchSize at a time, the last batch of a length
// smaller if batchSize does not divide their number. Training shuffles
// the batches every epoch (nsrnn.Train). It returns an error for a
// batchSize below 1.
func BatchByLength(ws [][]int, batchSize int) ([][][]int, error) {
	if batchSize < 1 {
		return nil, fmt.Errorf("data: batch size %d must be positive", batchSize)
	}
	byLen := map[int][][]int{}
	var lens []int
	for _, w := range ws {
		if _, ok := byLen[len(w)]; !ok {
			lens = append(lens, len(w))
		}
		byLen[len(w)] = append(byLen[len(w)], w)
	}
	slices.Sort(lens)
	var batches [][][]int
	for _, n := range lens {
		b, _ := SplitBatches(byLen[n], batchSize)
		batches = append(batches, b...)
	}
	return batches, nil
}
