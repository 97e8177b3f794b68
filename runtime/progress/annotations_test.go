package progress

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/patches"
)

const createRecord = `{"started":"2026-01-01T00:00:00.000000+00:00","purpose":"create","retries":1,"success":true,"failure":false}`

func createRecordValue() *Record {
	return &Record{Started: ptrTime("2026-01-01T00:00:00Z"), Purpose: ptrStr("create"), Retries: 1, Success: true}
}

func TestNewAnnotationsProgressStorage(t *testing.T) {
	s := NewAnnotationsProgressStorage()
	want := &AnnotationsProgressStorage{Prefix: "kopf.zalando.org", TouchKey: "touch-dummy", V1: true}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("defaults = %+v", s)
	}
}

func TestAnnotationsFetch(t *testing.T) {
	long := strings.Repeat("a", 50)
	v1Key := KeyV1(DefaultPrefix, long)
	v2Key := KeyV2(DefaultPrefix, long)
	tests := []struct {
		name    string
		storage AnnotationsProgressStorage
		b       body.Body
		id      string
		want    *Record
		wantErr bool
	}{
		{"no metadata", *NewAnnotationsProgressStorage(), body.Body{}, "create_fn", nil, false},
		{"nil body", *NewAnnotationsProgressStorage(), nil, "create_fn", nil, false},
		{"absent", *NewAnnotationsProgressStorage(), withAnnotations(map[string]any{"other": "x"}), "create_fn", nil, false},
		{"present", *NewAnnotationsProgressStorage(),
			withAnnotations(map[string]any{"kopf.zalando.org/create_fn": createRecord}), "create_fn", createRecordValue(), false},
		{"sub-handler key", *NewAnnotationsProgressStorage(),
			withAnnotations(map[string]any{"kopf.zalando.org/create_fn.item1": `{"retries":2}`}), "create_fn/item1", &Record{Retries: 2}, false},
		{"v1 fallback", *NewAnnotationsProgressStorage(),
			withAnnotations(map[string]any{v1Key: `{"retries":1}`}), long, &Record{Retries: 1}, false},
		{"v1 ignored when disabled", AnnotationsProgressStorage{V1: false},
			withAnnotations(map[string]any{v1Key: `{"retries":1}`}), long, nil, false},
		{"v2 first", *NewAnnotationsProgressStorage(),
			withAnnotations(map[string]any{v1Key: `{"retries":1}`, v2Key: `{"retries":2}`}), long, &Record{Retries: 2}, false},
		{"json null in v2 falls back to v1", *NewAnnotationsProgressStorage(),
			withAnnotations(map[string]any{v1Key: `{"retries":1}`, v2Key: `null`}), long, &Record{Retries: 1}, false},
		{"null annotation value is absent", *NewAnnotationsProgressStorage(),
			withAnnotations(map[string]any{"kopf.zalando.org/create_fn": nil}), "create_fn", nil, false},
		{"malformed", *NewAnnotationsProgressStorage(),
			withAnnotations(map[string]any{"kopf.zalando.org/create_fn": `{"retries":`}), "create_fn", nil, true},
		{"malformed v2 is not skipped", *NewAnnotationsProgressStorage(),
			withAnnotations(map[string]any{v1Key: `{"retries":1}`, v2Key: `[]`}), long, nil, true},
		{"non-string annotation", *NewAnnotationsProgressStorage(),
			withAnnotations(map[string]any{"kopf.zalando.org/create_fn": 5.0}), "create_fn", nil, true},
		{"custom prefix", AnnotationsProgressStorage{Prefix: "my-op.example.com"},
			withAnnotations(map[string]any{"kopf.zalando.org/create_fn": `{"retries":9}`, "my-op.example.com/create_fn": `{"retries":1}`}),
			"create_fn", &Record{Retries: 1}, false},
		{"zero value uses the default prefix", AnnotationsProgressStorage{},
			withAnnotations(map[string]any{"kopf.zalando.org/create_fn": `{"retries":1}`}), "create_fn", &Record{Retries: 1}, false},
		{"drs: own key", *NewAnnotationsProgressStorage(), func() body.Body {
			b := drsBody()
			b["metadata"].(map[string]any)["annotations"] = map[string]any{
				"kopf.zalando.org/create_fn":       `{"retries":9}`,
				"kopf.zalando.org/create_fn-ofDRS": `{"retries":1}`,
			}
			return b
		}(), "create_fn", &Record{Retries: 1}, false},
		{"drs: the deployment's key is not ours", *NewAnnotationsProgressStorage(), func() body.Body {
			b := drsBody()
			b["metadata"].(map[string]any)["annotations"] = map[string]any{"kopf.zalando.org/create_fn": `{"retries":9}`}
			return b
		}(), "create_fn", nil, false},
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

func TestAnnotationsStore(t *testing.T) {
	long := strings.Repeat("a", 50)
	tests := []struct {
		name    string
		storage AnnotationsProgressStorage
		b       body.Body
		id      string
		r       *Record
		want    map[string]any
	}{
		{"default", *NewAnnotationsProgressStorage(), withAnnotations(nil), "create_fn", createRecordValue(),
			annotationsPatch(map[string]any{"kopf.zalando.org/create_fn": createRecord})},
		{"both keys", *NewAnnotationsProgressStorage(), withAnnotations(nil), long, &Record{},
			annotationsPatch(map[string]any{
				KeyV2(DefaultPrefix, long): `{"retries":0,"success":false,"failure":false}`,
				KeyV1(DefaultPrefix, long): `{"retries":0,"success":false,"failure":false}`,
			})},
		{"v1 disabled", AnnotationsProgressStorage{}, withAnnotations(nil), long, &Record{},
			annotationsPatch(map[string]any{KeyV2(DefaultPrefix, long): `{"retries":0,"success":false,"failure":false}`})},
		{"nil record", *NewAnnotationsProgressStorage(), withAnnotations(nil), "create_fn", nil, nil},
		{"custom prefix gets the marker", AnnotationsProgressStorage{Prefix: "my-op.example.com"}, withAnnotations(nil), "fn", &Record{},
			annotationsPatch(map[string]any{
				"my-op.example.com/fn":           `{"retries":0,"success":false,"failure":false}`,
				"my-op.example.com/kopf-managed": "yes",
			})},
		{"marker already in the body", AnnotationsProgressStorage{Prefix: "my-op.example.com"},
			withAnnotations(map[string]any{"my-op.example.com/kopf-managed": "yes"}), "fn", &Record{},
			annotationsPatch(map[string]any{"my-op.example.com/fn": `{"retries":0,"success":false,"failure":false}`})},
		{"kopf.* prefixes get no marker", AnnotationsProgressStorage{Prefix: "kopf.example.com"}, withAnnotations(nil), "fn", &Record{},
			annotationsPatch(map[string]any{"kopf.example.com/fn": `{"retries":0,"success":false,"failure":false}`})},
		{"drs", *NewAnnotationsProgressStorage(), drsBody(), "create_fn", createRecordValue(),
			annotationsPatch(map[string]any{"kopf.zalando.org/create_fn-ofDRS": createRecord})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snapshot := deepCopy(tt.b)
			p := patches.New()
			tt.storage.Store(tt.b, p, tt.id, tt.r)
			assertPatch(t, p, tt.want)
			assertUnchanged(t, tt.b, snapshot)
			if tt.r != nil {
				// What is stored is what is fetched.
				merged := withAnnotations(p["metadata"].(map[string]any)["annotations"].(map[string]any))
				if tt.b.Kind() == "ReplicaSet" {
					merged = drsBody()
					merged["metadata"].(map[string]any)["annotations"] = p["metadata"].(map[string]any)["annotations"]
				}
				got, err := tt.storage.Fetch(merged, tt.id)
				if err != nil || !got.Equal(tt.r) {
					t.Errorf("fetched back %+v, %v", got, err)
				}
			}
		})
	}
}

func TestAnnotationsStoreKeepsMarkerOnce(t *testing.T) {
	s := AnnotationsProgressStorage{Prefix: "my-op.example.com"}
	p := patches.New()
	p.SetAnnotation("my-op.example.com/kopf-managed", ptrStr("already"))
	s.Store(withAnnotations(nil), p, "fn", &Record{})
	if got := p["metadata"].(map[string]any)["annotations"].(map[string]any)["my-op.example.com/kopf-managed"]; got != "already" {
		t.Errorf("marker overwritten: %v", got)
	}
}

func TestAnnotationsPurge(t *testing.T) {
	long := strings.Repeat("a", 50)
	v1Key, v2Key := KeyV1(DefaultPrefix, long), KeyV2(DefaultPrefix, long)
	tests := []struct {
		name    string
		b       body.Body
		pending map[string]any
		id      string
		want    map[string]any
	}{
		{"absent everywhere", withAnnotations(nil), nil, "create_fn", nil},
		{"in the body", withAnnotations(map[string]any{"kopf.zalando.org/create_fn": createRecord}), nil, "create_fn",
			annotationsPatch(map[string]any{"kopf.zalando.org/create_fn": nil})},
		{"null in the body", withAnnotations(map[string]any{"kopf.zalando.org/create_fn": nil}), nil, "create_fn",
			annotationsPatch(map[string]any{"kopf.zalando.org/create_fn": nil})},
		{"only in the patch: dropped with emptied parents",
			withAnnotations(nil), annotationsPatch(map[string]any{"kopf.zalando.org/create_fn": createRecord}), "create_fn", nil},
		{"only in the patch, with siblings",
			withAnnotations(nil), map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{"kopf.zalando.org/create_fn": createRecord, "x": "y"}},
				"spec":     map[string]any{"a": "b"},
			}, "create_fn", map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{"x": "y"}},
				"spec":     map[string]any{"a": "b"},
			}},
		{"in both", withAnnotations(map[string]any{"kopf.zalando.org/create_fn": createRecord}),
			annotationsPatch(map[string]any{"kopf.zalando.org/create_fn": `{"retries":2}`}), "create_fn",
			annotationsPatch(map[string]any{"kopf.zalando.org/create_fn": nil})},
		{"v1 and v2", withAnnotations(map[string]any{v1Key: "{}"}), annotationsPatch(map[string]any{v2Key: "{}"}), long,
			annotationsPatch(map[string]any{v1Key: nil})},
		{"others untouched", withAnnotations(map[string]any{"kopf.zalando.org/other": createRecord}), nil, "create_fn", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snapshot := deepCopy(tt.b)
			p := patches.Patch{}
			if tt.pending != nil {
				p = patches.Patch(deepCopy(tt.pending).(map[string]any))
			}
			NewAnnotationsProgressStorage().Purge(tt.b, p, tt.id)
			assertPatch(t, p, tt.want)
			assertUnchanged(t, tt.b, snapshot)
		})
	}
}

