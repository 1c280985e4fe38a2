package nsrnn

import (
	"github.com/nsrnn/nsrnn/stacks"
)

// Gref is the stratification stack of Grefenstette et al. (2015), with
// vectors of Config.StackEmbedding. It grows with every step, so it does
// not run as a stream.
const Gref = "gref"

// stackEmbedding is the StackEmbedding hyperparameter of the vector
// stacks (gref, jm), whose check the kind gives.
func stackEmbedding(check func(c Config) error) Hyperparameter {
	return Hyperparameter{Field: "StackEmbedding", Name: "a stack embedding size", Doc: "size of the stack vectors of %s",
		Size: true, Check: check}
}

// needStackEmbedding refuses a stack embedding size below 1.
func needStackEmbedding(c Config) error {
	if c.StackEmbedding < 1 {
		return Refuse(ErrRequired, "model %s needs a stack embedding size ≥ 1, got %d", c.Kind, c.StackEmbedding)
	}
	return nil
}

// grefKind declares the stratification stack.
func grefKind() Kind {
	return Kind{
		Name:            Gref,
		Hyperparameters: []Hyperparameter{stackEmbedding(needStackEmbedding)},
		Stack:           func(n string, c Config) (stacks.Layer, error) { return stacks.NewGref(n, c.Hidden, c.StackEmbedding) },
		StackParams: func(c Config) float64 {
			return (float64(c.Hidden) + 1) * (float64(c.StackEmbedding) + 2)
		},
		ReadingSize: func(c Config) float64 { return float64(c.StackEmbedding) },
	}
}
