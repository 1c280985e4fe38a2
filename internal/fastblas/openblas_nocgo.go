//go:build openblas && !cgo

package fastblas

// The tag openblas without cgo: openblascheck stops the build, saying that
// cgo is needed.
import _ "github.com/nsrnn/nsrnn/internal/fastblas/openblascheck"
