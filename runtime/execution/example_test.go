package execution_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

func ExampleExecute() {
	// A logger without timestamps, for a stable output.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	h := &registry.ChangingHandler{
		ID:      "create_fn",
		Reasons: []causes.Reason{causes.Create},
		Retries: 2,
		Fn: func(ctx context.Context, kw *kwargs.Changing) (any, error) {
			return nil, execution.NewTemporaryError(fmt.Sprintf("Not ready yet (attempt %d).", kw.Retry+1), 10*time.Second)
		},
	}
	started := time.Now()
	for retry := range 3 {
		out := execution.Execute(context.Background(), h, &kwargs.Changing{}, execution.Attempt{Retry: retry, Started: started}, time.Minute, logger)
		fmt.Printf("final=%v delay=%v message=%q\n", out.Final(), out.Delay, out.Message)
	}
	// Output:
	// level=DEBUG msg="Handler 'create_fn' is invoked."
	// level=ERROR msg="Handler 'create_fn' failed temporarily: Not ready yet (attempt 1)."
	// final=false delay=10s message="Not ready yet (attempt 1)."
	// level=DEBUG msg="Handler 'create_fn' is invoked."
	// level=ERROR msg="Handler 'create_fn' failed temporarily but will exceed 2 retries: Not ready yet (attempt 2)."
	// final=true delay=0s message="Not ready yet (attempt 2)."
	// level=ERROR msg="Handler 'create_fn' failed permanently: Handler 'create_fn' has exceeded 2 retries."
	// final=true delay=0s message="Handler 'create_fn' has exceeded 2 retries."
}
