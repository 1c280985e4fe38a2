// Package fastblas selects the BLAS implementation of nsrnn's matrix
// products. The default build uses gonum's pure-Go BLAS, so that the
// library builds anywhere without cgo. Built with the tag openblas (and
// cgo, with OpenBLAS installed: Debian's libopenblas-dev), every blas64
// product — the LSTM's, the output layer's and the stacks' affine layers —
// goes through OpenBLAS, an order of magnitude faster at the Penn Treebank
// sizes. Importing the package (for its side effect) makes the choice.
//
// Where OpenBLAS is not installed, the tagged build stops early with a
// message that says what to install (package openblascheck): Debian's
// and Ubuntu's libopenblas-dev, Fedora's openblas-devel, Homebrew's
// openblas. Without cgo (CGO_ENABLED=0) it stops on a name that says cgo
// is needed.
package fastblas
