package progress

import (
	"reflect"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/patches"
)

func bothStorages() body.Body {
	b := withAnnotations(map[string]any{"kopf.zalando.org/fn": `{"retries":1}`})
	b["status"] = map[string]any{"kopf": map[string]any{
		"progress": map[string]any{"fn": map[string]any{"retries": 2.0}, "legacy": map[string]any{"retries": 3.0}},
		"dummy":    "old",
	}}
	return b
}

func TestSmartFetch(t *testing.T) {
	s := NewSmartProgressStorage()
	tests := []struct {
		name    string
		b       body.Body
		id      string
		want    *Record
		wantErr bool
	}{
		{"annotations first", bothStorages(), "fn", &Record{Retries: 1}, false},
		{"status as a fallback", bothStorages(), "legacy", &Record{Retries: 3}, false},
		{"absent", bothStorages(), "nope", nil, false},
		{"annotation error is returned", func() body.Body {
			b := bothStorages()
			b["metadata"].(map[string]any)["annotations"].(map[string]any)["kopf.zalando.org/fn"] = "junk"
			return b
		}(), "fn", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Fetch(tt.b, tt.id)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Fetch() error = %v, wantErr %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fetch() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSmartWritesAnnotationsOnly(t *testing.T) {
	s := NewSmartProgressStorage()
	p := patches.New()
	s.Store(bothStorages(), p, "fn", &Record{Retries: 5})
	s.Touch(bothStorages(), p, ptrStr("new"))
	assertPatch(t, p, annotationsPatch(map[string]any{
		"kopf.zalando.org/fn":          `{"retries":5,"success":false,"failure":false}`,
		"kopf.zalando.org/touch-dummy": "new",
	}))
}

func TestSmartPurgesBoth(t *testing.T) {
	s := NewSmartProgressStorage()
	p := patches.New()
	s.Purge(bothStorages(), p, "fn")
	assertPatch(t, p, map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"kopf.zalando.org/fn": nil}},
		"status":   map[string]any{"kopf": map[string]any{"progress": map[string]any{"fn": nil}}},
	})
}

func TestSmartClearsBoth(t *testing.T) {
	s := NewSmartProgressStorage()
	p := patches.New()
	s.Clear(bothStorages(), p)
	assertPatch(t, p, map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"kopf.zalando.org/fn": nil}},
		"status":   map[string]any{"kopf": map[string]any{"progress": map[string]any{"fn": nil, "legacy": nil}}},
	})

	essence := s.ClearEssence(map[string]any{
		"spec":     map[string]any{"a": "b"},
		"metadata": map[string]any{"annotations": map[string]any{"kopf.zalando.org/fn": "{}"}},
		"status":   map[string]any{"kopf": map[string]any{"progress": map[string]any{}}},
	})
	if want := map[string]any{"spec": map[string]any{"a": "b"}}; !reflect.DeepEqual(essence, want) {
		t.Errorf("ClearEssence() = %#v", essence)
	}
}

func TestMultiProgressStorage(t *testing.T) {
	s := MultiProgressStorage{Storages: []ProgressStorage{
		StatusProgressStorage{},
		NewAnnotationsProgressStorage(),
	}}
	got, err := s.Fetch(bothStorages(), "fn")
	if err != nil || !reflect.DeepEqual(got, &Record{Retries: 2}) {
		t.Errorf("Fetch() = %+v, %v; want the status record first", got, err)
	}
	p := patches.New()
	s.Store(withAnnotations(nil), p, "x", &Record{})
	if _, ok := resolve(p, "status", "kopf", "progress", "x"); !ok {
		t.Errorf("status not written: %#v", p)
	}
	if _, ok := resolve(p, "metadata", "annotations", "kopf.zalando.org/x"); !ok {
		t.Errorf("annotation not written: %#v", p)
	}
	p = patches.New()
	s.Purge(bothStorages(), p, "fn")
	s.Touch(bothStorages(), p, nil)
	assertPatch(t, p, map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"kopf.zalando.org/fn": nil}},
		"status":   map[string]any{"kopf": map[string]any{"progress": map[string]any{"fn": nil}, "dummy": nil}},
	})
	if got := s.ClearEssence(nil); got != nil {
		t.Errorf("ClearEssence(nil) = %#v", got)
	}
	p = patches.New()
	s.Clear(bothStorages(), p)
	if _, ok := resolve(p, "status", "kopf", "progress", "legacy"); !ok {
		t.Errorf("Clear() did not reach the status: %#v", p)
	}
}
