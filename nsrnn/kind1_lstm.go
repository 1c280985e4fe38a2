package nsrnn

// LSTM is the plain LSTM: no stack, no hyperparameters beyond those of
// every model, and it runs as a stream.
const LSTM = "lstm"

func init() {
	RegisterKind(Kind{
		Name: LSTM, Streams: true,
	})
}
