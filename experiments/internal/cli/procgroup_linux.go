package cli

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd's process the leader of a process group of its
// own, out of the terminal's foreground group, and has the kernel send it
// SIGTERM when the thread that starts it ends: a sweep killed outright
// (SIGKILL, which it cannot pass on) then stops its run too, with a
// checkpoint, instead of leaving it to train unsupervised. The caller
// keeps that thread for the run's life (runtime.LockOSThread from Start
// to Wait): Go may otherwise end an idle thread, and with it the run.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
