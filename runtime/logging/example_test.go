package logging_test

import (
	"log/slog"
	"os"

	"github.com/kopf-go/kopf/runtime/logging"
)

func ExampleForObject() {
	logger := logging.New(os.Stdout, logging.Plain, slog.LevelInfo)
	logger.Info("Stop-flag is raised. Operator is stopping.")

	objLogger := logging.ForObject(logger, "default/kopf-example-1")
	objLogger.Debug("Handler 'create_fn' is invoked.") // below the level
	objLogger.Info("Handler 'create_fn' succeeded.")
	objLogger.Info("Creation is processed: 1 succeeded; 0 failed.")
	// Output:
	// Stop-flag is raised. Operator is stopping.
	// [default/kopf-example-1] Handler 'create_fn' succeeded.
	// [default/kopf-example-1] Creation is processed: 1 succeeded; 0 failed.
}
