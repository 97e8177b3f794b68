package watching

import (
	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func object(ns, name, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{
			"namespace": ns, "name": name, "resourceVersion": rv,
			"managedFields": []any{map[string]any{"manager": "kubectl"}},
		},
	}}
}

func record(events *[]Event) Callback { return func(ev Event) { *events = append(*events, ev) } }

// The first listing is delivered as initial; a relist delivers only what
// changed, and what vanished as a deletion known by its key alone.
func TestKeyStoreListings(t *testing.T) {
	var events []Event
	s := &keyStore{callback: record(&events), versions: map[string]string{}}
	if err := s.Replace([]any{object("ns", "a", "1"), object("ns", "b", "1")}, "1"); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || !events[0].Initial || !events[1].Initial || events[0].Type != Listed {
		t.Fatalf("first listing: %+v", events)
	}
	events = nil
	if err := s.Replace([]any{object("ns", "a", "1"), object("", "c", "2")}, "2"); err != nil {
		t.Fatal(err)
	}
	got := map[string]Type{}
	for _, ev := range events {
		if ev.Initial {
			t.Errorf("a relist is delivered as initial: %+v", ev)
		}
		got[ev.Key] = ev.Type
	}
	want := map[string]Type{"c": Listed, "ns/b": Deleted}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("relist delivered %v, want %v", got, want)
	}
	for _, ev := range events {
		if ev.Key == "ns/b" && !reflect.DeepEqual(ev.Object, stub("ns/b")) {
			t.Errorf("the vanished object is %v", ev.Object)
		}
	}
}

// OnListed is called once, after the first listing's events, also when
// the listing is empty; relists do not call it again.
func TestKeyStoreOnListed(t *testing.T) {
	tests := []struct {
		name  string
		first []any
	}{
		{"empty", nil},
		{"two objects", []any{object("ns", "a", "1"), object("ns", "b", "1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []Event
			listed, seenAtListed := 0, -1
			s := &keyStore{callback: record(&events), versions: map[string]string{}}
			s.onListed = func() { listed++; seenAtListed = len(events) }
			if err := s.Replace(tt.first, "1"); err != nil {
				t.Fatal(err)
			}
			if listed != 1 || seenAtListed != len(tt.first) {
				t.Fatalf("after the first listing: called %d times, with %d of %d events delivered", listed, seenAtListed, len(tt.first))
			}
			if err := s.Replace([]any{object("ns", "c", "2")}, "2"); err != nil {
				t.Fatal(err)
			}
			if listed != 1 {
				t.Errorf("a relist called OnListed again (%d calls)", listed)
			}
		})
	}
}

// Watch events are delivered in order, with managedFields stripped.
func TestKeyStoreEvents(t *testing.T) {
	var events []Event
	s := &keyStore{callback: record(&events), versions: map[string]string{}}
	_ = s.Add(object("ns", "a", "1"))
	_ = s.Update(object("ns", "a", "2"))
	_ = s.Delete(object("ns", "a", "3"))
	if len(events) != 3 || events[0].Type != Added || events[1].Type != Modified || events[2].Type != Deleted {
		t.Fatalf("events: %+v", events)
	}
	for _, ev := range events {
		if _, ok := ev.Object.Meta()["managedFields"]; ok {
			t.Errorf("managedFields are delivered: %v", ev.Object)
		}
	}
	if len(s.versions) != 0 {
		t.Errorf("a deleted object is still remembered: %v", s.versions)
	}
	if err := s.Add("not an object"); err == nil {
		t.Error("a foreign object is accepted")
	}
}

// client-go's "Watch closed" of an expired resourceVersion is said in
// Kopf's words; others pass as they are.
func TestReflectorLogExpired(t *testing.T) {
	var buf bytes.Buffer
	h := &reflectorLog{Handler: slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), name: "kopfexamples.v1.kopf.dev in ns"}
	logger := slog.New(h)
	logger.Debug("Watch closed", "reflector", "x", "err", apierrors.NewResourceExpired("The resourceVersion for the provided watch is too old."))
	logger.Debug("Watch closed", "reflector", "x", "err", errors.New("other"))
	got := buf.String()
	if !strings.Contains(got, `msg="Restarting the watch-stream for kopfexamples.v1.kopf.dev in ns: its resource version has expired (410 Gone): The resourceVersion for the provided watch is too old."`) ||
		!strings.Contains(got, `msg="Watch closed" reflector=x err=other`) {
		t.Errorf("logged:\n%s", got)
	}
}
