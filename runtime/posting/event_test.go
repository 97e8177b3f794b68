package posting

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/settings"
)

// kopfCut is Kopf's algorithm, in characters, for comparison.
func kopfCut(message string) string {
	r := []rune(message)
	if len(r) <= 1024 {
		return message
	}
	return string(r[:1024/2-3/2]) + "..." + string(r[len(r)-(1024/2-(3-3/2)):])
}

func TestCutMessage(t *testing.T) {
	ascii := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteByte("0123456789abcdefghijklmnopqrstuvwxyz"[i%36])
		}
		return b.String()
	}
	for _, n := range []int{0, 1, 1023, 1024} {
		if got := cutMessage(ascii(n)); got != ascii(n) {
			t.Errorf("cutMessage(%d bytes) changed the message", n)
		}
	}
	for _, n := range []int{1025, 1026, 2048, 100000} {
		msg := ascii(n)
		got := cutMessage(msg)
		if got != kopfCut(msg) {
			t.Errorf("cutMessage(%d ASCII bytes) differs from Kopf's cut:\n got %q\nwant %q", n, got, kopfCut(msg))
		}
		if len(got) != 1024 || got[:511] != msg[:511] || got[511:514] != "..." || got[514:] != msg[n-510:] {
			t.Errorf("cutMessage(%d bytes): want 511 bytes + ... + the last 510 bytes, got %d bytes", n, len(got))
		}
	}
}

func TestCutMessageMultibyte(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  string
	}{
		{"2-byte", strings.Repeat("ä", 600)},               // 600 characters, 1200 bytes: Kopf would not cut
		{"3-byte", strings.Repeat("€", 2000)},              // 6000 bytes
		{"4-byte", strings.Repeat("😀", 300)},               // 1200 bytes
		{"mixed", "x" + strings.Repeat("€ä😀a", 200) + "y"}, // boundaries fall anywhere
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := cutMessage(tc.msg)
			if len(got) > MaxMessageLength {
				t.Errorf("cut to %d bytes, want at most %d", len(got), MaxMessageLength)
			}
			if len(got) < MaxMessageLength-6 {
				t.Errorf("cut to %d bytes, want close to %d", len(got), MaxMessageLength)
			}
			if !utf8.ValidString(got) {
				t.Errorf("the cut split a character: %q", got)
			}
			head, tail, ok := strings.Cut(got, "...")
			if !ok || !strings.HasPrefix(tc.msg, head) || !strings.HasSuffix(tc.msg, tail) {
				t.Errorf("want a prefix, ..., a suffix of the message; got %q", got)
			}
		})
	}
	if got := cutMessage("a\xffb"); got != "a\uFFFDb" {
		t.Errorf("invalid UTF-8: got %q, want %q", got, "a\uFFFDb")
	}
	invalid := strings.Repeat("\xff", 1000) // 3000 bytes once made valid
	if got := cutMessage(invalid); len(got) > MaxMessageLength || !utf8.ValidString(got) {
		t.Errorf("invalid UTF-8 was not made to fit: %d bytes", len(got))
	}
}

func configMap(ns string) body.Body {
	meta := map[string]any{"name": "cm1", "uid": "uid-1", "resourceVersion": "7"}
	if ns != "" {
		meta["namespace"] = ns
	}
	return body.Body{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
}

// TestShapeWire checks the JSON the API server receives, field by field,
// against Kopf's wire format.
func TestShapeWire(t *testing.T) {
	now := time.Date(2026, 6, 3, 12, 0, 0, 123456000, time.UTC)
	for _, tc := range []struct {
		name, ns, wantNS string
	}{
		{"namespaced", "ns1", "ns1"},
		{"cluster-scoped", "", "default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := shape(RefOf(configMap(tc.ns)), "Error", "SomeReason", "Some message", settings.Default().Posting, "default", now)
			u, err := toUnstructured(ev)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := json.Marshal(u.Object)
			var got map[string]any
			_ = json.Unmarshal(data, &got)
			want := map[string]any{
				"apiVersion": "v1", "kind": "Event",
				"metadata":           map[string]any{"namespace": tc.wantNS, "generateName": "kopf-event-"},
				"action":             "Action?",
				"type":               "Error",
				"reason":             "SomeReason",
				"message":            "Some message",
				"reportingComponent": "kopf",
				"reportingInstance":  "dev",
				"source":             map[string]any{"component": "kopf"},
				"involvedObject": map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap", "name": "cm1", "uid": "uid-1", "namespace": tc.wantNS,
				},
				"firstTimestamp": "2026-06-03T12:00:00Z",
				"lastTimestamp":  "2026-06-03T12:00:00Z",
				"eventTime":      "2026-06-03T12:00:00.123456Z",
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("event JSON:\n%s\nwant:\n%s", g, w)
			}
		})
	}
}

