// Package controller implements the recurrent controller of the nsrnn stack
// RNNs: a multi-layer LSTM with the PyTorch parameter layout, put into a
// gorgonia graph as one fused node per layer per time step with a
// hand-written backward pass.
//
// Each layer l has the parameters W_ih (4H × in_l), W_hh (4H × H), b_ih and
// b_hh (4H), gate order i, f, g, o:
//
//	gates = x W_ihᵀ + b_ih + h W_hhᵀ + b_hh
//	i, f, o = σ(·), g = tanh(·)
//	c' = f ⊙ c + i ⊙ g
//	h' = o ⊙ tanh(c')
//
// so parameter counts match the paper's tables. Layer 0's input is the
// concatenation of several parts (the stack RNN feeds [x_t ; r_{t−1}]); the
// parts stay separate nodes and the columns of W_ih are split among them, so
// no concatenation node is needed.
//
// The parameters live in an LSTM, outside any graph; Bind makes a Graph,
// the LSTM's part of one gorgonia graph, which adds the step nodes. A
// State holds one (batch, 2H) node per layer with [h ; c] side by side.
// For truncated backpropagation through time, a Graph's Input state is
// made of input nodes whose values are set from the Carry of the previous
// chunk's final state before each run (the carried state is detached: it
// gets no gradient from the next chunk).
//
// The backward pass of each step computes its gate gradients and the
// gradients of its inputs; the weight gradients of all the steps of a
// layer are one matrix product each, made by the first step's backward
// pass (which runs last), rather than one small update per step.
// Graph.SetFloat32 makes the matrix products float32 (the gates and states
// stay float64).
//
// NewLSTM refuses an LSTM of more than MaxParams parameters with an
// error, before anything is allocated.
//
// # Errors and panics
//
// NewLSTM and NewRunner refuse bad sizes with errors. Panics are kept for
// programmer errors: a nil binding or random source, and parts given to a
// Step that do not have the sizes the LSTM or runner was made with.
package controller
