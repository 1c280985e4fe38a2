package syntaxgym_test

import (
	"bytes"
	"fmt"
	"log"
	"strings"

	"github.com/nsrnn/nsrnn/data/syntaxgym"
)

// Example reads a suite, writes surprisals of a stand-in language model in
// lm-zoo's format, reads them back and scores the suite.
func Example() {
	suite, err := syntaxgym.ReadSuite(strings.NewReader(`{
		"meta": {"name": "agreement", "metric": "sum"},
		"region_meta": {"1": "subject", "2": "verb"},
		"predictions": [{"type": "formula", "formula": "(2;%match%) < (2;%mismatch%)"}],
		"items": [
			{"item_number": 1, "conditions": [
				{"condition_name": "match", "regions": [{"region_number": 1, "content": "The dogs"}, {"region_number": 2, "content": "bark"}]},
				{"condition_name": "mismatch", "regions": [{"region_number": 1, "content": "The dogs"}, {"region_number": 2, "content": "barks"}]}]},
			{"item_number": 2, "conditions": [
				{"condition_name": "match", "regions": [{"region_number": 1, "content": "The cat"}, {"region_number": 2, "content": "sleeps"}]},
				{"condition_name": "mismatch", "regions": [{"region_number": 1, "content": "The cat"}, {"region_number": 2, "content": "sleep"}]}]}]}`),
		"agreement.json")
	if err != nil {
		log.Fatal(err)
	}

	// A stand-in language model: a token's surprisal is its length in bits.
	sents := suite.Sentences()
	surprisals := make([][]float64, len(sents))
	for j, s := range sents {
		fmt.Printf("%d: item %d, %-8s %q\n", j+1, s.ItemNumber, s.Condition, s.Tokens)
		for _, tok := range s.Tokens {
			surprisals[j] = append(surprisals[j], float64(len(tok)))
		}
	}
	var tsv bytes.Buffer
	if err := syntaxgym.WriteSurprisals(&tsv, sents, surprisals); err != nil {
		log.Fatal(err)
	}
	read, err := syntaxgym.ReadSurprisals(&tsv, "agreement.tsv", sents)
	if err != nil {
		log.Fatal(err)
	}
	res, err := suite.EvaluateTokens(read)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d of %d pairs hold, accuracy %.2f\n", res.Suite, res.Correct, res.Pairs, res.Accuracy)
	fmt.Printf("item 1: %v, item 2: %v\n", res.Holds[0], res.Holds[1])
	// Output:
	// 1: item 1, match    ["the" "dogs" "bark"]
	// 2: item 1, mismatch ["the" "dogs" "barks"]
	// 3: item 2, match    ["the" "cat" "sleeps"]
	// 4: item 2, mismatch ["the" "cat" "sleep"]
	// agreement: 1 of 2 pairs hold, accuracy 0.50
	// item 1: [true], item 2: [false]
}
