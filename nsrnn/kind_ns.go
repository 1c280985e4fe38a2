package nsrnn

import (
	"github.com/nsrnn/nsrnn/stacks"
)

// The nondeterministic stack of DuSell & Chiang comes in four variants:
// normalized or not (+U), reading the top symbol or the state and symbol
// (+S). Each takes |Q| and |Γ| (Config.States, Symbols, both required),
// a window D (Config.Window; 0 is unlimited, and a window makes it run as
// a stream) and the bottom behaviour (Config.Bottom).

// NS is the nondeterministic stack, normalized, reading the top symbol.
const NS = "ns"

// NSS is the nondeterministic stack, normalized, reading the state and
// symbol (NS+S).
const NSS = "ns+s"

// NSU is the nondeterministic stack, unnormalized, reading the top symbol
// (NS+U).
const NSU = "ns+u"

// RNS is the Renormalizing Nondeterministic Stack: unnormalized, reading
// the state and symbol (NS+S+U), the paper's RNS-RNN.
const RNS = "rns"

// nsHyperparameters are the hyperparameters of every nondeterministic
// stack (the vector one's too).
var nsHyperparameters = []Hyperparameter{
	{Field: "States", Name: "states", Doc: "|Q|, PDA states of %s", Required: true, Size: true, Check: func(c Config) error {
		if c.States < 1 {
			return needStatesSymbols(c)
		}
		return nil
	}},
	{Field: "Symbols", Name: "symbols", Doc: "|Γ|, stack symbol types of %s", Required: true, Size: true, Check: func(c Config) error {
		if c.Symbols < 1 {
			return needStatesSymbols(c)
		}
		return nil
	}},
	{Field: "Window", Name: "a window", Doc: "D, the window of the memory-limited %s (default 0: unlimited)", StreamDefault: 35,
		Check: func(c Config) error {
			if c.Window < 0 {
				return Refuse(ErrOutOfRange, "window %d < 0", c.Window)
			}
			return nil
		}},
	{Field: "Bottom", Name: "the bottom behaviour", Doc: "bottom-symbol behaviour of %s: original (ICLR 2022) or fixed (ICLR 2023)",
		Check: func(c Config) error {
			if c.Bottom != stacks.Original && c.Bottom != stacks.Fixed {
				return Refuse(ErrOutOfRange, "unknown bottom behaviour %d", c.Bottom)
			}
			return nil
		}},
}

func needStatesSymbols(c Config) error {
	return Refuse(ErrRequired, "model %s needs states ≥ 1 and symbols ≥ 1, got %d and %d", c.Kind, c.States, c.Symbols)
}

// nsKind declares one variant.
func nsKind(name string, normalized, stateReading bool) Kind {
	nsConfig := func(c Config) stacks.NSConfig {
		return stacks.NSConfig{States: c.States, Symbols: c.Symbols, Normalized: normalized, StateReading: stateReading,
			Bottom: c.Bottom, Window: c.Window}
	}
	return Kind{
		Name: name, Streams: true,
		Hyperparameters: nsHyperparameters,
		Stack:           func(n string, c Config) (stacks.Layer, error) { return stacks.NewNS(n, c.Hidden, nsConfig(c)) },
		StackParams: func(c Config) float64 {
			q, g := float64(c.States), float64(c.Symbols)
			return q * g * (2*q*g + q) * (float64(c.Hidden) + 1)
		},
		ReadingSize: func(c Config) float64 {
			if stateReading {
				return float64(c.States) * float64(c.Symbols)
			}
			return float64(c.Symbols)
		},
		NSConfig: nsConfig,
	}
}
