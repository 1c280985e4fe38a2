//go:build linux || freebsd || netbsd || openbsd || dragonfly || darwin || ios

package main

import (
	"os"
	"syscall"
)

// peakRSS returns the peak resident set size of the finished process ps,
// from getrusage's maxrss, which counts maxrssUnit bytes.
func peakRSS(ps *os.ProcessState) (uint64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru.Maxrss <= 0 {
		return 0, false
	}
	return uint64(ru.Maxrss) * maxrssUnit, true
}
