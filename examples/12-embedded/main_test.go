package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

// TestEmbedded runs the program against a local control plane: it prints
// what Kopf's example prints, in the same order (the handlers' lines
// filled from the operator's memo), and stops the operator cleanly: App
// returns only once the operator has exited, with no error, and every
// object is deleted for good (the deletion handler ran and released it).
func TestEmbedded(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	logs := &kopftest.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the operator's log:\n%s", logs.String())
		}
	})
	stdout := captureStdout(t)

	// The pauses are Kopf's one second, doubled for a busy machine: each
	// object's handler must have run before the program goes on.
	err := App(env.Config, kopf.NewLogger(logs, kopf.LogFull, slog.LevelDebug), 3, 2*time.Second)
	printed := stdout()
	if err != nil {
		t.Fatalf("App() = %v", err)
	}

	want := strings.Join([]string{
		"Starting the main app.",
		"Do the main app activity here. Step 1/3.",
		"Hello, kopf-example-0!",
		"Good bye, kopf-example-0!",
		"Do the main app activity here. Step 2/3.",
		"Hello, kopf-example-1!",
		"Good bye, kopf-example-1!",
		"Do the main app activity here. Step 3/3.",
		"Hello, kopf-example-2!",
		"Good bye, kopf-example-2!",
		"Exiting the main app.",
	}, "\n") + "\n"
	if printed != want {
		t.Errorf("the program printed:\n%s\nwant:\n%s", printed, want)
	}

	// The operator ran as configured and stopped on the stop flag.
	for _, line := range []string{
		"[default/kopf-example-0] Handler 'create_fn' succeeded.",
		"[default/kopf-example-2] Handler 'delete_fn' succeeded.",
	} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("the operator's log lacks %q", line)
		}
	}
	if strings.Contains(logs.String(), "[ERROR") {
		t.Errorf("the operator logged errors")
	}
	list, err := dynamic.NewForConfigOrDie(env.Config).Resource(examples.KopfExamples).Namespace("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d objects are left, want none (their finalizers released)", len(list.Items))
	}
}

// captureStdout redirects os.Stdout, where the program and its handlers
// print, until the returned function is called; it returns what was
// printed.
func captureStdout(t *testing.T) func() string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	orig := os.Stdout
	os.Stdout = w
	var buf bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&buf, r)
	}()
	var once sync.Once
	finish := func() string {
		once.Do(func() {
			os.Stdout = orig
			_ = w.Close()
			<-copied
			_ = r.Close()
		})
		return buf.String()
	}
	t.Cleanup(func() { finish() })
	return finish
}
