package sharding

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// server is a fake API server of one object, for the Writer's logic: it
// checks a merge patch's resourceVersion and a JSON patch's test of the
// stamp as the real one does (the real one is e2e/sharding's fence test).
type server struct {
	rv      int
	stamp   string
	sent    []string // the bodies received
	gets    int
	missing bool
}

func (s *server) Patch(_ context.Context, _, name string, pt types.PatchType, data []byte, _ ...string) (string, error) {
	s.sent = append(s.sent, string(data))
	gr := schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"}
	switch pt {
	case types.MergePatchType:
		var p struct {
			Metadata struct {
				ResourceVersion string            `json:"resourceVersion"`
				Annotations     map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(data, &p); err != nil {
			return "", err
		}
		if p.Metadata.ResourceVersion != "" && p.Metadata.ResourceVersion != strconv.Itoa(s.rv) {
			return "", apierrors.NewConflict(gr, name, fmt.Errorf("stale version %s", p.Metadata.ResourceVersion))
		}
		if v, ok := p.Metadata.Annotations[DefaultAnnotation]; ok {
			s.stamp = v
		}
	case types.JSONPatchType:
		var ops []map[string]any
		if err := json.Unmarshal(data, &ops); err != nil {
			return "", err
		}
		if ops[0]["op"] == "test" && ops[0]["value"] != s.stamp {
			return "", apierrors.NewInvalid(schema.GroupKind{Group: "kopf.dev", Kind: "KopfExample"}, name, nil)
		}
	}
	s.rv++
	return strconv.Itoa(s.rv), nil
}

func (s *server) Get(_ context.Context, _, name string) (*unstructured.Unstructured, error) {
	s.gets++
	if s.missing {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "kopfexamples"}, name)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetResourceVersion(strconv.Itoa(s.rv))
	if s.stamp != "" {
		obj.SetAnnotations(map[string]string{DefaultAnnotation: s.stamp})
	}
	return obj, nil
}

// The Writer's decisions, step by step against a fake server: what it
// sends, when it reads, and what it refuses.
func TestWriter(t *testing.T) {
	gr := schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"}
	merge := func(w *Writer) error {
		_, err := w.Patch(context.Background(), "ns", "obj", types.MergePatchType, []byte(`{"spec":{"x":1}}`))
		return err
	}
	jsonPatch := func(w *Writer) error {
		_, err := w.Patch(context.Background(), "ns", "obj", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers/0"}]`))
		return err
	}
	tests := []struct {
		name     string
		setup    func(s *server, a, b *Writer)
		write    func(w *Writer) error
		conflict bool // the write is refused as a conflict (or invalid, for a JSON patch's test)
		gets     int  // reads of the object
		sent     int  // patches sent by a (the stamps excluded)
		last     string
	}{
		{"nobody's object: refused unsent", func(*server, *Writer, *Writer) {}, merge, true, 1, 0, ""},
		{"own stamp known: sent on that version", func(s *server, a, _ *Writer) { stamp(t, a) }, merge, false, 0, 1,
			`{"metadata":{"resourceVersion":"6"},"spec":{"x":1}}`},
		{"own stamp seen in the watch", func(s *server, a, _ *Writer) {
			s.stamp = "a"
			a.Observe("ns", "obj", "5", "a")
		}, merge, false, 0, 1, `{"metadata":{"resourceVersion":"5"},"spec":{"x":1}}`},
		{"another writer in between: read again, sent again", func(s *server, a, _ *Writer) {
			stamp(t, a)
			s.rv += 3
		}, merge, false, 1, 2, `{"metadata":{"resourceVersion":"9"},"spec":{"x":1}}`},
		{"taken over: refused", func(s *server, a, b *Writer) {
			stamp(t, a)
			stamp(t, b)
		}, merge, true, 1, 1, `{"metadata":{"resourceVersion":"6"},"spec":{"x":1}}`},
		{"taken over, seen in the watch: refused unsent", func(s *server, a, b *Writer) {
			stamp(t, a)
			stamp(t, b)
			a.Observe("ns", "obj", "7", "b")
		}, merge, true, 1, 0, ""},
		{"own stamp forgotten (its bucket given up during the cycle): read, sent on the version read", func(s *server, a, _ *Writer) {
			stamp(t, a)
			a.Forget("ns", "obj")
		}, merge, false, 1, 1, `{"metadata":{"resourceVersion":"6"},"spec":{"x":1}}`},
		{"own stamp forgotten, taken over since: refused unsent", func(s *server, a, b *Writer) {
			stamp(t, a)
			a.Forget("ns", "obj")
			stamp(t, b)
		}, merge, true, 1, 0, ""},
		{"JSON patch: a test of the stamp first", func(s *server, a, _ *Writer) { stamp(t, a) }, jsonPatch, false, 0, 1,
			`[{"op":"test","path":"/metadata/annotations/kopf.zalando.org~1shard-owner","value":"a"},{"op":"remove","path":"/metadata/finalizers/0"}]`},
		{"JSON patch taken over: the test fails", func(s *server, a, b *Writer) {
			stamp(t, a)
			stamp(t, b)
		}, jsonPatch, true, 0, 1, `[{"op":"test","path":"/metadata/annotations/kopf.zalando.org~1shard-owner","value":"a"},{"op":"remove","path":"/metadata/finalizers/0"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &server{rv: 5}
			a := (&Fence{Identity: "a"}).Writer(gr, s, s)
			b := (&Fence{Identity: "b"}).Writer(gr, s, s)
			tt.setup(s, a, b)
			s.sent, s.gets = nil, 0
			err := tt.write(a)
			if refused := apierrors.IsConflict(err) || apierrors.IsInvalid(err); refused != tt.conflict || (!refused && err != nil) {
				t.Errorf("got %v, want a refusal: %v", err, tt.conflict)
			}
			if s.gets != tt.gets || len(s.sent) != tt.sent {
				t.Errorf("%d reads and %d patches sent, want %d and %d: %q", s.gets, len(s.sent), tt.gets, tt.sent, s.sent)
			}
			if tt.last != "" && (len(s.sent) == 0 || s.sent[len(s.sent)-1] != tt.last) {
				t.Errorf("sent %q, want last %s", s.sent, tt.last)
			}
		})
	}
}

func stamp(t *testing.T, w *Writer) {
	t.Helper()
	if _, err := w.Stamp(context.Background(), "ns", "obj"); err != nil {
		t.Fatal(err)
	}
}

// A vanished object is not found, not a conflict: the reactor skips the
// write as it does for any vanished object.
func TestWriterVanishedObject(t *testing.T) {
	s := &server{rv: 5, missing: true}
	w := (&Fence{Identity: "a"}).Writer(schema.GroupResource{Resource: "kopfexamples"}, s, s)
	_, err := w.Patch(context.Background(), "ns", "obj", types.MergePatchType, []byte(`{}`))
	if !apierrors.IsNotFound(err) {
		t.Errorf("got %v, want not found", err)
	}
}

// A write that changes the stamp itself leaves no version known as this
// replica's: the next write reads the object first.
func TestWriterStampTouched(t *testing.T) {
	s := &server{rv: 5}
	w := (&Fence{Identity: "a"}).Writer(schema.GroupResource{Resource: "kopfexamples"}, s, s)
	stamp(t, w)
	if _, err := w.Patch(context.Background(), "ns", "obj", types.MergePatchType, []byte(`{"metadata":{"annotations":{"kopf.zalando.org/shard-owner":"a"}}}`)); err != nil {
		t.Fatal(err)
	}
	s.gets = 0
	if _, err := w.Patch(context.Background(), "ns", "obj", types.MergePatchType, []byte(`{}`)); err != nil || s.gets != 1 {
		t.Errorf("got %v after %d reads, want a success after 1", err, s.gets)
	}
}
