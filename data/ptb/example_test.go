package ptb_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/nsrnn/nsrnn/data/ptb"
)

// Example builds a corpus of three tiny splits in a temporary directory,
// loads it, and cuts the training split into chunks for truncated BPTT.
func Example() {
	dir, err := os.MkdirTemp("", "ptb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		ptb.TrainFile: " the cat sat\n the <unk> ran\n",
		ptb.ValidFile: " the dog sat\n",
		ptb.TestFile:  " a cat ran\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}

	c, err := ptb.Load(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	v := c.Vocab
	fmt.Println("vocabulary:", v.Words())
	fmt.Println("train:", c.Train)
	fmt.Println("valid:", c.Valid, "(dog is <unk>)")

	// 8 tokens, 7 targets: 2 rows of L = 4 positions, chunks of T = 3.
	// Row 1 starts at x_4, the last target of row 0, and ends with one
	// padded position (input <eos>, target NoTarget = -1).
	b, err := ptb.NewBatcher(c.Train, 2, 3, v.EOS())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("targets:", b.NumTargets(), "chunks:", b.NumChunks())
	for k := range b.NumChunks() {
		ch, err := b.Chunk(k)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("chunk %d: inputs %v targets %v\n", k, ch.Inputs, ch.Targets)
	}
	// Output:
	// vocabulary: [<eos> the cat sat <unk> ran]
	// train: [1 2 3 0 1 4 5 0]
	// valid: [1 4 3 0] (dog is <unk>)
	// targets: 7 chunks: 2
	// chunk 0: inputs [[1 2 3] [1 4 5]] targets [[2 3 0] [4 5 0]]
	// chunk 1: inputs [[0] [0]] targets [[1] [-1]]
}
