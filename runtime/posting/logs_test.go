package posting

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/settings"
)

// TestForObjectPrintsTheSame: swapping logging.ForObject for ForObject does
// not change the log output in the text formats.
func TestForObjectPrintsTheSame(t *testing.T) {
	for _, format := range []logging.Format{logging.Full, logging.Plain} {
		for _, ns := range []string{"ns1", ""} {
			obj := configMap(ns)
			var plain, rich bytes.Buffer
			logging.ForObject(logging.New(&plain, format, slog.LevelDebug), obj.Ref()).Info("Handler 'f' succeeded.", "k", "v")
			ForObject(logging.New(&rich, format, slog.LevelDebug), obj).Info("Handler 'f' succeeded.", "k", "v")
			strip := func(s string) string { // the timestamps differ
				if i := strings.Index(s, "] "); format == logging.Full && i >= 0 {
					return s[i:]
				}
				return s
			}
			if strip(plain.String()) != strip(rich.String()) {
				t.Errorf("%s format, namespace %q:\n got %q\nwant %q", format, ns, rich.String(), plain.String())
			}
			if !strings.Contains(rich.String(), obj.Ref()) {
				t.Errorf("%s format: no object reference in %q", format, rich.String())
			}
		}
	}
}

// TestForObjectJSON: in the JSON format, ForObject's records carry the
// object's full reference, as Kopf's k8s_ref: apiVersion, kind, name, uid,
// namespace (null when cluster-scoped).
func TestForObjectJSON(t *testing.T) {
	for ns, want := range map[string]string{
		"ns1": `"object": {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm1", "uid": "uid-1", "namespace": "ns1"}, "severity": "info"}`,
		"":    `"object": {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm1", "uid": "uid-1", "namespace": null}, "severity": "info"}`,
	} {
		var out bytes.Buffer
		ForObject(logging.New(&out, logging.JSON, slog.LevelDebug), configMap(ns)).Info("Handler 'f' succeeded.")
		if got := out.String(); !strings.HasPrefix(got, `{"message": "Handler 'f' succeeded.", "timestamp": "`) || !strings.HasSuffix(got, want+"\n") {
			t.Errorf("namespace %q: %s\nwant it to end with %s", ns, got, want)
		}
	}
}

func TestLogHandlerPosts(t *testing.T) {
	sink := &fakeSink{}
	p, _ := newTestPoster(t, sink, settings.Default().Posting, Options{Level: slog.LevelInfo})
	var out bytes.Buffer
	root := slog.New(NewLogHandler(logging.New(&out, logging.Plain, slog.LevelWarn).Handler(), p))
	obj := configMap("ns1")

	objLogger := ForObject(root, obj)
	objLogger.Debug("debug: below the posting level")
	objLogger.Info("Handler 'f' succeeded.")
	objLogger.Warn("warning")
	objLogger.Error("Handler 'f' failed permanently: boom")
	objLogger.Log(context.Background(), slog.LevelError+4, "fatal")
	logging.ForObject(root, obj.Ref()).Error("local: a plain reference is not posted")
	root.Error("not about an object")
	root.Error("a reference on the record", slog.Any(logging.ObjectKey, RefOf(configMap("ns2"))))
	objLogger.WithGroup("g").Info("in a group, still the logger's object")
	root.WithGroup("g").Error("in a group: not the object", slog.Any(logging.ObjectKey, RefOf(obj)))
	ForObject(root, obj).With(slog.String(logging.ObjectKey, "ns1/cm1")).Info("overridden by a plain reference")
	stop(t, p)

	want := []summary{
		{"Normal", "Logging", "Handler 'f' succeeded."},
		{"Warning", "Logging", "warning"},
		{"Error", "Logging", "Handler 'f' failed permanently: boom"},
		{"Fatal", "Logging", "fatal"},
		{"Error", "Logging", "a reference on the record"},
		{"Normal", "Logging", "in a group, still the logger's object"},
	}
	got := sink.got()
	if s := summarize(got); len(s) != len(want) {
		t.Fatalf("posted %v, want %v", s, want)
	}
	for i, ev := range got {
		if summarize(got)[i] != want[i] {
			t.Errorf("event %d = %v, want %v", i, summarize(got)[i], want[i])
		}
		wantNS := "ns1"
		if i == 4 {
			wantNS = "ns2"
		}
		if ev.Namespace != wantNS || ev.InvolvedObject.UID != "uid-1" || ev.InvolvedObject.Kind != "ConfigMap" {
			t.Errorf("event %d is about %+v in %q", i, ev.InvolvedObject, ev.Namespace)
		}
	}

	// The output is next's alone, at next's level.
	wantOut := "[ns1/cm1] warning\n" +
		"[ns1/cm1] Handler 'f' failed permanently: boom\n" +
		"[ns1/cm1] fatal\n" +
		"[ns1/cm1] local: a plain reference is not posted\n" +
		"not about an object\n" +
		"[ns2/cm1] a reference on the record\n"
	if !strings.HasPrefix(out.String(), wantOut) {
		t.Errorf("output:\n%s\nwant it to begin with:\n%s", out.String(), wantOut)
	}
	if strings.Contains(out.String(), "debug") || strings.Contains(out.String(), "succeeded") {
		t.Errorf("records below next's level were printed:\n%s", out.String())
	}
}

func TestLogHandlerLevelAndDisabled(t *testing.T) {
	obj := configMap("ns1")
	for _, tc := range []struct {
		name    string
		enabled bool
		level   slog.Level
		want    int
	}{
		{"warning level", true, slog.LevelWarn, 2},
		{"disabled", false, slog.LevelDebug, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &fakeSink{}
			s := settings.Default().Posting
			s.Enabled = tc.enabled
			p, _ := newTestPoster(t, sink, s, Options{Level: tc.level})
			var out bytes.Buffer
			h := NewLogHandler(logging.New(&out, logging.Plain, slog.LevelError).Handler(), p)
			l := ForObject(slog.New(h), obj)
			if got, want := h.Enabled(context.Background(), slog.LevelWarn), tc.enabled; got != want {
				t.Errorf("Enabled(WARN) = %v, want %v", got, want)
			}
			l.Info("info")
			l.Warn("warning")
			l.Error("error")
			stop(t, p)
			if got := len(sink.got()); got != tc.want {
				t.Errorf("posted %d, want %d", got, tc.want)
			}
			if out.String() != "[ns1/cm1] error\n" {
				t.Errorf("output %q", out.String())
			}
		})
	}
	// A nil poster: a transparent wrapper.
	var out bytes.Buffer
	l := ForObject(slog.New(NewLogHandler(logging.New(&out, logging.Plain, slog.LevelInfo).Handler(), nil)), obj)
	l.Info("hello")
	if out.String() != "[ns1/cm1] hello\n" {
		t.Errorf("output %q", out.String())
	}
}
