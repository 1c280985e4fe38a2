//go:build !unix

package main

import "os"

// currentUmask is not known here.
func currentUmask() (os.FileMode, bool) { return 0, false }
