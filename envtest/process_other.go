//go:build !linux

package envtest

import "syscall"

// sysProcAttr has no parent-death signal to ask for outside Linux: the
// processes stop on Stop only.
func sysProcAttr() *syscall.SysProcAttr { return nil }
