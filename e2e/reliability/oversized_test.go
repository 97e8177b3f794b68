package reliability_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

// An object whose diff-base cannot be stored (its essence, a spec of
// 300 KiB, exceeds the 256 KiB limit on all annotations together): the
// operator says why in a clear error, does not loop on it, and keeps
// serving other objects.
//
// The handler returns a new value on every invocation, as handlers that
// create children and return their names or uids do (Kopf's 02-children
// example): a loop on the object would show as ever more invocations.
func TestOversizedDiffBase(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "oversized")
	ri := objects(shared.Config, ns)
	var rec calls
	var seq atomic.Int64
	fn := rec.recording("create_fn", func(_ context.Context, kw *kwargs.Changing) (any, error) {
		return map[string]any{"children": []any{fmt.Sprintf("child-%d", seq.Add(1))}}, nil
	})
	op := kopftest.Start(t, shared.Config, register(handler("create_fn", fn, causes.Create)), kopf.WithNamespaces(ns))

	blob := strings.Repeat("x", 300*1024)
	create(t, ri, example("huge", map[string]any{"blob": blob}, nil, nil))
	op.WaitLog(fmt.Sprintf("[%s/huge] The object cannot be patched", ns), 30*time.Second)
	logs := op.Logs()
	if !strings.Contains(logs, "annotations: Too long") || !strings.Contains(logs, "does not fit into annotations") {
		t.Errorf("the error does not say that the annotations are too long and why")
	}

	// Bounded: a few seconds later, the handler has not been run again and
	// again. (One re-run is tolerable: the object did change, by the
	// handler's own result.)
	time.Sleep(5 * time.Second)
	n := len(rec.of("create_fn", "huge"))
	if n > 2 {
		t.Errorf("create_fn ran %d times in ~5 s for the object whose diff-base does not fit: the operator loops on it", n)
	}
	errors := strings.Count(op.Logs(), fmt.Sprintf("[%s/huge] The object cannot be patched", ns))
	t.Logf("create_fn ran %d times for huge; the error was logged %d times", n, errors)

	// Not crashed, not stuck: another object is handled.
	create(t, ri, example("normal", nil, nil, nil))
	waitHandled(t, ri, "normal", 30*time.Second, "create_fn")

	// Nothing half-written is left on the huge object either: no progress.
	obj, err := ri.Get(context.Background(), "huge", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := leftovers(obj); len(got) != 0 {
		t.Errorf("huge: progress left behind: %v", got)
	}
}
