// Command exceptions is the Go port of Kopf's 03-exceptions example: four
// creation handlers that fail in the four ways Kopf knows, each logged in
// Kopf's words.
package main

//go:generate go tool kopf-gen

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/kopf-go/kopf"
)

// errRecoverable is an arbitrary error, as Kopf's example's MyException.
var errRecoverable = errors.New("An error that is supposed to be recoverable.")

// InstantFailureWithOnlyAMessage fails permanently at once.
//
//kopf:on.create kopfexamples
func InstantFailureWithOnlyAMessage(ctx context.Context, kw InstantFailureWithOnlyAMessageKwargs) error {
	return kopf.NewPermanentError("Fail once and for all.")
}

// EventualSuccessWithAFewMessages fails temporarily three times, then
// succeeds.
//
//kopf:on.create kopfexamples
func EventualSuccessWithAFewMessages(ctx context.Context, kw EventualSuccessWithAFewMessagesKwargs) error {
	if kw.Retry < 3 { // 0, 1, 2, 3
		return kopf.NewTemporaryError("Expected recoverable error.", time.Second)
	}
	return nil
}

// EventualFailureWithTracebacks fails with an arbitrary error every time,
// until its retries are exhausted.
//
//kopf:on.create kopfexamples retries=3 backoff=1s
func EventualFailureWithTracebacks(ctx context.Context, kw EventualFailureWithTracebacksKwargs) error {
	return errRecoverable
}

// InstantFailureWithTraceback fails with an arbitrary error, which its
// errors mode makes permanent.
//
//kopf:on.create kopfexamples errors=permanent backoff=1s
func InstantFailureWithTraceback(ctx context.Context, kw InstantFailureWithTracebackKwargs) error {
	return errRecoverable
}

func main() {
	os.Exit(kopf.Main(Register))
}
