//go:build !linux

package lifeline

// Tie does nothing where the kernel offers no parent-death signal.
func Tie() {}
