package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
			name: "full, a fleet's cluster, operator", format: Full, with: []any{slog.String(ClusterKey, "east")},
			rec:  record(slog.LevelInfo, "msg"),
			want: "[2026-06-03 12:00:01,123] kopf                 [INFO    ] [east] msg\n",
		},
		{
			name: "full, a fleet's cluster, object", format: Full, with: append([]any{slog.String(ClusterKey, "east")}, obj...),
			rec:  record(slog.LevelInfo, "msg"),
			want: "[2026-06-03 12:00:01,123] kopf.objects         [INFO    ] [east] [default/kopf-example-1] msg\n",
		},
		{
			name: "plain, a fleet's cluster, object given on the record", format: Plain, with: []any{slog.String(ClusterKey, "east")},
			rec:  record(slog.LevelInfo, "msg", slog.String(ObjectKey, "ns/n"), slog.Int("k", 1)),
			want: "[east] [ns/n] msg k=1\n",
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

// fullRef is a full object reference, as package posting's ObjectRef gives.
type fullRef Reference

func (r fullRef) ObjectReference() Reference { return Reference(r) }
func (r fullRef) String() string             { return r.Namespace + "/" + r.Name }

// TestJSONFormat: Kopf's JSON lines, byte for byte, as python-json-logger's
// JsonFormatter(timestamp=True) with Kopf's ObjectJsonFormatter writes them
// (e.g. {"message": "Handler 'create_fn' succeeded.", "timestamp":
// "2026-06-03T10:00:01.123456+00:00", "object": {"apiVersion":
// "kopf.dev/v1", "kind": "KopfExample", "name": "kopf-example-1", "uid":
// "u1", "namespace": "default"}, "severity": "info"}).
func TestJSONFormat(t *testing.T) {
	ts := `"timestamp": "` + at.UTC().Format("2006-01-02T15:04:05") + `.123456+00:00"`
	ref := fullRef{APIVersion: "kopf.dev/v1", Kind: "KopfExample", Name: "kopf-example-1", UID: "u1", Namespace: "default"}
	refJSON := `{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "name": "kopf-example-1", "uid": "u1", "namespace": "default"}`
	yes, no := true, false
	tests := []struct {
		name string
		opts Options
		with []any
		rec  slog.Record
		want string
	}{
		{
			name: "operator",
			rec:  record(slog.LevelInfo, "Stop-flag is raised. Operator is stopping."),
			want: `{"message": "Stop-flag is raised. Operator is stopping.", ` + ts + `, "severity": "info"}`,
		},
		{
			name: "object: a field of its own, no prefix", with: []any{slog.Any(ObjectKey, ref)},
			rec:  record(slog.LevelDebug, "Handler 'create_fn' is invoked."),
			want: `{"message": "Handler 'create_fn' is invoked.", ` + ts + `, "object": ` + refJSON + `, "severity": "debug"}`,
		},
		{
			name: "a fleet's cluster: a field of its own", with: []any{slog.String(ClusterKey, "east"), slog.Any(ObjectKey, ref)},
			rec:  record(slog.LevelDebug, "Handler 'create_fn' is invoked."),
			want: `{"message": "Handler 'create_fn' is invoked.", "cluster": "east", ` + ts + `, "object": ` + refJSON + `, "severity": "debug"}`,
		},
		{
			name: "object given on the record",
			rec:  record(slog.LevelWarn, "Patching failed.", slog.Any(ObjectKey, ref)),
			want: `{"message": "Patching failed.", ` + ts + `, "object": ` + refJSON + `, "severity": "warn"}`,
		},
		{
			name: "object as a plain string: name and namespace only", with: []any{slog.String(ObjectKey, "ns/n")},
			rec:  record(slog.LevelError, "Event processing has failed."),
			want: `{"message": "Event processing has failed.", ` + ts + `, "object": {"apiVersion": null, "kind": null, "name": "n", "uid": null, "namespace": "ns"}, "severity": "error"}`,
		},
		{
			name: "cluster-scoped object: namespace null", with: []any{slog.Any(ObjectKey, fullRef{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: "u2"})},
			rec:  record(slog.LevelError+4, "Fatal."),
			want: `{"message": "Fatal.", ` + ts + `, "object": {"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "u2", "namespace": null}, "severity": "fatal"}`,
		},
		{
			name: "--log-refkey", opts: Options{RefKey: "k8s"}, with: []any{slog.Any(ObjectKey, ref)},
			rec:  record(slog.LevelInfo, "Handler 'create_fn' succeeded."),
			want: `{"message": "Handler 'create_fn' succeeded.", ` + ts + `, "k8s": ` + refJSON + `, "severity": "info"}`,
		},
		{
			name: "--log-prefix", opts: Options{Prefix: &yes}, with: []any{slog.Any(ObjectKey, ref)},
			rec:  record(slog.LevelInfo, "Handler 'create_fn' succeeded."),
			want: `{"message": "[default/kopf-example-1] Handler 'create_fn' succeeded.", ` + ts + `, "object": ` + refJSON + `, "severity": "info"}`,
		},
		{
			name: "--log-prefix, cluster-scoped", opts: Options{Prefix: &yes}, with: []any{slog.String(ObjectKey, "node-1")},
			rec:  record(slog.LevelInfo, "m"),
			want: `{"message": "[node-1] m", ` + ts + `, "object": {"apiVersion": null, "kind": null, "name": "node-1", "uid": null, "namespace": null}, "severity": "info"}`,
		},
		{
			name: "--no-log-prefix", opts: Options{Prefix: &no}, with: []any{slog.Any(ObjectKey, ref)},
			rec:  record(slog.LevelInfo, "m"),
			want: `{"message": "m", ` + ts + `, "object": ` + refJSON + `, "severity": "info"}`,
		},
		{
			name: "attributes: extras between the message and the timestamp, the stack as exc_info",
			with: []any{slog.Int("worker", 3), slog.Group("g", slog.Bool("b", true))},
			rec: record(slog.LevelError, "Handler 'f' failed: boom", slog.String("stack", "goroutine 1:\nmain.f()\n"),
				slog.Float64("f", 0.5), slog.Float64("one", 1), slog.Any("err", errors.New("e")), slog.Duration("d", time.Second)),
			want: `{"message": "Handler 'f' failed: boom", "exc_info": "goroutine 1:\nmain.f()", "worker": 3, "g": {"b": true}, "f": 0.5, "one": 1.0, "err": "e", "d": "1s", ` + ts + `, "severity": "error"}`,
		},
		{
			name: "Python's escaping: ensure_ascii, no HTML escaping",
			rec:  record(slog.LevelInfo, "<é> & \"日本\" \\ \t😀\x01"),
			want: `{"message": "<\u00e9> & \"\u65e5\u672c\" \\ \t\ud83d\ude00\u0001", ` + ts + `, "severity": "info"}`,
		},
		{
			name: "a field named severity is kept",
			rec:  record(slog.LevelInfo, "m", slog.String("severity", "custom")),
			want: `{"message": "m", "severity": "custom", ` + ts + `}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			opts := tt.opts
			opts.Format, opts.Level = JSON, slog.LevelDebug
			h := NewWith(&buf, opts).With(tt.with...).Handler()
			if err := h.Handle(context.Background(), tt.rec); err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != tt.want+"\n" {
				t.Errorf("output =\n%s\nwant\n%s", got, tt.want)
			}
			if !json.Valid(buf.Bytes()) {
				t.Errorf("not valid JSON: %s", buf.String())
			}
		})
	}
}

func TestPyISOTime(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 6, 3, 12, 0, 1, 123456789, time.UTC), "2026-06-03T12:00:01.123456+00:00"},
		{time.Date(2026, 6, 3, 12, 0, 1, 0, time.UTC), "2026-06-03T12:00:01+00:00"},
		{time.Date(2026, 6, 3, 14, 0, 1, 1000, time.FixedZone("CEST", 7200)), "2026-06-03T12:00:01.000001+00:00"},
	}
	for _, tt := range tests {
		if got := pyISOTime(tt.in); got != tt.want {
			t.Errorf("pyISOTime(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPyFloat(t *testing.T) {
	for in, want := range map[float64]string{0: "0.0", 1: "1.0", -2.5: "-2.5", 0.0001: "0.0001", 1e-5: "1e-05", 1e16: "1e+16", 123456789.5: "123456789.5"} {
		if got := string(appendPyFloat(nil, in)); got != want {
			t.Errorf("appendPyFloat(%v) = %q, want Python's %q", in, got, want)
		}
	}
}

// TestTextPrefix: --no-log-prefix drops the "[namespace/name] " prefix in
// the text formats; the full format's logger name stays kopf.objects.
func TestTextPrefix(t *testing.T) {
	no := false
	for _, tt := range []struct {
		format Format
		want   string
	}{
		{Plain, "Handler 'create_fn' succeeded.\n"},
		{Full, "[2026-06-03 12:00:01,123] kopf.objects         [INFO    ] Handler 'create_fn' succeeded.\n"},
	} {
		var buf bytes.Buffer
		h := NewWith(&buf, Options{Format: tt.format, Prefix: &no}).With(slog.String(ObjectKey, "ns/n")).Handler()
		if err := h.Handle(context.Background(), record(slog.LevelInfo, "Handler 'create_fn' succeeded.")); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tt.want {
			t.Errorf("%s: output = %q, want %q", tt.format, buf.String(), tt.want)
		}
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
		{"FULL", Full, false},
		{"Json", JSON, false},
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
