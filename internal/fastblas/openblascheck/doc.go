// Package openblascheck stops a build with the tag openblas early, with a
// message that says what to install, where OpenBLAS is missing: the
// default build (without the tag) compiles nothing here.
//
// With the tag and cgo, its cgo preamble checks that OpenBLAS's header
// openblas_config.h can be included (as <openblas_config.h>, where
// Debian's libopenblas-dev puts it, or <openblas/openblas_config.h>,
// Fedora's openblas-devel) and otherwise fails with an #error naming the
// packages, instead of the compiler's and linker's raw errors about
// cblas.h and -lopenblas. With the tag and without cgo (CGO_ENABLED=0),
// the build fails on an undefined name that says cgo is needed.
//
// The packages that use OpenBLAS (gonum's netlib bindings) are compiled
// alongside this one and may report their own errors about cblas.h as
// well; the #error here is the one that says what to do.
package openblascheck
