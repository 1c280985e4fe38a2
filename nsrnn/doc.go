// Package nsrnn is the public API of the library: stack-augmented recurrent
// neural networks after DuSell & Chiang, "Learning Hierarchical Structures
// with Differentiable Nondeterministic Stacks" (ICLR 2022).
//
// A Model joins an input layer (one-hot vectors or a learned embedding), an
// LSTM controller (package controller), one of the stacks of package stacks
// (none, stratification "gref", superposition "jm", or the nondeterministic
// stack in its four variants "ns", "ns+s", "ns+u" and "rns", unlimited or
// memory-limited), and an output layer. For input symbols w_1 … w_n it
// makes n+1 predictions, of w_1 … w_n and EOS, following the controller–
// stack interface of the paper (§2):
//
//	(h_t, c_t) = LSTM((h_{t−1}, c_{t−1}), [x_t ; r_{t−1}])
//	y_t = W_hy h_t + b_hy
//	a_t = Actions(h_t), s_t = Stack(s_{t−1}, a_t), r_t = Reading(s_t)
//
// Models are built from a Config, scored with Loss, LogProb and LogProbs,
// differentiated with Gradient, and saved and loaded with Save and Load.
// Each model builds and caches one gorgonia graph per sequence length and
// batch size; all of them share the model's parameter tensors.
package nsrnn
