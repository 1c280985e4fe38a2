//go:build unix

package main

import (
	"os"
	"syscall"
)

// currentUmask returns the process's umask.
func currentUmask() (os.FileMode, bool) {
	u := syscall.Umask(0)
	syscall.Umask(u)
	return os.FileMode(u), true
}
