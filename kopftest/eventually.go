package kopftest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Eventually checks cond every 100 ms until it holds, and fails the test
// after the timeout, saying what it waited for and cond's last error. An
// error of cond does not end the wait (the next check may succeed: an API
// server restarting, an object not created yet). cond's context ends with
// the test. It is the wait for what the operator's log and outcomes do not
// show, such as a pod's phase or an object garbage-collected.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := pollUntil(t.Context(), 100*time.Millisecond, timeout, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// pollUntil checks cond every interval until it holds or the timeout
// passes; the last error of cond is reported with the timeout.
func pollUntil(ctx context.Context, interval, timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
		}
		return ok, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("not in %s (last error: %w)", timeout, last)
	} else if err != nil {
		return fmt.Errorf("not in %s", timeout)
	}
	return nil
}
