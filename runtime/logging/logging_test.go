package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var at = time.Date(2026, 6, 3, 12, 0, 1, 123456789, time.Local)

// handle sends one record with a fixed time through the logger's handler,
// as slog.Logger would, and returns what was written.
func handle(t *testing.T, format Format, level slog.Level, with []any, rec slog.Record) string {
	t.Helper()
	var buf bytes.Buffer
	logger := New(&buf, format, slog.LevelDebug).With(with...)
	h := logger.Handler()
	if !h.Enabled(context.Background(), level) {
		return ""
	}
	if err := h.Handle(context.Background(), rec); err != nil {
		t.Fatalf("Handle() = %v", err)
	}
	return buf.String()
}

func record(level slog.Level, msg string, attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(at, level, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

func TestTextFormats(t *testing.T) {
	obj := []any{slog.String(ObjectKey, "default/kopf-example-1")}
	tests := []struct {
		name   string
		format Format
		with   []any
		rec    slog.Record
		want   string
	}{
		{
			name: "full, operator", format: Full,
			rec:  record(slog.LevelInfo, "Signal SIGINT is received. Operator is stopping."),
			want: "[2026-06-03 12:00:01,123] kopf                 [INFO    ] Signal SIGINT is received. Operator is stopping.\n",
		},
		{
			name: "full, object", format: Full, with: obj,
			rec:  record(slog.LevelDebug, "Handler 'create_fn' is invoked."),
			want: "[2026-06-03 12:00:01,123] kopf.objects         [DEBUG   ] [default/kopf-example-1] Handler 'create_fn' is invoked.\n",
		},
		{
			name: "full, warning", format: Full, with: obj,
			rec:  record(slog.LevelWarn, "Merge-patching finished with inconsistencies: x"),
			want: "[2026-06-03 12:00:01,123] kopf.objects         [WARNING ] [default/kopf-example-1] Merge-patching finished with inconsistencies: x\n",
		},
		{
			name: "full, error", format: Full, with: obj,
			rec:  record(slog.LevelError, "Handler 'create_fn' failed permanently: no"),
			want: "[2026-06-03 12:00:01,123] kopf.objects         [ERROR   ] [default/kopf-example-1] Handler 'create_fn' failed permanently: no\n",
		},
		{
			name: "plain, operator", format: Plain,
			rec:  record(slog.LevelInfo, "Stop-flag is raised. Operator is stopping."),
			want: "Stop-flag is raised. Operator is stopping.\n",
		},
		{
			name: "plain, object", format: Plain, with: obj,
			rec:  record(slog.LevelInfo, "Handler 'create_fn' succeeded."),
			want: "[default/kopf-example-1] Handler 'create_fn' succeeded.\n",
		},
		{
			name: "plain, cluster-scoped object", format: Plain, with: []any{slog.String(ObjectKey, "node-1")},
			rec:  record(slog.LevelInfo, "Creation is processed: 1 succeeded; 0 failed."),
			want: "[node-1] Creation is processed: 1 succeeded; 0 failed.\n",
		},
		{
			name: "plain, object given on the record", format: Plain,
			rec:  record(slog.LevelInfo, "Handler 'create_fn' succeeded.", slog.String(ObjectKey, "ns/n")),
			want: "[ns/n] Handler 'create_fn' succeeded.\n",
		},
		{
			name: "full, object given on the record", format: Full,
			rec:  record(slog.LevelInfo, "Handler 'create_fn' succeeded.", slog.String(ObjectKey, "ns/n")),
			want: "[2026-06-03 12:00:01,123] kopf.objects         [INFO    ] [ns/n] Handler 'create_fn' succeeded.\n",
		},
		{
			name: "plain, the record's object does not override the logger's", format: Plain, with: obj,
			rec:  record(slog.LevelInfo, "msg", slog.String(ObjectKey, "other/x")),
			want: "[default/kopf-example-1] msg\n",
		},
		{
			name: "plain, other attributes", format: Plain, with: append([]any{slog.Int("worker", 3)}, obj...),
			rec:  record(slog.LevelInfo, "msg", slog.String("k", "v"), slog.Duration("d", time.Second)),
			want: "[default/kopf-example-1] msg worker=3 k=v d=1s\n",
		},
		{
			name: "plain, a stack goes below the message", format: Plain, with: obj,
			rec:  record(slog.LevelError, "Handler 'f' failed with an exception and will ignore it: boom", slog.String("stack", "goroutine 1:\nmain.f()\n")),
			want: "[default/kopf-example-1] Handler 'f' failed with an exception and will ignore it: boom\ngoroutine 1:\nmain.f()\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := handle(t, tt.format, tt.rec.Level, tt.with, tt.rec); got != tt.want {
				t.Errorf("output =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestLevels(t *testing.T) {
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	tests := []struct {
		min  slog.Level
		want []string
	}{
		{slog.LevelDebug, []string{"DEBUG", "INFO", "WARNING", "ERROR"}},
		{slog.LevelInfo, []string{"INFO", "WARNING", "ERROR"}},
		{slog.LevelWarn, []string{"WARNING", "ERROR"}},
		{slog.LevelError, []string{"ERROR"}},
	}
	for _, format := range []Format{Full, Plain} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s from %s", format, tt.min), func(t *testing.T) {
				var buf bytes.Buffer
				logger := New(&buf, format, tt.min)
				for _, l := range levels {
					logger.Log(context.Background(), l, levelName(l))
				}
				got := strings.Fields(strings.TrimSpace(buf.String()))
				if format == Full {
					got = regexp.MustCompile(`(?m)\] ([A-Z]+)$`).FindAllString(buf.String(), -1)
					for i, s := range got {
						got[i] = strings.TrimPrefix(s, "] ")
					}
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("logged %q, want %q", got, tt.want)
				}
			})
		}
	}
}

func TestLevelName(t *testing.T) {
	tests := []struct {
		level slog.Level
		want  string
	}{
		{slog.LevelDebug - 4, "DEBUG"},
		{slog.LevelDebug, "DEBUG"},
		{slog.LevelInfo, "INFO"},
		{slog.LevelInfo + 1, "INFO"},
		{slog.LevelWarn, "WARNING"},
		{slog.LevelError, "ERROR"},
		{slog.LevelError + 4, "ERROR"},
	}
	for _, tt := range tests {
		if got := levelName(tt.level); got != tt.want {
			t.Errorf("levelName(%v) = %q, want %q", tt.level, got, tt.want)
		}
	}
}

func TestFullFormatWithTheCurrentTime(t *testing.T) {
	var buf bytes.Buffer
	ForObject(New(&buf, Full, slog.LevelDebug), "ns/name").Info("Handler 'create_fn' succeeded.")
	re := regexp.MustCompile(`^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] kopf\.objects {9}\[INFO {4}\] \[ns/name\] Handler 'create_fn' succeeded\.\n$`)
	if !re.MatchString(buf.String()) {
		t.Errorf("output = %q, want a match of %s", buf.String(), re)
	}
}

func TestJSONFormat(t *testing.T) {
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want map[string]any // the fields other than time
	}{
		{
			name: "operator",
			log:  func(l *slog.Logger) { l.Info("Stop-flag is raised. Operator is stopping.") },
			want: map[string]any{"level": "INFO", "msg": "Stop-flag is raised. Operator is stopping."},
		},
		{
			name: "object: a field of its own, no prefix",
			log:  func(l *slog.Logger) { ForObject(l, "ns/name").Debug("Handler 'create_fn' is invoked.") },
			want: map[string]any{"level": "DEBUG", "msg": "Handler 'create_fn' is invoked.", "object": "ns/name"},
		},
		{
			name: "attributes",
			log: func(l *slog.Logger) {
				ForObject(l, "name").Error("Handler 'f' failed with an exception and will ignore it: boom", slog.String("stack", "trace"))
			},
			want: map[string]any{"level": "ERROR", "msg": "Handler 'f' failed with an exception and will ignore it: boom",
				"object": "name", "stack": "trace"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(New(&buf, JSON, slog.LevelDebug))
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("not one JSON record: %q: %v", buf.String(), err)
			}
			if _, ok := got["time"].(string); !ok {
				t.Errorf("no time in %v", got)
			}
			delete(got, "time")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("record = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestJSONFormatLevel(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, JSON, slog.LevelInfo)
	l.Debug("hidden")
	if buf.Len() != 0 {
		t.Errorf("a debug record was written at the info level: %q", buf.String())
	}
}

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in      string
		want    Format
		wantErr bool
	}{
		{"full", Full, false},
		{"plain", Plain, false},
		{"json", JSON, false},
		{"", "", true},
		{"FULL", "", true},
		{"text", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFormat(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseFormat(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.in)) {
				t.Errorf("the error %q does not name the value", err)
			}
		})
	}
}

// TestConcurrentObjectLoggers writes from many object loggers sharing one
// writer: every line must come out whole, with its own prefix.
func TestConcurrentObjectLoggers(t *testing.T) {
	for _, format := range []Format{Full, Plain} {
		t.Run(string(format), func(t *testing.T) {
			var buf bytes.Buffer // not safe for concurrent use by itself
			root := New(&buf, format, slog.LevelDebug)
			const objects, lines = 8, 50
			var wg sync.WaitGroup
			for i := range objects {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l := ForObject(root, fmt.Sprintf("ns/obj-%d", i))
					for j := range lines {
						l.Info(fmt.Sprintf("line %d of obj-%d", j, i))
					}
				}()
			}
			wg.Wait()
			out := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if len(out) != objects*lines {
				t.Fatalf("got %d lines, want %d", len(out), objects*lines)
			}
			re := regexp.MustCompile(`\[ns/obj-(\d+)\] line \d+ of obj-(\d+)$`)
			for _, line := range out {
				m := re.FindStringSubmatch(line)
				if m == nil || m[1] != m[2] {
					t.Fatalf("a mangled or misattributed line: %q", line)
				}
			}
		})
	}
}
