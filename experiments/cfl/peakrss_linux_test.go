package main

import (
	"os/exec"
	"testing"
)

// The peak resident set size of a finished shell is in bytes: between
// 100 KiB and 1 GiB, not its kilobytes (maxrss's unit here) nor those
// counted twice.
func TestPeakRSS(t *testing.T) {
	cmd := exec.Command("sh", "-c", "true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no shell to measure: %v", err)
	}
	b, ok := peakRSS(cmd.ProcessState)
	if !ok || b < 100<<10 || b > 1<<30 {
		t.Errorf("peak RSS of sh: %d bytes (%v)", b, ok)
	}
}
