package nsrnn

import (
	"github.com/nsrnn/nsrnn/stacks"
)

// VRNS is the RNS stack of the authors' later release that also pushes
// vectors of Config.StackEmbedding (required), reading the expected top
// vector; Config.BottomVector is its initial bottom's vector. It has the
// nondeterministic stacks' hyperparameters, and runs as a stream as they
// do: with a window (Config.Window; 35 by default in stream mode), its
// state, vectors included, is carried from chunk to chunk.
const VRNS = "vrns"

// vrnsKind declares the vector RNS stack.
func vrnsKind() Kind {
	return Kind{
		Name: VRNS, Streams: true,
		Hyperparameters: append(append([]Hyperparameter(nil), nsHyperparameters...),
			Hyperparameter{Field: "StackEmbedding", Name: "a pushed-vector size", Doc: "size of the pushed vectors of %s", Required: true, Size: true,
				Check: func(c Config) error {
					if c.StackEmbedding < 1 {
						return Refuse(ErrRequired, "model vrns needs a pushed-vector size (stack embedding) ≥ 1, got %d", c.StackEmbedding)
					}
					return nil
				}},
			Hyperparameter{Field: "BottomVector", Name: "a bottom vector", Doc: "vector of the initial bottom symbol of %s: learned, zero or one",
				Check: func(c Config) error {
					if c.BottomVector < stacks.LearnedBottom || c.BottomVector > stacks.OneBottom {
						return Refuse(ErrOutOfRange, "unknown bottom vector %d", c.BottomVector)
					}
					return nil
				}},
		),
		Stack: func(n string, c Config) (stacks.Layer, error) {
			return stacks.NewVRNS(n, c.Hidden, stacks.VRNSConfig{States: c.States, Symbols: c.Symbols, Vector: c.StackEmbedding,
				Bottom: c.Bottom, Window: c.Window, BottomVector: c.BottomVector})
		},
		StackParams: func(c Config) float64 {
			q, g, m := float64(c.States), float64(c.Symbols), float64(c.StackEmbedding)
			p := (float64(c.Hidden) + 1) * (q*g*(2*q*g+q) + m)
			if c.BottomVector == stacks.LearnedBottom {
				p += m
			}
			return p
		},
		ReadingSize: func(c Config) float64 { return float64(c.States) * float64(c.Symbols) * float64(c.StackEmbedding) },
		NSConfig: func(c Config) stacks.NSConfig {
			return stacks.NSConfig{States: c.States, Symbols: c.Symbols, StateReading: true, Bottom: c.Bottom, Window: c.Window}
		},
	}
}
