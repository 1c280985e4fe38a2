//go:build !(linux || darwin || ios || freebsd || netbsd || openbsd || dragonfly)

package protocol

import "os"

// flock does nothing where there is no flock(2): the directory is not
// locked.
func flock(*os.File) (bool, error) { return true, nil }