func TestShapeSettings(t *testing.T) {
	s := settings.Posting{Enabled: true, ReportingComponent: "my-op", ReportingInstance: "pod-1", EventNamePrefix: "my-"}
	ev := shape(RefOf(configMap("")), "Normal", "R", strings.Repeat("m", 2000), s, "elsewhere", time.Now())
	if ev.GenerateName != "my-" || ev.Name != "" || ev.ReportingController != "my-op" || ev.Source.Component != "my-op" || ev.ReportingInstance != "pod-1" {
		t.Errorf("settings not applied: %+v", ev)
	}
	if ev.Namespace != "elsewhere" || ev.InvolvedObject.Namespace != "elsewhere" {
		t.Errorf("namespace = %q, involvedObject.namespace = %q; want the default namespace", ev.Namespace, ev.InvolvedObject.Namespace)
	}
	if len(ev.Message) != 1024 {
		t.Errorf("message of %d bytes, want cut to 1024", len(ev.Message))
	}
	if ev.InvolvedObject.ResourceVersion != "" || ev.InvolvedObject.FieldPath != "" {
		t.Errorf("involvedObject has more than Kopf's fields: %+v", ev.InvolvedObject)
	}
}

func TestObjectRef(t *testing.T) {
	ref := RefOf(configMap("ns1"))
	want := ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns1", Name: "cm1", UID: "uid-1"}
	if ref != want {
		t.Errorf("RefOf = %+v, want %+v", ref, want)
	}
	if ref.String() != configMap("ns1").Ref() || RefOf(configMap("")).String() != configMap("").Ref() {
		t.Errorf("String differs from body.Ref: %q", ref.String())
	}
	if v := ref.LogValue(); v.Kind() != slog.KindString || v.String() != "ns1/cm1" {
		t.Errorf("LogValue = %v", v)
	}
	if RefOf(nil) != (ObjectRef{}) || RefOf(body.Body{"metadata": 42}) != (ObjectRef{}) {
		t.Errorf("RefOf of a broken body is not empty")
	}
	for _, tc := range []struct {
		apiVersion, kind string
		skip             bool
	}{
		{"v1", "Event", true},
		{"events.k8s.io/v1", "Event", false},
		{"v1", "ConfigMap", false},
		{"example.com/v1", "Event", false},
	} {
		if got := (ObjectRef{APIVersion: tc.apiVersion, Kind: tc.kind}).isCoreEvent(); got != tc.skip {
			t.Errorf("isCoreEvent(%s %s) = %v, want %v", tc.apiVersion, tc.kind, got, tc.skip)
		}
	}
}

func TestLogEventType(t *testing.T) {
	for l, want := range map[slog.Level]string{
		slog.LevelDebug - 4: "Debug", slog.LevelDebug: "Debug", slog.LevelDebug + 1: "Normal",
		slog.LevelInfo: "Normal", slog.LevelInfo + 1: "Warning", slog.LevelWarn: "Warning",
		slog.LevelWarn + 1: "Error", slog.LevelError: "Error", slog.LevelError + 1: "Fatal",
	} {
		if got := logEventType(l); got != want {
			t.Errorf("logEventType(%v) = %q, want %q", l, got, want)
		}
	}
}
