package queueing

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kopf-go/kopf/pyfmt"
	"github.com/kopf-go/kopf/runtime/execution"
)

// hungGrace is how long the workers still running at the exit timeout get,
// once their context is cancelled, to return before they are reported as
// hung and left behind. Kopf polls its hung tasks at the same interval.
const hungGrace = time.Second

// workers are the workers of one resource (a Queue).
type workers interface {
	Close()
	Wait()
	Busy() []string
}

// Drain stops the workers of one resource when the operator exits, as
// Kopf's queueing does on its end-of-stream:
//
//  1. No event is taken any more (w.Close); workers finish the cycle they
//     are in, with their context intact, for up to exitTimeout
//     (settings.Queueing.ExitTimeout): what they store meanwhile is stored.
//  2. At the timeout, the objects still being processed are logged
//     ("Unprocessed streams left for ...", Kopf's warning) and the workers'
//     context is cancelled (cancel): a handler that honours its context
//     returns, and nothing of that cycle is stored any more (the reactor
//     sends no patch with a cancelled context).
//  3. Those that have not returned hungGrace later ignore the
//     cancellation (e.g. a handler blocked in a call without a context):
//     they are logged as hung tasks, and Drain returns without waiting for
//     them. The operator exits; if it runs in-process, they keep running
//     until they return, and whatever they return is discarded.
//
// So Drain returns at most exitTimeout + hungGrace after it is called.
// what names the resource in the log lines.
func (q *Queue) Drain(cancel context.CancelFunc, exitTimeout time.Duration, what string, logger *slog.Logger) {
	drain(q, cancel, exitTimeout, what, logger)
}

func drain(w workers, cancel context.CancelFunc, exitTimeout time.Duration, what string, logger *slog.Logger) {
	defer cancel()
	w.Close()
	done := make(chan struct{})
	go func() { w.Wait(); close(done) }()
	timer := time.NewTimer(exitTimeout)
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	}
	if busy := w.Busy(); len(busy) > 0 {
		logger.Warn(fmt.Sprintf("Unprocessed streams left for %s of %s after the exit timeout of %s seconds; cancelling them.",
			pyfmt.Repr(busy), what, execution.Seconds(exitTimeout)))
	}
	cancel()
	grace := time.NewTimer(hungGrace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
	}
	if busy := w.Busy(); len(busy) > 0 {
		logger.Warn(fmt.Sprintf("Hung tasks are not stopped: exiting without waiting for them; tasks left: %s of %s.", pyfmt.Repr(busy), what))
	}
}
