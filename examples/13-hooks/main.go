// Command hooks is the Go port of Kopf's 13-hooks example: the operator's
// activities. Two startup handlers (one retried until its fourth attempt),
// a cleanup handler, a login handler that builds the credentials from the
// kubeconfig with client-go, two probe handlers for the health endpoint,
// and an on.event handler of pods that starts one background task per
// pod, which the cleanup handler stops.
//
// Kopf's globals (the task-lock and the tasks' stop-flags) live in the
// operator's memo here: the startup handler puts them there, and every
// pod's memo, a shallow copy of the operator's, shares them.
//
// Run it against a cluster:
//
//	go run . run -A --standalone --verbose
package main

//go:generate go tool kopf-gen

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf"
)

// Tasks are the pods' background tasks: Kopf's LOCK and STOPPERS.
type Tasks struct {
	mu       sync.Mutex
	stoppers map[string]map[string]context.CancelFunc // [namespace][name]
	running  sync.WaitGroup
}

// tasksOf returns the tasks kept in a memo by StartupFnSimple.
func tasksOf(memo kopf.Memo) *Tasks {
	t, _ := memo["tasks"].(*Tasks)
	return t
}

// StartupFnSimple creates the task-lock and the tasks' registry.
//
//kopf:on.startup
func StartupFnSimple(ctx context.Context, kw StartupFnSimpleKwargs) error {
	kw.Logger.Info("Initialising the task-lock...")
	kw.Memo["tasks"] = &Tasks{stoppers: map[string]map[string]context.CancelFunc{}}
	return nil
}

// StartupFnRetried fails temporarily three times, a second apart.
//
//kopf:on.startup
func StartupFnRetried(ctx context.Context, kw StartupFnRetriedKwargs) error {
	if kw.Retry < 3 {
		return kopf.NewTemporaryError(fmt.Sprintf("Going to succeed in %ds", 3-kw.Retry), time.Second)
	}
	kw.Logger.Info("Starting retried...")
	return nil
}

// CleanupFn stops the pods' tasks, and waits for them to end.
//
//kopf:on.cleanup
func CleanupFn(ctx context.Context, kw CleanupFnKwargs) error {
	kw.Logger.Info("Cleaning up...")
	tasks := tasksOf(kw.Memo)
	tasks.mu.Lock()
	for _, names := range tasks.stoppers {
		for _, stop := range names {
			stop()
		}
	}
	tasks.mu.Unlock()
	kw.Logger.Info("All pod-tasks are requested to stop...")
	tasks.running.Wait()
	return nil
}

// LoginFn logs in with the kubeconfig's credentials ($KUBECONFIG or
// ~/.kube/config), read with client-go: an equivalent of
// kopf.LoginViaClient, shrunk for demo purposes. Its errors are permanent:
// the operator does not start without credentials.
//
//kopf:on.login errors=permanent
func LoginFn(ctx context.Context, kw LoginFnKwargs) (*kopf.ConnectionInfo, error) {
	fmt.Println("Logging in in 2s...")
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(2 * time.Second):
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return nil, err
	}
	return &kopf.ConnectionInfo{Config: cfg}, nil
}

// TasksCount reports how many pods have a task.
//
//kopf:on.probe
func TasksCount(ctx context.Context, kw TasksCountKwargs) (any, error) {
	tasks := tasksOf(kw.Memo)
	tasks.mu.Lock()
	defer tasks.mu.Unlock()
	n := 0
	for _, names := range tasks.stoppers {
		n += len(names)
	}
	return n, nil
}

// MonitoredObjects reports the pods with a task, by namespace.
//
//kopf:on.probe
func MonitoredObjects(ctx context.Context, kw MonitoredObjectsKwargs) (any, error) {
	tasks := tasksOf(kw.Memo)
	tasks.mu.Lock()
	defer tasks.mu.Unlock()
	out := map[string][]string{}
	for namespace, names := range tasks.stoppers {
		for name := range names {
			out[namespace] = append(out[namespace], name)
		}
		slices.Sort(out[namespace])
	}
	return out, nil
}

// PodTask starts a background task for each pod it sees.
//
//kopf:on.event pods
func PodTask(ctx context.Context, kw PodTaskKwargs) error {
	tasks := tasksOf(kw.Memo)
	tasks.mu.Lock()
	defer tasks.mu.Unlock()
	if _, ok := tasks.stoppers[kw.Namespace][kw.Name]; ok {
		return nil
	}
	if tasks.stoppers[kw.Namespace] == nil {
		tasks.stoppers[kw.Namespace] = map[string]context.CancelFunc{}
	}
	// The task outlives this event: it stops on the cleanup's request only.
	taskCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	tasks.stoppers[kw.Namespace][kw.Name] = stop
	tasks.running.Go(func() { taskFn(taskCtx, kw.Logger) })
	return nil
}

// taskFn serves its pod every 1 to 10 seconds until it is stopped.
func taskFn(ctx context.Context, logger *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			logger.Info("Serving is finished by request.")
			return
		case <-time.After(time.Duration(rand.IntN(10)+1) * time.Second):
			logger.Info("Served by the background task.")
		}
	}
}

func main() {
	os.Exit(kopf.Main(Register))
}
