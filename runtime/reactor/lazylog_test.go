package reactor

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/logging"
)

// TestLazyObjectLogger checks that the lazy object logger writes what the
// object's logger writes, byte for byte (records, attributes, groups), in
// every format and at every level, and is enabled for the same levels.
func TestLazyObjectLogger(t *testing.T) {
	obj := timerObject(7, "kopf.zalando.org/KopfFinalizerMarker")
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	uses := []struct {
		name string
		use  func(slog.Handler) slog.Handler
	}{
		{"plain", func(h slog.Handler) slog.Handler { return h }},
		{"attrs", func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String("k", "v")}) }},
		{"group", func(h slog.Handler) slog.Handler {
			return h.WithGroup("g").WithAttrs([]slog.Attr{slog.Int("n", 1)})
		}},
	}
	for _, format := range []logging.Format{logging.Full, logging.Plain, logging.JSON} {
		for _, level := range levels {
			for _, u := range uses {
				t.Run(string(format)+"/"+level.String()+"/"+u.name, func(t *testing.T) {
					var want, got bytes.Buffer
					eager := (&Reactor{Logger: logging.New(&want, format, level)}).objectLogger(obj).Handler()
					lazy := slog.Handler(&lazyObjectHandler{r: &Reactor{Logger: logging.New(&got, format, level)}, b: obj})
					for _, l := range levels {
						if e, g := eager.Enabled(context.Background(), l), lazy.Enabled(context.Background(), l); e != g {
							t.Errorf("Enabled(%s) = %v, want %v", l, g, e)
						}
						rec := slog.NewRecord(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), l, "Timer 'tick' succeeded.", 0)
						rec.AddAttrs(slog.String("stack", "line"))
						if eager.Enabled(context.Background(), l) {
							_ = u.use(eager).Handle(context.Background(), rec)
							_ = u.use(lazy).Handle(context.Background(), rec)
						}
					}
					if want.Len() == 0 {
						t.Fatal("nothing written at ERROR")
					}
					if got.String() != want.String() {
						t.Errorf("lazy wrote\n%s\nwant\n%s", got.String(), want.String())
					}
				})
			}
		}
	}
}
