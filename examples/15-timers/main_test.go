package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

const (
	name = "kopf-example-1"
	ref  = "[default/kopf-example-1] "
)

// As Kopf's end-to-end run of this example, with the times checked: each
// timer first runs once the object has been unchanged for its idle time,
// then every interval; a change of the object postpones the next run by
// the idle time again; the deletion of the object is not held up by the
// timers waiting for their next run. Times are asserted as bounds, from
// the log's timestamps.
func TestTimers(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	objs := kopftest.NewObjects(t, env.Config, examples.KopfExamples, "default")
	op := kopftest.Start(t, env.Config, Register)
	// Idle times count from when the operator first sees the object.
	op.WaitReady(30 * time.Second)
	created := time.Now()
	if err := env.Apply(t.Context(), examples.Object); err != nil {
		t.Fatal(err)
	}

	syncPing := ref + "Ping from a sync timer: field='value'"
	asyncPing := ref + "Ping from an async timer: field='value'"
	waitCount(t, op, asyncPing, 2, 30*time.Second)
	waitCount(t, op, syncPing, 3, 10*time.Second)
	// The idle time counts from the operator's first sight of the object:
	// after its creation, and at the latest when it adds the finalizer.
	seen := logTimes(t, op.Logs(), ref+"Adding the finalizer")[0]
	checkTicks(t, "sync", logTimes(t, op.Logs(), syncPing), created, seen, 5*time.Second, 2*time.Second)
	checkTicks(t, "async", logTimes(t, op.Logs(), asyncPing), created, seen, 10*time.Second, 4*time.Second)

	// A change: the next run of each timer waits for its idle time again,
	// and sees the new field.
	changed := time.Now()
	objs.MergePatch(name, map[string]any{"spec": map[string]any{"field": "changed"}})
	syncChanged := ref + "Ping from a sync timer: field='changed'"
	waitCount(t, op, syncChanged, 2, 20*time.Second)
	checkTicks(t, "sync after the change", logTimes(t, op.Logs(), syncChanged), changed, changed, 5*time.Second, 2*time.Second)
	if ticks := logTimes(t, op.Logs(), syncPing); ticks[len(ticks)-1].After(logTimes(t, op.Logs(), syncChanged)[0]) {
		t.Errorf("the sync timer still saw the old field after it saw the new one")
	}

	// The timers are waiting between runs: the deletion is not held up.
	deleted := time.Now()
	objs.Delete(name, 10*time.Second)
	if took := time.Since(deleted); took > 5*time.Second {
		t.Errorf("the object was released %s after its deletion, want at once: timers between runs stop at once", took)
	}
	if err := op.Stop(); err != nil {
		t.Fatalf("the operator: %v", err)
	}
	for _, id := range []string{"every_few_seconds_sync", "every_few_seconds_async"} {
		if n := len(op.Outcomes(kopftest.Match{Handler: id, Cause: kopftest.CauseTimer, Result: kopftest.Succeeded})); n < 2 {
			t.Errorf("%s succeeded %d times, want at least 2", id, n)
		}
		if n := len(op.Outcomes(kopftest.Match{Handler: id, Result: kopftest.Retrying})); n != 0 {
			t.Errorf("%s failed %d times", id, n)
		}
	}
}

// checkTicks checks the times of a timer's runs: the first comes idle
// after the change, which the operator saw between since and seen (no
// earlier than idle after since, and not much later than idle after
// seen), the next ones every interval (no sooner, and not much later).
func checkTicks(t *testing.T, what string, ticks []time.Time, since, seen time.Time, idle, interval time.Duration) {
	t.Helper()
	const late = 2 * time.Second // generous: a shared machine
	// The log's timestamps are truncated to milliseconds.
	const ms = time.Millisecond
	if first := ticks[0].Sub(since); first < idle-ms {
		t.Errorf("%s: the first run came %s after the change, sooner than its idle time %s", what, first, idle)
	}
	if first := ticks[0].Sub(seen); first > idle+late {
		t.Errorf("%s: the first run came %s after the operator saw the change, want %s (idle) to %s", what, first, idle, idle+late)
	}
	for i := 1; i < len(ticks); i++ {
		if gap := ticks[i].Sub(ticks[i-1]); gap < interval-ms || gap > interval+late {
			t.Errorf("%s: run %d came %s after the previous one, want %s (interval) to %s", what, i, gap, interval, interval+late)
		}
	}
}

// waitCount waits until the log has the text n times.
func waitCount(t *testing.T, op *kopftest.Operator, text string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for op.CountLog(text) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%q is logged %d times in %s, want %d", text, op.CountLog(text), timeout, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logTimes returns the timestamps of the log lines that contain the text,
// from Kopf's full format: "[2006-01-02 15:04:05,000] logger [LEVEL] ...".
func logTimes(t *testing.T, logs, text string) []time.Time {
	t.Helper()
	var out []time.Time
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, text) {
			continue
		}
		stamp, _, ok := strings.Cut(strings.TrimPrefix(line, "["), "]")
		ts, err := time.ParseInLocation("2006-01-02 15:04:05,000", stamp, time.Local)
		if !ok || err != nil {
			t.Fatalf("no timestamp in the log line %q: %v", line, err)
		}
		out = append(out, ts)
	}
	return out
}
