//go:build linux

// Package lifeline ties a control-plane process to its parent: when the
// parent (a test, or the `make cluster` launcher) dies for any reason, even
// SIGKILL, the kernel sends this process SIGTERM, so no etcd or
// kube-apiserver is ever left behind.
package lifeline

import (
	"os"
	"syscall"
)

// Tie asks the kernel for SIGTERM when the parent dies, and exits at once
// if the parent is already gone (reparented to init or a subreaper).
func Tie() {
	parent := os.Getppid()
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	if errno != 0 {
		return
	}
	if parent == 1 || os.Getppid() != parent {
		os.Exit(1)
	}
}
