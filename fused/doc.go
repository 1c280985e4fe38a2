// Package fused puts hand-written kernels on plain []float64 slices into a
// gorgonia expression graph as single nodes with hand-written backward
// passes.
//
// # Kernels
//
// A Kernel computes one output tensor from one or more float64 input
// tensors. Apply wraps it in a gorgonia op that supports symbolic
// differentiation: the gradient of a kernel node is one backward node that
// computes the gradients of all inputs at once into a flat buffer, plus one
// cheap extraction node per differentiable input. Inputs that are never
// differentiated (integer targets, one-hot inputs) are declared by the
// optional Constant interface.
//
// # Cost
//
// Every node costs about 1.5 µs at run time in gorgonia, so fusing a whole
// step of a recurrent cell into one kernel keeps graphs small and fast.
//
// # Hashes
//
// Kernels must write every parameter that distinguishes them into
// WriteHash: gorgonia merges nodes whose ops hash alike and whose children
// are the same. Gorgonia's compiler also merges distinct nodes whose
// 32-bit hashes merely collide, which a graph of a thousand nodes has
// about once in a few thousand builds: check a graph with HashCollision
// before compiling it.
package fused
