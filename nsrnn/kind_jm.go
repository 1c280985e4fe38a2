package nsrnn

import (
	"github.com/nsrnn/nsrnn/stacks"
)

// JM is the superposition stack of Joulin & Mikolov (2015): it pushes a
// learned vector of Config.StackEmbedding or, with PushHiddenState, the
// controller's hidden state; with a DepthLimit it runs as a stream.
const JM = "jm"

// jmKind declares the superposition stack.
func jmKind() Kind {
	return Kind{
		Name: JM, Streams: true,
		Hyperparameters: []Hyperparameter{
			stackEmbedding(func(c Config) error {
				if !c.PushHiddenState {
					return needStackEmbedding(c)
				}
				if c.StackEmbedding != 0 && c.StackEmbedding != c.Hidden {
					return Refuse(ErrOutOfRange, "jm pushing the hidden state has stack embedding %d, must equal the hidden size %d", c.StackEmbedding, c.Hidden)
				}
				return nil
			}),
			{Field: "PushHiddenState", Name: "push-hidden-state", Doc: "%s pushes the hidden state instead of a learned vector"},
			{Field: "DepthLimit", Name: "a depth limit", Doc: "stack depth limit of %s (default 0: unlimited)", StreamDefault: 10,
				Check: func(c Config) error {
					if c.DepthLimit < 0 {
						return Refuse(ErrOutOfRange, "depth limit %d < 0", c.DepthLimit)
					}
					return nil
				}},
		},
		Stack: func(n string, c Config) (stacks.Layer, error) {
			return stacks.NewJM(n, c.Hidden, jmSize(c), c.PushHiddenState, c.DepthLimit)
		},
		StackParams: func(c Config) float64 {
			p := 3 * (float64(c.Hidden) + 1)
			if !c.PushHiddenState {
				p += (float64(c.Hidden) + 1) * float64(c.StackEmbedding)
			}
			return p
		},
		ReadingSize: func(c Config) float64 { return float64(jmSize(c)) },
	}
}

// jmSize is the size of the vectors of a JM stack.
func jmSize(c Config) int {
	if c.PushHiddenState {
		return c.Hidden
	}
	return c.StackEmbedding
}
