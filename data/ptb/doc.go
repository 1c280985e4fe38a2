// Package ptb reads the word-level Penn Treebank language-modeling corpus in
// the preprocessing of Mikolov et al. (2011), builds its vocabulary, and
// cuts its splits into chunks for truncated backpropagation through time.
//
// # Corpus
//
// The corpus is three text files, TrainFile, ValidFile and TestFile
// (ptb.train.txt, ptb.valid.txt, ptb.test.txt), one sentence per line,
// words separated by spaces; words outside the 10,000-word vocabulary are
// already replaced by UnkWord ("<unk>"). Load reads all three from a
// directory; LoadFiles reads three files of any names, for another corpus
// (WikiText-2's wiki.train.tokens, wiki.valid.tokens, wiki.test.tokens,
// say), and Options.VocabSize limits the vocabulary of a corpus that is
// not preprocessed to one (the N most frequent training types, the rest
// read as UnkWord; see "Vocabulary"); ReadTrain and ReadSplit read one file, ReadTrainFrom and
// ReadSplitFrom one io.Reader. Paths are always arguments: the package
// knows no data location.
//
// A split is read as one stream of token ids. Each line is split into words
// at white space (unicode.IsSpace, as strings.Fields does) and EOSWord
// ("<eos>") is appended after every line — as in the reference readers,
// which take line.split() + ['<eos>'] for each line — including an empty
// line (which yields EOSWord alone) and a last line without a final
// newline; a newline at the very end of the file does not start another
// line. "\r\n" and a lone "\r" (old Mac files) end a line as "\n" does,
// and a UTF-8 byte-order mark at the start of a file is dropped (in
// vocabulary files too). A word "<eos>" inside a line is read as EOSWord
// too. With EOSWord the splits have
//
//	train  887,521 words + 42,068 lines = 929,589 tokens
//	valid   70,390 words +  3,370 lines =  73,760 tokens
//	test    78,669 words +  3,761 lines =  82,430 tokens
//
// A word of the validation or test split that is not in the vocabulary is
// read as UnkWord (Mikolov's files have none, since they already contain
// "<unk>") and reported to Options.Unknown, or is an error with
// Options.Strict.
//
// Errors are wrapped with what was being done and name the file: a missing
// file (the error of os.Open, so errors.Is(err, fs.ErrNotExist)) and,
// as a *LineError with the 1-based line where there is one, a file with no
// words at all (ErrEmpty), a line that is not valid UTF-8
// (ErrInvalidUTF8), a line longer than Options.MaxLineBytes
// (ErrLineTooLong), a training split with more types than
// Options.MaxVocab (ErrVocabTooLarge, refused at the line where the limit
// is passed rather than running out of memory), and with Options.Strict
// an unknown word (ErrUnknownWord).
//
// # Vocabulary
//
// A Vocab maps words to the ids 0 … Size()−1 and back (ID, Lookup, Word)
// and always contains EOSWord and UnkWord (EOS, Unk). ReadTrain builds it
// from the training split deterministically: EOSWord has id 0, then every
// type of the training file has the next id in the order of its first
// occurrence (reading lines top to bottom, words left to right); UnkWord
// gets its id at its first occurrence like any word, or the last id when
// the training file never contains it. For the Penn Treebank that is the
// 9,999 training types, "<unk>" among them, plus "<eos>": 10,000 words.
// A word missing from the vocabulary maps to Unk() under ID. With
// Options.VocabSize N, only the N most frequent types of the training
// file are kept (UnkWord counts as a type when the file has it; ties go to
// the type that occurs first), in the same order of first occurrence after
// EOSWord, with UnkWord last when it is not among them; every other
// training word is read as UnkWord.
//
// The text form of a vocabulary is one word per line in id order, so that
// the word on line i has id i−1. Save writes it atomically (a temporary
// file in the same directory, synced, then renamed over the target; mode
// 0644 less the umask) and LoadVocab reads it back, with errors naming the
// file and line for an empty word or one with white space (ErrBadWord),
// invalid UTF-8, a duplicate (ErrDuplicateWord, naming both lines) and too
// many words, and naming the file when EOSWord or UnkWord is missing
// (ErrMissingWord). MarshalText and UnmarshalText give the same form as
// bytes, to store a vocabulary inside a checkpoint.
//
// # Batching
//
// A split is one stream of N tokens x_0 … x_{N−1}, and its targets are
// x_1 … x_{N−1}: each token predicted from the ones before it. Every target
// is used exactly once and none is dropped, so the Penn Treebank splits
// have
//
//	train  929,588 targets (929,589 − 1)
//	valid   73,759 targets ( 73,760 − 1)
//	test    82,429 targets ( 82,430 − 1)
//
// and a perplexity is exp of the summed cross-entropy divided by that
// number. (The widespread batchify that trims the stream to a multiple of
// the batch size drops up to B−1 of them instead.)
//
// A Batcher with batch size B and BPTT length T lays the N−1 targets in B
// contiguous rows of L = ceil((N−1)/B) targets: row b has the targets
// x_{bL+1} … x_{bL+L} and, at each position, the token just before the
// target as input, x_{bL} … x_{bL+L−1}; so row b's first input, x_{bL},
// is row b−1's last target. Rows at the end may run past x_{N−1}; their
// missing positions (at most B−1 in all, L·B − (N−1)) have input pad
// (normally Vocab.EOS()) and target NoTarget (−1), which the loss must
// ignore. Each row is then cut into ceil(L/T) chunks of T consecutive
// positions, the last chunk shorter when T does not divide L. Chunk k holds
// positions kT … min(kT+T, L)−1 of all B rows; the hidden state of row b at
// the end of chunk k is the state to start row b of chunk k+1 from. Row 0
// is never padded, so every chunk has at least one real target.
//
// Batcher.Chunk(k) builds chunk k alone, so training can resume mid-epoch
// at a chunk index; Chunks builds them all and returns the number of real
// targets, N−1. For example the training split with B = 20 and T = 35 has
// L = 46,480, 1,328 chunks of 35 positions, and 12 padded positions at the
// end of row 19.
//
// # Errors and panics
//
// Corpus files and batching sizes are checked, and refused with errors
// naming the file and line (Options bounds the vocabulary, the lines and
// the tokens of a split, MaxChunkCells a chunk). Methods called on a nil *Vocab or *Batcher
// panic, as programmer errors.
package ptb
