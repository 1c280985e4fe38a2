// Package param holds the trainable parameters of nsrnn models: named
// float64 tensors that live outside any graph, their seeded initialization,
// and their binding to input nodes of gorgonia graphs.
//
// Most programs never import it: nsrnn.Param and nsrnn.Scheme are aliases
// of Param and Scheme, and nsrnn.Model creates, initializes, binds, saves
// and loads its parameters itself. The package is public so that the
// exported API of nsrnn, stacks and controller (Layer.Params, Layer.Bind,
// LSTM.Init, …) names no internal type and can be used from any module
// and from interpreters such as gophernotes.
//
// # Parameters
//
// A Param is a name, unique within a model, and a tensor of float64
// (New, Data, Size). Count adds up the sizes of a list of parameters, the
// figure "cfl params" and Model.NumParams report.
//
// # Initialization
//
// A Scheme is how a whole model is initialized; each layer asks it for
// the Rule of each of its parameters: Recurrent for the LSTM, the
// embedding and the nondeterministic stack's action layer, Affine for the
// other affine layers. A Rule fills weights (InitWeight, Xavier-uniform or
// uniform) and biases (InitBias, zero or uniform) from a *rand.Rand of
// math/rand/v2, so that a seed fixes a model's initial parameters.
//
// # Graphs
//
// One set of parameter tensors is shared by every graph a model builds
// (one per sequence length and batch size); each graph reads the same
// backing arrays. A Binding ties the parameters to one graph: Node gives
// the input node of a parameter (bound to its tensor, not a copy), Grad its
// gradient accumulator. Parameters are not differentiated by gorgonia:
// the kernels that own them add their gradients into the binding's
// accumulators in their backward passes, and take the binding's Anchor
// node as an input so that differentiating the loss with respect to the
// anchor runs every one of those backward passes. A layer written in
// gorgonia's operations alone reads its parameters through Diff instead:
// Differentiate (which the model calls in place of gorgonia.Grad) asks
// gorgonia for those parameters' gradients as well, and CollectDiff adds
// them into the same accumulators after each run.
//
// # Errors and panics
//
// The functions of this package are called by the layers with sizes they
// have checked: New panics on a negative dimension, and Count on a nil
// parameter, as programmer errors.
package param
