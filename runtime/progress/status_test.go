package progress

import (
	"reflect"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/patches"
)

func withStatus(status map[string]any) body.Body {
	b := withAnnotations(nil)
	b["status"] = status
	return b
}

func statusRecords(records map[string]any) map[string]any {
	return map[string]any{"status": map[string]any{"kopf": map[string]any{"progress": records}}}
}

func TestNewStatusProgressStorage(t *testing.T) {
	s := NewStatusProgressStorage()
	want := &StatusProgressStorage{Field: []string{"status", "kopf", "progress"}, TouchField: []string{"status", "kopf", "dummy"}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("defaults = %+v", s)
	}
}

func TestStatusFetch(t *testing.T) {
	tests := []struct {
		name    string
		storage StatusProgressStorage
		b       body.Body
		id      string
		want    *Record
		wantErr bool
	}{
		{"no status", StatusProgressStorage{}, withAnnotations(nil), "create_fn", nil, false},
		{"absent", StatusProgressStorage{}, withStatus(map[string]any{"kopf": map[string]any{"progress": map[string]any{}}}), "create_fn", nil, false},
		{"present, raw id", StatusProgressStorage{}, withStatus(map[string]any{"kopf": map[string]any{"progress": map[string]any{
			"create_fn/item1": map[string]any{"started": "2020-02-14T16:58:25.396364", "retries": int64(1), "success": true},
		}}}), "create_fn/item1", &Record{Started: ptrTime("2020-02-14T16:58:25.396364"), Retries: 1, Success: true}, false},
		{"float retries as from JSON", StatusProgressStorage{}, withStatus(map[string]any{"kopf": map[string]any{"progress": map[string]any{
			"fn": map[string]any{"retries": 3.0},
		}}}), "fn", &Record{Retries: 3}, false},
		{"null record", StatusProgressStorage{}, withStatus(map[string]any{"kopf": map[string]any{"progress": map[string]any{"fn": nil}}}), "fn", nil, false},
		{"non-map container is absent", StatusProgressStorage{}, withStatus(map[string]any{"kopf": map[string]any{"progress": "garbage"}}), "fn", nil, false},
		{"non-map record", StatusProgressStorage{}, withStatus(map[string]any{"kopf": map[string]any{"progress": map[string]any{"fn": "garbage"}}}), "fn", nil, true},
		{"wrongly typed field", StatusProgressStorage{}, withStatus(map[string]any{"kopf": map[string]any{"progress": map[string]any{
			"fn": map[string]any{"success": "yes"}}}}), "fn", nil, true},
		{"custom field", StatusProgressStorage{Field: []string{"status", "my-op"}}, withStatus(map[string]any{"my-op": map[string]any{
			"fn": map[string]any{"retries": int64(1)}}}), "fn", &Record{Retries: 1}, false},
		{"drs bodies are not suffixed", StatusProgressStorage{}, func() body.Body {
			b := drsBody()
			b["status"] = map[string]any{"kopf": map[string]any{"progress": map[string]any{"fn": map[string]any{"retries": int64(4)}}}}
			return b
		}(), "fn", &Record{Retries: 4}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.storage.Fetch(tt.b, tt.id)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Fetch() error = %v, wantErr %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fetch() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestStatusStore(t *testing.T) {
	p := patches.New()
	s := NewStatusProgressStorage()
	s.Store(withAnnotations(nil), p, "create_fn/item1", &Record{Purpose: ptrStr("create"), Retries: 1})
	want := statusRecords(map[string]any{"create_fn/item1": map[string]any{
		"started": nil, "stopped": nil, "delayed": nil, "purpose": "create", "retries": int64(1),
		"success": false, "failure": false, "message": nil, "subrefs": nil,
	}})
	assertPatch(t, p, want)

	p = patches.New()
	s.Store(withAnnotations(nil), p, "fn", nil)
	assertPatch(t, p, nil)
}

func TestStatusPurge(t *testing.T) {
	tests := []struct {
		name    string
		b       body.Body
		pending map[string]any
		want    map[string]any
	}{
		{"absent", withAnnotations(nil), nil, nil},
		{"in the body", withStatus(map[string]any{"kopf": map[string]any{"progress": map[string]any{"fn": map[string]any{}}}}), nil,
			statusRecords(map[string]any{"fn": nil})},
		{"only in the patch", withAnnotations(nil), statusRecords(map[string]any{"fn": map[string]any{"retries": 1}}), nil},
		{"only in the patch, with others", withAnnotations(nil),
			statusRecords(map[string]any{"fn": map[string]any{}, "other": map[string]any{}}),
			statusRecords(map[string]any{"other": map[string]any{}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := patches.Patch{}
			if tt.pending != nil {
				p = patches.Patch(deepCopy(tt.pending).(map[string]any))
			}
			StatusProgressStorage{}.Purge(tt.b, p, "fn")
			assertPatch(t, p, tt.want)
		})
	}
}

func TestStatusTouch(t *testing.T) {
	dummy := func(v any) map[string]any {
		return map[string]any{"status": map[string]any{"kopf": map[string]any{"dummy": v}}}
	}
	tests := []struct {
		name  string
		b     body.Body
		value *string
		want  map[string]any
	}{
		{"set", withAnnotations(nil), ptrStr("t1"), dummy("t1")},
		{"same", withStatus(map[string]any{"kopf": map[string]any{"dummy": "t1"}}), ptrStr("t1"), nil},
		{"remove", withStatus(map[string]any{"kopf": map[string]any{"dummy": "t1"}}), nil, dummy(nil)},
		{"remove absent", withAnnotations(nil), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := patches.New()
			StatusProgressStorage{}.Touch(tt.b, p, tt.value)
			assertPatch(t, p, tt.want)
		})
	}
}

func TestStatusClear(t *testing.T) {
	b := withStatus(map[string]any{"kopf": map[string]any{"progress": map[string]any{"a": map[string]any{}, "b": map[string]any{}}}})
	p := patches.Patch(statusRecords(map[string]any{"c": map[string]any{}, "a": map[string]any{}}))
	StatusProgressStorage{}.Clear(b, p)
	assertPatch(t, p, statusRecords(map[string]any{"a": nil, "b": nil}))
}

func TestStatusClearEssence(t *testing.T) {
	essence := map[string]any{
		"spec":   map[string]any{"a": "b"},
		"status": map[string]any{"kopf": map[string]any{"progress": map[string]any{"fn": map[string]any{}}}},
	}
	got := StatusProgressStorage{}.ClearEssence(essence)
	if want := map[string]any{"spec": map[string]any{"a": "b"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ClearEssence() = %#v", got)
	}
	essence["status"].(map[string]any)["x"] = "y"
	got = StatusProgressStorage{}.ClearEssence(essence)
	if want := map[string]any{"spec": map[string]any{"a": "b"}, "status": map[string]any{"x": "y"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ClearEssence() = %#v", got)
	}
	if _, ok := essence["status"].(map[string]any)["kopf"]; !ok {
		t.Errorf("the essence was modified")
	}
}
