package protocol_test

import (
	"fmt"

	"github.com/nsrnn/nsrnn/protocol"
)

// A test curve measured as the paper's Figure 2 measures it. The test set
// here has two lengths (K = 2), which the default bound gives probability
// 1/2 each; against the distribution given the length, the bound at length
// n is log 2/(n+1) nats per symbol lower, the difference that much higher.
func ExampleLengthConditioned() {
	panels := []protocol.Panel{{
		Task: "marked-reversal",
		Curves: []protocol.Curve{{Model: "rns", Points: []protocol.Point{
			{X: 41, Y: 0.0100}, // length 41: log 2/42 = 0.0165 more
			{X: 83, Y: 0.0200}, // length 83: log 2/84 = 0.0083 more
		}}},
	}}
	for _, pt := range protocol.LengthConditioned(panels)[0].Curves[0].Points {
		fmt.Printf("length %g: %.4f\n", pt.X, pt.Y)
	}
	// Output:
	// length 41: 0.0265
	// length 83: 0.0283
}
