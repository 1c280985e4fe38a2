package nsrnn

// LSTM is the plain LSTM: no stack, no hyperparameters beyond those of
// every model, and it runs as a stream.
const LSTM = "lstm"

// lstmKind declares the LSTM without a stack.
func lstmKind() Kind {
	return Kind{
		Name: LSTM, Streams: true,
	}
}
