//go:build unix && !linux

package cli

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd's process the leader of a process group of its
// own, out of the terminal's foreground group.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
