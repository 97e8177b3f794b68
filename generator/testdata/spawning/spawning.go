// Package spawning has daemons and timers (Kopf's 14-daemons and
// 15-timers): every option of both markers, their filters and callbacks,
// both result forms, and typed kwargs of a built-in resource.
package spawning

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kopf-go/kopf"
)

// BackgroundAsync shows every daemon option and every filter.
//
//kopf:daemon kopf.dev/kopfexamples id=async param=p errors=permanent timeout=1m retries=5 backoff=3 initial_delay=2s cancellation_backoff=1.0 cancellation_timeout=0.5 cancellation_polling=5s labels={app: web, tier: fn:isTier} annotations={someannotation: somevalue} when=isReady field=spec.field value=fn:isValue
func BackgroundAsync(ctx context.Context, kw BackgroundAsyncKwargs) (any, error) {
	<-kw.Stopped.Done()
	return map[string]any{"message": "stopped"}, nil
}

// BackgroundSync returns only an error, and its when= and its
// initial_delay= function take the kind's kwargs type.
//
//kopf:daemon kopf.dev/kopfexamples when=notPaused initial_delay=fn:delayOf
func BackgroundSync(ctx context.Context, kw BackgroundSyncKwargs) error {
	if kw.Retry < 3 {
		return kopf.NewTemporaryError("Simulated failure.", time.Second)
	}
	return nil
}

// EveryFewSeconds shows every timer option.
//
//kopf:timer kopf.dev/kopfexamples idle=5 interval=2 sharp=true initial_delay=500ms errors=ignored retries=2 when=isDue
func EveryFewSeconds(ctx context.Context, kw EveryFewSecondsKwargs) error {
	kw.Logger.Info("Ping from a sync timer", "field", kw.Spec["field"])
	return nil
}

// Stacked markers register one function several times, with distinct ids.
//
//kopf:timer kopf.dev/kopfexamples id=fast interval=1
//kopf:timer kopf.dev/kopfexamples id=slow interval=1h param=slow
func Stacked(ctx context.Context, kw StackedKwargs) (any, error) {
	return kw.Param, nil
}

// Node is a typed daemon of a built-in resource; its field= is checked
// against corev1.Pod, and its when= takes the typed kwargs.
//
//kopf:daemon v1/pods field=spec.nodeName when=isScheduled
func Node(ctx context.Context, kw NodeKwargs) (any, error) {
	return kw.Object.Spec.NodeName, nil
}

// Restarts is a typed timer of a built-in resource; its initial_delay=
// function takes the typed kwargs.
//
//kopf:timer v1/pods interval=10s initial_delay=fn:restartsDelay
func Restarts(ctx context.Context, kw RestartsKwargs) (any, error) {
	return len(kw.Object.Status.ContainerStatuses), nil
}

func isTier(value string) bool                               { return value != "" }
func isValue(value any, kw kopf.ResourceKwargs) bool         { return value != nil }
func isReady(kw BackgroundAsyncKwargs) bool                  { return kw.Labels["ready"] == "yes" }
func notPaused(kw kopf.DaemonKwargs) bool                    { return kw.Labels["paused"] == "" }
func isDue(kw kopf.TimerKwargs) bool                         { return kw.Annotations["due"] != "" }
func isScheduled(kw kopf.TypedDaemonKwargs[corev1.Pod]) bool { return kw.Object.Spec.NodeName != "" }

// delayOf is Kopf's initial_delay= function: a delay per object.
func delayOf(kw kopf.DaemonKwargs) time.Duration {
	if kw.Labels["slow"] != "" {
		return time.Minute
	}
	return time.Second
}

func restartsDelay(kw kopf.TypedTimerKwargs[corev1.Pod]) time.Duration {
	return time.Duration(len(kw.Object.Status.ContainerStatuses)) * time.Second
}
