package nsrnn

import "image/color"

// LSTM is the plain LSTM: no stack, no hyperparameters beyond those of
// every model, and it runs as a stream.
const LSTM = "lstm"

func init() {
	RegisterKind(Kind{
		Name: LSTM, Label: "LSTM", Color: color.RGBA{0x1f, 0x77, 0xb4, 0xff}, Paper: true, Streams: true,
	})
}
