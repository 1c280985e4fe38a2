//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// TestNotifySweepSignalsHangup sends SIGHUP to the test process: a sweep
// catches it (to pass it on to its runs) unless it was ignored, as under
// nohup, where it stays ignored.
func TestNotifySweepSignalsHangup(t *testing.T) {
	if signal.Ignored(syscall.SIGHUP) {
		t.Skip("the test runs with SIGHUP ignored")
	}
	ch := make(chan os.Signal, 4)
	NotifySweepSignals(ch)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-ch:
		if s != syscall.SIGHUP {
			t.Errorf("got %v, want SIGHUP", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SIGHUP not caught")
	}
	signal.Stop(ch)

	signal.Ignore(syscall.SIGHUP)
	defer signal.Reset(syscall.SIGHUP)
	ch = make(chan os.Signal, 4)
	NotifySweepSignals(ch)
	defer signal.Stop(ch)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-ch:
		t.Errorf("got %v, which was ignored", s)
	case <-time.After(200 * time.Millisecond):
	}
	if !signal.Ignored(syscall.SIGHUP) {
		t.Error("SIGHUP no longer ignored")
	}
}
