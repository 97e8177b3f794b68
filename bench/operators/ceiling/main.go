// Command ceiling is the benchmark's ceiling: a plain client-go program
// that lists every KopfExample once and merge-patches each with the same
// result and the same diff-base annotation that kopf-go writes, with a
// fixed number of concurrent writers and no client-side rate limit. It
// exits when every object is patched.
//
//	ceiling -c 16 -mode create|update [-subresource]
//	ceiling -c 16 -mode watch [-subresource]
//
// In watch mode (the paced ceiling) it lists every KopfExample, then
// watches them all and, for each object it sees created without the
// result (ADDED events and the listing), sends the same writes as in
// create mode, one request at a time per object, from K writers fed in
// the order of the events; it runs until SIGTERM. It is the least a Go
// program reacting to the watch can do: client-go's own watch decoding
// and requests, no queue, no state beyond the objects already handled.
//
// With -subresource the status goes to /status and the annotation to the
// object itself: two writes per object, as kopf-go must do.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf/bench/internal/instrument"
)

const lastHandled = "kopf.zalando.org/last-handled-configuration"

var gvr = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

func main() {
	instrument.Start()
	err := run()
	instrument.Stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	concurrency := flag.Int("c", 16, "concurrent writers")
	mode := flag.String("mode", "create", "create: status.create_fn = hello world; update: status.update_fn = spec.value")
	subresource := flag.Bool("subresource", false, "status is a subresource: write it through /status")
	flag.Parse()
	if *mode == "watch" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		return watch(ctx, *concurrency, *subresource)
	}

	dyn, err := client()
	if err != nil {
		return err
	}
	ctx := context.Background()
	list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	work := make(chan *unstructured.Unstructured)
	errs := make(chan error, *concurrency)
	var wg sync.WaitGroup
	for range *concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for obj := range work {
				if err := patch(ctx, dyn, obj, *mode, *subresource); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range list.Items {
		work <- &list.Items[i]
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func client() (dynamic.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS = -1
	return dynamic.NewForConfig(cfg)
}

// watch is the watch mode: see the package doc.
func watch(ctx context.Context, concurrency int, subresource bool) error {
	dyn, err := client()
	if err != nil {
		return err
	}
	ri := dyn.Resource(gvr)
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	work := make(chan *unstructured.Unstructured, 4096)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for obj := range work {
				if err := patch(ctx, dyn, obj, "create", subresource); err != nil && ctx.Err() == nil {
					fmt.Fprintln(os.Stderr, err)
				}
			}
		}()
	}
	defer func() { close(work); wg.Wait() }()
	handled := map[types.UID]bool{}
	offer := func(obj *unstructured.Unstructured) {
		if handled[obj.GetUID()] {
			return
		}
		if msg, _, _ := unstructured.NestedString(obj.Object, "status", "create_fn", "message"); msg != "" {
			return
		}
		handled[obj.GetUID()] = true
		select {
		case work <- obj:
		case <-ctx.Done():
		}
	}
	for i := range list.Items {
		offer(&list.Items[i])
	}
	rv := list.GetResourceVersion()
	for ctx.Err() == nil {
		w, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watching: %w", err)
		}
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue // an error status: the watch ends and is restarted from rv
			}
			rv = obj.GetResourceVersion()
			if ev.Type == watchapi.Added {
				offer(obj)
			}
			if ev.Type == watchapi.Deleted {
				delete(handled, obj.GetUID())
			}
		}
		w.Stop()
	}
	return nil
}

func patch(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, mode string, subresource bool) error {
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	var result map[string]any
	id := "create_fn"
	if mode == "update" {
		id = "update_fn"
		result = map[string]any{"value": spec["value"]}
	} else {
		result = map[string]any{"message": "hello world"}
	}
	essence, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	status := map[string]any{"status": map[string]any{id: result}}
	meta := map[string]any{"metadata": map[string]any{"annotations": map[string]any{lastHandled: string(essence)}}}
	ri := dyn.Resource(gvr).Namespace(obj.GetNamespace())
	var patches []map[string]any
	var subs [][]string
	if subresource {
		patches, subs = []map[string]any{status, meta}, [][]string{{"status"}, nil}
	} else {
		status["metadata"] = meta["metadata"]
		patches, subs = []map[string]any{status}, [][]string{nil}
	}
	for i, p := range patches {
		data, err := json.Marshal(p)
		if err != nil {
			return err
		}
		if _, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, data, metav1.PatchOptions{}, subs[i]...); err != nil {
			return err
		}
	}
	return nil
}
