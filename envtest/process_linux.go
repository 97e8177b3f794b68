package envtest

import "syscall"

// sysProcAttr asks Linux for SIGTERM to the child when its parent (the
// thread of this process that started it) dies, so that a killed test
// leaves no controller behind, kwok included, which has no lifeline of its
// own.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
