// Command embedded is the Go port of Kopf's 12-embedded example: a program
// of its own that runs an operator inside it, in a goroutine, waits until
// the operator is ready, does its own work (creating and deleting
// KopfExample objects), then stops the operator and waits for it to exit.
//
// The handlers print the templates of the operator's memo, as Kopf's do:
// "Hello, {name}!" when an object is created, "Good bye, {name}!" when it
// is deleted.
//
// Kopf's kopf.operator(ready_flag=, stop_flag=, memo=) in a thread is
// kopf.Run(ctx, Register, kopf.WithReady(...), kopf.WithMemo(...)) in a
// goroutine here: cancelling ctx is the stop flag. See docs/embedding.md.
//
// Run it against a cluster with the KopfExample CRD (../crd.yaml):
//
//	go run .
package main

//go:generate go tool kopf-gen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/examples"
)

// CreateFn prints the memo's greeting for every new KopfExample.
//
//kopf:on.create kopfexamples
func CreateFn(ctx context.Context, kw CreateFnKwargs) error {
	fmt.Println(format(kw.Memo["create_tpl"], kw.Name))
	return nil
}

// DeleteFn prints the memo's farewell for every deleted KopfExample.
//
//kopf:on.delete kopfexamples
func DeleteFn(ctx context.Context, kw DeleteFnKwargs) error {
	fmt.Println(format(kw.Memo["delete_tpl"], kw.Name))
	return nil
}

// format fills a template's {name}, as Python's str.format(name=...) does.
func format(tpl any, name string) string {
	s, _ := tpl.(string)
	return strings.ReplaceAll(s, "{name}", name)
}

// operator runs the operator until ctx is done, calling ready once it is
// ready: Kopf's kopf_thread() with its ready_flag and stop_flag.
func operator(ctx context.Context, cfg *rest.Config, logger *slog.Logger, ready func()) error {
	return kopf.Run(ctx, Register,
		kopf.WithConfig(cfg),
		kopf.WithAllNamespaces(),
		kopf.WithLogger(logger), // Kopf's kopf.configure(verbose=True)
		kopf.WithReady(ready),
		kopf.WithMemo(kopf.Memo{
			"create_tpl": "Hello, {name}!",
			"delete_tpl": "Good bye, {name}!",
		}),
	)
}

// App is the main program: it starts the operator and lets it initialise,
// runs the program's own activity for the given number of steps (creating
// kopf-example-N, waiting pause, deleting it, waiting pause), then asks the
// operator to stop and waits until it has. It returns the operator's error,
// if it failed, or the program's own. Its calls are the program's, not
// the handlers', but they use the same credentials: its //kopf:rbac marker
// grants them in a Role of the namespace default (kopf-gen --manifests).
//
//kopf:rbac groups=[kopf.dev] resources=[kopfexamples] verbs=[create, delete] namespace=default
func App(cfg *rest.Config, logger *slog.Logger, steps int, pause time.Duration) error {
	// Start the operator and let it initialise.
	fmt.Println("Starting the main app.")
	ctx, stop := context.WithCancel(context.Background()) // stop is the stop flag
	defer stop()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- operator(ctx, cfg, logger, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		return fmt.Errorf("the operator did not start: %w", err)
	}

	// The operator is active: run the app's activity.
	objects, err := dynamic.NewForConfig(cfg)
	if err != nil {
		stop()
		return errors.Join(err, <-done)
	}
	kopfexamples := objects.Resource(examples.KopfExamples).Namespace("default")
	var appErr error
	for step := range steps {
		fmt.Printf("Do the main app activity here. Step %d/%d.\n", step+1, steps)
		if appErr = createObject(ctx, kopfexamples, step); appErr != nil {
			break
		}
		time.Sleep(pause)
		if appErr = deleteObject(ctx, kopfexamples, step); appErr != nil {
			break
		}
		time.Sleep(pause)
	}

	// Ask the operator to terminate gracefully (can take a couple of seconds).
	fmt.Println("Exiting the main app.")
	stop()
	return errors.Join(appErr, <-done)
}

func createObject(ctx context.Context, objects dynamic.ResourceInterface, step int) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1",
		"kind":       "KopfExample",
		"metadata":   map[string]any{"namespace": "default", "name": fmt.Sprintf("kopf-example-%d", step)},
	}}
	if _, err := objects.Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func deleteObject(ctx context.Context, objects dynamic.ResourceInterface, step int) error {
	err := objects.Delete(ctx, fmt.Sprintf("kopf-example-%d", step), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

func main() {
	// The credentials as kubectl finds them, as Kopf's pykube.KubeConfig.from_env().
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := App(cfg, kopf.NewLogger(os.Stderr, kopf.LogFull, slog.LevelDebug), 3, time.Second); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
