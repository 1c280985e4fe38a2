package fma

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// Fused agrees with what this build is known to do: amd64 fuses from
// GOAMD64=v3 and arm64 always; other architectures are not checked.
func TestFused(t *testing.T) {
	want, known := false, true
	switch runtime.GOARCH {
	case "amd64":
		level := "v1"
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "GOAMD64" {
					level = s.Value
				}
			}
		}
		want = level >= "v3"
	case "arm64":
		want = true
	default:
		known = false
	}
	if got := Fused(); known && got != want {
		t.Errorf("Fused() = %v on %s, want %v", got, runtime.GOARCH, want)
	}
}
