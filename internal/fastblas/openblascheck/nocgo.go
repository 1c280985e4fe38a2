//go:build openblas && !cgo

package openblascheck

// The build tag openblas calls OpenBLAS through cgo: with CGO_ENABLED=0 the
// build stops here, on a name that says so.
const _ = nsrnn_the_openblas_build_tag_needs_cgo_set_CGO_ENABLED_1_and_install_libopenblas_dev
