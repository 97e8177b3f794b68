package leases

import (
	"fmt"
	"time"
)

// The defaults of Timing: client-go's leader election's.
const (
	DefaultDuration      = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Timing is how a Lease is held.
//
// Duration is the Lease's leaseDurationSeconds (written in whole seconds,
// rounded up): how long the others count it live after they observed its
// last change. RenewDeadline is how long its holder may fail to renew it
// before it gives it up; RetryPeriod is how often a holder renews and a
// candidate tries to take it. Duration > RenewDeadline > RetryPeriod.
type Timing struct {
	Duration      time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// Defaulted fills in what is zero: Duration 15 s; RenewDeadline and
// RetryPeriod in the defaults' proportions to Duration (2/3 and 2/15:
// 10 s and 2 s for 15 s).
func (t Timing) Defaulted() Timing {
	if t.Duration <= 0 {
		t.Duration = DefaultDuration
	}
	if t.RenewDeadline <= 0 {
		t.RenewDeadline = t.Duration * 2 / 3
	}
	if t.RetryPeriod <= 0 {
		t.RetryPeriod = t.Duration * 2 / 15
	}
	return t
}

// Validate says whether Duration > RenewDeadline > RetryPeriod > 0.
func (t Timing) Validate() error {
	if t.RetryPeriod <= 0 || t.RenewDeadline <= t.RetryPeriod || t.Duration <= t.RenewDeadline {
		return fmt.Errorf("leases: the lease duration %s must exceed the renew deadline %s, which must exceed the retry period %s", t.Duration, t.RenewDeadline, t.RetryPeriod)
	}
	return nil
}

// Seconds is Duration as a Lease's leaseDurationSeconds: whole seconds,
// rounded up, at least 1.
func (t Timing) Seconds() int32 {
	return max(1, int32((t.Duration+time.Second-1)/time.Second))
}
