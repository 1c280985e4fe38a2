//go:build openblas && cgo

package openblascheck

/*
#if !__has_include(<openblas_config.h>) && !__has_include(<openblas/openblas_config.h>)
#error "nsrnn: the build tag openblas needs OpenBLAS and its headers. Install them (Debian, Ubuntu: apt-get install libopenblas-dev; Fedora: dnf install openblas-devel; macOS: brew install openblas, then set CGO_CFLAGS=-I$(brew --prefix openblas)/include and CGO_LDFLAGS=-L$(brew --prefix openblas)/lib), or build without -tags openblas (pure Go)."
#endif
*/
import "C"
