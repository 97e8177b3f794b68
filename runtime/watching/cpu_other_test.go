//go:build !unix

package watching

import (
	"testing"
	"time"
)

// cpuTime is not measured here: cpu-ns/op is not reported.
func cpuTime(*testing.B) (time.Duration, bool) { return 0, false }
