// Command ceiling is the benchmark's ceiling: a plain client-go program
// that lists every KopfExample once and merge-patches each with the same
// result and the same diff-base annotation that kopf-go writes, with a
// fixed number of concurrent writers and no client-side rate limit. It
// exits when every object is patched.
//
//	ceiling -c 16 -mode create|update [-subresource]
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
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return err
	}
	cfg.QPS = -1
	dyn, err := dynamic.NewForConfig(cfg)
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
