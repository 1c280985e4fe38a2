// Package nsrnn is the public API of the library: stack-augmented recurrent
// neural networks after DuSell & Chiang, "Learning Hierarchical Structures
// with Differentiable Nondeterministic Stacks" (ICLR 2022).
//
// A Model joins an input layer (one-hot vectors or a learned embedding), an
// LSTM controller (package controller), one of the stacks of package stacks
// (none, stratification "gref", superposition "jm", or the nondeterministic
// stack in its four variants "ns", "ns+s", "ns+u" and "rns", unlimited or
// memory-limited, and "vrns", the RNS stack whose elements carry vectors),
// and an output layer. Models are built from a Config,
// scored with Loss, LogProb and LogProbs, differentiated with Gradient, run
// on token streams with a Stream, trained with Train or Fit, and saved and
// loaded with Save and Load.
//
// # The controller–stack interface
//
// At every step the controller reads the input x_t and the stack's previous
// reading, the output layer predicts the next symbol from the hidden state,
// and the stack is updated from the hidden state:
//
//	(h_t, c_t) = LSTM((h_{t−1}, c_{t−1}), [x_t ; r_{t−1}])
//	y_t = W_hy h_t + b_hy
//	a_t = Actions(h_t), s_t = Stack(s_{t−1}, a_t), r_t = Reading(s_t)
//
// Inputs are one-hot vectors (Config.Embedding = 0, the formal-language
// setting) or learned embeddings. The stack's own semantics, its action
// layout and its carried state are described in package stacks.
//
// # Sentence mode and stream mode
//
// Sentence mode (Model.Loss, Gradient, LogProbs, the formal-language tasks)
// runs each string w_1 … w_n alone from the zero state h_0 = c_0 = 0 and
// the initial stack, and makes n+1 predictions, of w_1 … w_n and EOS (the
// last output symbol): prediction 0 comes from h_0, and the stack is
// updated after h_1 … h_{n−1} (the update after h_n would never be read).
// A string's symbols are never EOS, which ends it: a batch holding the EOS
// id (possible when InputVocab includes it) is refused. A stream's inputs,
// by contrast, may hold it, since they are its targets fed back.
// The loss is the per-sequence sum of the token cross-entropies, averaged
// over the batch.
//
// Stream mode (Stream; language modeling, generation, surprisal) runs B
// parallel token streams chunk by chunk from a carried State: for every
// input token x_t the controller steps, y_t predicts the given target, and
// the stack is updated after every token, the update made after the last
// token of a chunk being carried into the next chunk. The carried state is
// the LSTM's (h, c) of every layer and the stack's own state; it is a
// detached value, so gradients are truncated at chunk starts (truncated
// backpropagation through time). Forward computation in chunks is exact:
// the loss of a stream cut into chunks of any sizes equals its loss
// computed as one chunk. Where the update after a chunk's last token is
// differentiated is a choice (Stream.SetBoundary): computed in that chunk
// and carried as a constant (BoundaryInChunk, the default, as the authors'
// code does for the nondeterministic stacks), or, as their code does for
// the superposition stack, computed at the start of the next chunk from the
// carried hidden state, inside its graph, so that the next chunk's loss
// trains the stack's action layer through it (BoundaryNextChunk; on the
// CPU and the GPU). A chunk's loss is the mean cross-entropy over its
// targets (nats per token); NoTarget marks a position without one. Only
// models whose stack can carry its state have streams: the LSTM, JM with a
// depth limit and the memory-limited nondeterministic stacks.
//
// # Training
//
// Fit trains a model on an Objective (the gradient steps of an epoch and a
// validation score) with an Optimizer (Adam or SGD), gradient-norm
// clipping, a learning-rate Schedule driven by the validation score (the
// paper's Plateau; PerplexityPlateau, the authors' Penn Treebank rule,
// which judges the rate's decay apart from the best parameters
// (RateSchedule); or one of your own: Improves, Next and Check), early
// stopping and the best parameters restored at the end; a Recorder
// receives its events
// (progress, logs, early interruption with ErrStop). An objective may carry
// the lower bound of its validation score (Bounded: WithLowerBound,
// WithoutLowerBound), whose difference Fit then reports per epoch; Train
// gives its objective the bound of TrainConfig.LowerBound. Train is Fit on the
// formal-language protocol (SentenceObjective: Adam, clipping at 5, ×0.9
// after 5 epochs without improvement, stop after 10, at most 200 epochs);
// StreamObjective is truncated backpropagation through time over a Stream.
// With a checkpoint file, a run checkpoints atomically after every epoch
// (and, with CheckpointEvery, within epochs, the stream's carried state
// included) and a killed run resumes exactly, ending bit for bit where an
// uninterrupted run ends; a checkpoint made with other settings is refused
// with an error listing the differences. A checkpoint carries a SHA-256
// checksum of the whole file, and every field is checked when it is
// loaded, the history replayed against the schedule: a damaged or edited
// one is an error (ErrBadCheckpoint) naming the file, never a silently
// wrong run. Checkpoints written before the checksum are still resumed.
// LoadCheckpointModels reads a checkpoint's models (the best so far and
// the current one) to evaluate or decode a run in progress without
// finishing it.
// Config.Validate's error is a *ConfigError listing a *FieldError per
// refused field, which errors.Is tells apart by reason (ErrUnknownKind,
// ErrRequired, ErrOutOfRange, ErrNotApplicable, ErrTooLarge) and errors.As
// by field.
//
// # Generation, decoding and surprisal
//
// Sample draws strings at a temperature, from the top k symbols, after a
// prompt, in sentence mode or in stream mode; it runs the model forward on
// plain slices, so it works for every kind of the library, the unlimited
// stacks included (a kind registered from outside needs stacks.Runners).
// SampleEach draws the same strings and hands them over one at a time, a
// batch in memory at once, for counts too large to hold.
// Viterbi decodes the best run of a nondeterministic stack on a string;
// ActionLogWeights returns the action weights it decodes. Surprisals scores
// sentences one by one from a fresh state (−log₂ p per token), as
// SyntaxGym needs.
//
// # GPU
//
// Model.SetDevice moves a model to an NVIDIA GPU (CUDA(0), or
// ParseDevice("cuda:N")); from then on Loss, Gradient, LogProbs, streams,
// surprisals and training compute there (sampling and Viterbi decoding
// run on the CPU, from the device's parameters), and SetDevice(CPU)
// brings it back and gives the GPU's memory back (a model dropped while on
// the GPU keeps its memory until the program ends). The build stays pure Go: nothing about CUDA is needed to
// build or to run on the CPU. At SetDevice the CUDA driver (libcuda.so.1,
// from the NVIDIA driver), NVRTC (libnvrtc.so.13, .12 or .11.2) and
// cuBLAS (libcublas.so.13, .12 or .11) of CUDA 11.2 or later are loaded at
// run time, from the directories of the environment variable
// NSRNN_CUDA_LIBS (a colon-separated list of directories or files) first,
// then the dynamic loader's own search (ldconfig, LD_LIBRARY_PATH), then
// /usr/local/cuda/targets/x86_64-linux/lib, /usr/local/cuda/lib64,
// /usr/local/nvidia/lib64 and /usr/lib/x86_64-linux-gnu (on arm64, the
// sbsa-linux and aarch64-linux ones). Where one is missing, SetDevice fails at once
// with an error naming it and where it looked, and the model stays on the
// CPU; Devices lists the GPUs found and why one is not usable (compute
// capability 6.0 or later is needed). The kernels are CUDA C compiled by
// NVRTC at the first use in a process, for the card's own architecture.
//
// On the GPU the parameters live in device memory in float64 (the values
// Params, Save and checkpoints read, copied back on demand), and during
// training the gradients, the clipping and the SGD or Adam update stay
// there too, so that a step moves only its tokens and its loss between
// host and device; a stream's carried state stays on the device until the
// host needs it (a checkpoint, the CPU, a state handed out that the
// device is about to overwrite). Stream.CrossEntropy sums its chunks'
// losses on the device and reads the total once, so that evaluating a
// corpus queues chunk after chunk without waiting for each loss. A model
// file or checkpoint is
// the same whichever device wrote it: a run started on a GPU resumes on a
// CPU and the other way round. With Precision Float64 the GPU computes in
// float64 throughout and agrees with the CPU to about 1e-12 relative;
// with Float32 every product, gate, state and score is float32 (the
// normalizers, losses, parameters and optimizer state stay float64), and
// the loss and gradients agree with the CPU's to about 1e-6. Reductions
// run in a fixed order, so the same inputs give the same bits. Workers
// has no effect there.
//
// What runs on the GPU today: the plain LSTM (kind "lstm": one-hot or
// embedded inputs, any number of layers), the superposition stack (kind
// "jm": a learned pushed vector or the hidden state, with or without a
// depth limit), the stratification stack (kind "gref") and the
// nondeterministic stacks (NS, NS+S, NS+U, RNS; unlimited or
// memory-limited, either bottom), in sentence and stream mode (for those
// that carry their state): evaluation, training and surprisals.
// The nondeterministic stacks' dynamic program runs in float64 whatever
// the Precision, as on the CPU. Their carried state stays on the device
// from chunk to chunk and comes to the host, in log space
// (stacks.NSLogState), only when the host needs it: a checkpoint
// (Stream.MarshalState), the CPU, or a state handed out (Stream.State)
// that the device is about to overwrite; so a stream may move between the
// CPU and the GPU at any chunk. The vector stack (VRNS, every bottom
// vector) runs there too, in both modes. Kinds with a stack registered
// from outside and Viterbi decoding run on the CPU only; SetDevice refuses
// those kinds, and the model stays on the CPU.
//
// A pass of a shape met before (the same batch, length and mode) is
// captured as a CUDA graph and replayed, one launch instead of hundreds;
// the environment variable NSRNN_CUDA_GRAPHS=0 turns that off. Where there
// is no GPU, NSRNN_GPU_EMULATOR=1 makes cuda:0 an emulator that runs the
// same CUDA kernels on the CPU (compiled by the system's C++ compiler),
// slowly: for testing a program's GPU path; NSRNN_GPU_EMULATOR=simt runs
// each CUDA thread on its own, so that warps and blocks cooperate as on a
// card (slower still: for testing the kernels). NSRNN_CUDA_PROFILE=1 times
// every kernel, product and copy on the device's clock (EnvCUDAProfile);
// the GPU benchmarks then write a table per benchmark to the file named
// by NSRNN_CUDA_PROFILE_OUT. NSRNN_CUDA_LSTM_STEP=fused runs each LSTM step
// as one kernel instead of a cuBLAS product and the cell's kernel
// (EnvCUDALSTMStep), NSRNN_CUDA_LSTM_STEP=persistent runs all the steps
// of a chunk of an LSTM model's layer as one kernel, and
// NSRNN_CUDA_LSTM_BACK=fused does the same for the backward pass
// (EnvCUDALSTMBack), to measure them against each other. Products of
// few terms or few columns (a stack reading's, an action layer's) run in
// the engine's own kernels, where cuBLAS leaves the card idle;
// NSRNN_CUDA_SMALL_PRODUCTS=0 sends them to cuBLAS too
// (EnvCUDASmallProducts). The output layer (the scores, softmax and
// loss) runs on a second stream a block of positions at a time, beside
// the recurrence's later steps, whose small products and stack kernels
// leave most of the card idle; NSRNN_CUDA_PIPELINE=0 keeps it after the
// recurrence on one stream (EnvCUDAPipeline).
//
// # Model kinds
//
// AllKinds is the table of model kinds: each a Kind declaration with its
// name, its hyperparameters (the Config fields it uses, each with its
// name, flag help, whether it is required, its stream default and its
// check), the constructor and sizes of its stack, whether it runs as a
// stream, and whether its stack is nondeterministic. Everything that
// lists or distinguishes kinds reads the declarations: Validate (a
// kind-specific field that the kind does not declare is ErrNotApplicable,
// a declared one passes its Check), CountParams, New, the command-line
// flags of the programs and sweeps. How figures and tables draw and name
// a kind (label, colour, run names) is the programs' concern, not the
// model's: package protocol holds it (protocol.KindStyle,
// RegisterStyle).
//
// # Adding a model kind
//
// A kind is one file: a Kind passed to RegisterKind. The library's are
// declared in kind_lstm.go, kind_gref.go, kind_jm.go, kind_ns.go (the four
// NS variants) and kind_vrns.go, and registered in the explicit order of
// one list in kinds.go (that of AllKinds); a kind added to the library is
// a kind_….go and an entry of that list. A package outside this module
// registers its kind from an init function, when it is
// imported, and its models are then built, validated, trained (Train,
// Fit), run as streams, saved and loaded like the library's; the program
// that loads a saved model imports the package that registers its kind.
// Names never clash: RegisterKind panics on a name already registered, as
// on an inconsistent declaration; it is safe for concurrent use. A kind
// uses Config's fields for the hyperparameters it shares with the
// library's kinds, and declares those of its own as options
// (Hyperparameter.Option): integers kept in Config.Options by name, checked
// by Validate like fields, saved with the model, and given to programs
// as flags of their names.
//
// The stack itself is a stacks.Layer: parameters of package param, bound
// to each graph through a param.Binding, and an Instance whose steps are
// graph nodes. Two ways to write them: nodes of package fused (forward
// and backward passes on plain slices, fast), or gorgonia's own
// operations, reading the parameters through param.Binding.Diff, with
// every gradient derived by gorgonia (no backward pass to write: the way
// to try an idea before making it fast). Package stacks/stackstest is the
// conformance suite that a stack passes: gradients against finite
// differences, carried state, errors. The packages examples/counterstack
// (fused) and examples/autogradcounter (gorgonia's operations) define the
// same toy stack outside package nsrnn, each in one file, with their
// tests and an Example that trains it; their benchmarks compare the two.
//
// A model is built only if its layer agrees with the declaration: its
// reading size with Kind.ReadingSize, its parameter count with
// Kind.StackParams (the limits and the saved files' checks are computed
// from them), and its parameters' names, which must be its own (prefixed
// with the name Kind.Stack is given: "stack.W"). Beyond stacks.Layer, a
// stack may implement optional interfaces of package stacks, each of
// which enables something: stacks.Runners runs it without a graph, which
// sampling (Sample, SampleEach, Generate) needs; stacks.Replicator gives
// each part of a batch a replica (Workers; without it a batch runs as one
// part); stacks.Sizer states the memory of its tape, which the memory
// rules check before a run; stacks.Recycler takes back carried states no
// longer in use, so that a long stream does not allocate one per chunk.
// The library's stacks implement them all; a kind without one is refused
// what needs it with an error that says so.
//
// # Graphs and memory
//
// Each model builds and caches one gorgonia graph per mode, length, batch
// size and whether it computes gradients (within GraphCacheBytes, and
// MaxGraphs if set, the least recently used dropped first); all of them
// share the model's parameter tensors. Every heavy kernel is one fused node
// per step with a hand-written backward pass, so a graph has O(n) nodes.
// The graphs of the library's kinds run on the model's own executor, which
// runs the nodes in the order gorgonia's tape machine would, with the same
// operations, and so computes the same bits, without gorgonia's compiler,
// whose time grows with the square of a graph's nodes (it dominated the
// first epoch of a formal-language run, which builds a graph per length);
// a graph with an operation the executor does not run (a layer written in
// gorgonia's own operations) runs on gorgonia's tape machine.
// Weight gradients are accumulated in place per graph, never one full-size
// gradient per step: the output layer is one product over all the positions
// of a run, and the LSTM's weight gradients are one product per layer over
// the run's steps. Validate refuses a configuration with more than MaxParams
// parameters, naming the fields that set its size, before anything is
// allocated; CountParams counts parameters without building a model.
// Training keeps several copies of the parameters (gradients, optimizer
// state, best model, checkpoint): Fit, and Config.CheckTraining before a
// program starts, refuse a model whose copies would exceed MaxTrainingBytes.
// MaxGraphBytes is the memory rule of everything else a model allocates by
// count: a graph (batch × length), a Stream's streams, and Sample's strings
// (SampleEach holds one batch) are refused with an error wrapping
// ErrTooLarge before they are allocated; the stacks' dynamic programs and
// the superposition stack's tape (which grows with its depth limit) have
// their own bound, stacks.MaxTapeBytes. A graph is built at its first run,
// so a program that streams a corpus asks Stream.CheckChunk about its
// longest chunk before it starts, and gets the error that chunk's run would
// return; Model.CheckBatch answers the same for a batch of sequences.
//
// Gorgonia's compiler merges distinct nodes whose 32-bit hashes collide,
// and the program then computes something else without a word (about one
// graph in a few thousand of a thousand nodes); every graph that runs on
// gorgonia's tape machine is checked for such a pair (fused.HashCollision)
// and built again with other hashes when it has one. The executor merges
// nothing.
//
// A graph's values are allocated by its first run and reused by the next
// ones, so that a training step allocates little. A Stream reuses the
// memory of the carried stack states it has left behind (megabytes per
// stream for the larger nondeterministic stacks), except the states it
// handed out through State or was given through SetState: those stay as
// they are, whatever the stream does next.
//
// Matrix products go through gonum's BLAS interface, in pure Go by
// default and with OpenBLAS under the build tag openblas, an order of
// magnitude faster at the Penn Treebank sizes: BLAS says which, and its
// documentation how to build and tune it.
//
// # Precision
//
// Everything is float64 by default, and the tests hold the results to
// float64 rounding (finite differences, chunked against whole runs,
// closed forms). With a large vocabulary the matrix products dominate a
// step (at the Penn Treebank sizes, 10,000 words and 256 units, the output
// layer is about 80% of the arithmetic and the LSTM most of the rest), so
// Model.Precision can make them float32: the output layer's three products
// and the LSTM's run in float32 (twice the throughput of float64 in
// OpenBLAS) on float32 copies of the weights made at each run, the output
// probabilities are kept in float32 (half the memory), and the softmax's
// exponentials use a table-driven polynomial accurate to 1e-10 relative,
// eight at a time on amd64 CPUs with AVX-512 (the same values; only the
// order of their sum differs).
// The LSTM's gates and states, the stacks, normalizers, losses and the
// gradients added into the float64 parameters stay float64, so the loss
// moves by about 1e-6 relative and runs stay deterministic. Measured on a
// 2-core machine with OpenBLAS, an LSTM-256 training step (B = 32, T = 35)
// is about 1.5× faster and evaluation about 2× faster.
//
// With two or more cores (GOMAXPROCS), a float32 training pass with a
// large output layer (positions times vocabulary at least 2²⁰) overlaps
// that layer with the recurrence: the scores and softmax of each block of
// about 320 positions are computed on a second goroutine as soon as the
// block's hidden states exist, and the gradient of W_hy on it while the
// recurrence is differentiated. During the pass OpenBLAS runs each
// product on one thread (the program shares the cores out itself); the
// setting is the process's, so that products of other goroutines run on
// one thread meanwhile too. Each block is computed by the same code
// whichever goroutine takes it, so the results do not depend on the
// timing; with OpenBLAS they differ from those of one core, which keeps
// the whole products, by float32 roundings (in pure Go they are the same
// bits). On a 2-core machine this made LSTM-256 training 1.08–1.11×
// faster and RNS 1-2's 1.14–1.20×.
//
// # Parallel parts
//
// A step of a sentence-mode batch is a chain of small operations per time
// step, too fine to spread over cores one step at a time. Model.Workers
// instead splits a batch of Loss and Gradient into parts (contiguous,
// sizes differing by at most one), runs each part's graph to the end on a
// goroutine of its own, and combines the parts' losses and gradients
// weighted by their sizes, which equals the whole batch's result to
// rounding. Each part has its own graphs and, for a stack RNN, its own
// replica of the stack (stacks.Replicator), which shares the parameters
// and keeps its own scratch tapes, and whose dynamic program uses
// GOMAXPROCS/Workers goroutines (at least one); a Model is still not safe
// for concurrent use by its callers. On two idle cores, a training step of
// the paper's CFL models (batch 10, length 60) takes 1.7–1.9× less time
// with Workers = 2 than with one part (|Q| = 2 and 3, measured on
// different days; BenchmarkTrainStep); the CFL
// programs' --workers sets it, by default to Config.PartsFor's count:
// GOMAXPROCS, or a multiple of it where the dynamic programs of a part
// per core would outgrow the caches (at |Q| = 3 on strings of up to 80
// symbols, four parts on two cores train about 1.3× faster than two).
// Where other work keeps every core busy (a sweep running one run per
// core), leave it at 1, or at PartsFor's count for one core.
//
// # Errors and panics
//
// Everything that comes from a user's settings or data (a Config, batch
// and stream sizes, token ids, sampling options, training data and
// options, model and checkpoint files) is checked, and refused with an
// error that says what is wrong, before anything large is allocated;
// Train and SentenceObjective check every training and validation batch
// before the first step, so that bad data never leaves a model half
// trained. Panics are kept for programmer errors: calling a method on a nil or
// zero-value Model, Stream or optimizer not made by its constructor, a
// negative size given to NewAdam, an optimizer's Update with gradients
// that do not fit its parameters, TextLog to a nil writer, a nil
// RecorderFunc, or RegisterKind with a name already registered or an
// inconsistent declaration. A kind whose layers disagree with its
// declaration is refused by New with an error.
//
// A Model computes one thing at a time: a computation that would overlap
// another goroutine's is refused with an error wrapping ErrConcurrentUse,
// and the methods that return no error (Init, KeepGraphs, Graphs,
// ReleaseGraphs) wait for it to end. Fit's parameter updates wait for
// another goroutine's computation too. MarshalBinary and Save may be
// called from another goroutine while Fit trains (to keep snapshots, say):
// they wait for an update under way, so a snapshot holds the parameters
// of one step, and they do not refuse or hold up training's own
// computations.
package nsrnn