func TestAnnotationsTouch(t *testing.T) {
	tests := []struct {
		name    string
		storage AnnotationsProgressStorage
		b       body.Body
		value   *string
		want    map[string]any
	}{
		{"set when absent", *NewAnnotationsProgressStorage(), withAnnotations(nil), ptrStr("t1"),
			annotationsPatch(map[string]any{"kopf.zalando.org/touch-dummy": "t1"})},
		{"set when different", *NewAnnotationsProgressStorage(), withAnnotations(map[string]any{"kopf.zalando.org/touch-dummy": "t0"}), ptrStr("t1"),
			annotationsPatch(map[string]any{"kopf.zalando.org/touch-dummy": "t1"})},
		{"nothing when same", *NewAnnotationsProgressStorage(), withAnnotations(map[string]any{"kopf.zalando.org/touch-dummy": "t1"}), ptrStr("t1"), nil},
		{"nil when absent: nothing", *NewAnnotationsProgressStorage(), withAnnotations(nil), nil, nil},
		{"nil when present: null", *NewAnnotationsProgressStorage(), withAnnotations(map[string]any{"kopf.zalando.org/touch-dummy": "t0"}), nil,
			annotationsPatch(map[string]any{"kopf.zalando.org/touch-dummy": nil})},
		{"custom touch key and prefix, with marker", AnnotationsProgressStorage{Prefix: "my-op.example.com", TouchKey: "poke"}, withAnnotations(nil), ptrStr("t1"),
			annotationsPatch(map[string]any{"my-op.example.com/poke": "t1", "my-op.example.com/kopf-managed": "yes"})},
		{"drs", *NewAnnotationsProgressStorage(), drsBody(), ptrStr("t1"),
			annotationsPatch(map[string]any{"kopf.zalando.org/touch-dummy-ofDRS": "t1"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := patches.New()
			tt.storage.Touch(tt.b, p, tt.value)
			assertPatch(t, p, tt.want)
		})
	}
}

func TestAnnotationsClear(t *testing.T) {
	b := withAnnotations(map[string]any{
		"kopf.zalando.org/create_fn":                  createRecord,
		"kopf.zalando.org/create_fn.item1":            `{"retries":1}`,
		"kopf.zalando.org/last-handled-configuration": "{\"spec\":{\"a\":1}}\n",
		"kopf.zalando.org/touch-dummy":                `{"retries":1}`,
		"kopf.zalando.org/weird":                      "not json",
		"other.example.com/create_fn":                 createRecord,
		"someannotation":                              "somevalue",
	})
	p := patches.Patch(annotationsPatch(map[string]any{
		"kopf.zalando.org/pending_fn": `{"retries":0,"success":false,"failure":false}`,
		"kopf.zalando.org/create_fn":  `{"retries":2}`,
		"unrelated":                   "value",
	}))
	snapshot := deepCopy(b)
	NewAnnotationsProgressStorage().Clear(b, p)
	assertPatch(t, p, annotationsPatch(map[string]any{
		"kopf.zalando.org/create_fn":       nil,
		"kopf.zalando.org/create_fn.item1": nil,
		"unrelated":                        "value",
	}))
	assertUnchanged(t, b, snapshot)
}

func TestAnnotationsClearDRS(t *testing.T) {
	b := drsBody()
	b["metadata"].(map[string]any)["annotations"] = map[string]any{
		"kopf.zalando.org/create_fn":       createRecord,
		"kopf.zalando.org/create_fn-ofDRS": createRecord,
	}
	p := patches.New()
	NewAnnotationsProgressStorage().Clear(b, p)
	assertPatch(t, p, annotationsPatch(map[string]any{"kopf.zalando.org/create_fn-ofDRS": nil}))
}

func TestAnnotationsClearEssence(t *testing.T) {
	essence := map[string]any{
		"spec": map[string]any{"a": "b"},
		"metadata": map[string]any{
			"labels":      map[string]any{"l": "v"},
			"annotations": map[string]any{"kopf.zalando.org/create_fn": "{}", "x": "y"},
		},
	}
	snapshot := deepCopy(essence)
	got := NewAnnotationsProgressStorage().ClearEssence(essence)
	want := map[string]any{
		"spec":     map[string]any{"a": "b"},
		"metadata": map[string]any{"labels": map[string]any{"l": "v"}, "annotations": map[string]any{"x": "y"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ClearEssence() = %#v", got)
	}
	if !reflect.DeepEqual(essence, snapshot) {
		t.Errorf("the essence was modified")
	}

	got = NewAnnotationsProgressStorage().ClearEssence(map[string]any{
		"spec":     map[string]any{"a": "b"},
		"metadata": map[string]any{"annotations": map[string]any{"kopf.zalando.org/create_fn": "{}"}},
	})
	if want := map[string]any{"spec": map[string]any{"a": "b"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ClearEssence() = %#v, want empty stanzas removed", got)
	}
	if got := NewAnnotationsProgressStorage().ClearEssence(nil); got != nil {
		t.Errorf("ClearEssence(nil) = %#v", got)
	}
}
