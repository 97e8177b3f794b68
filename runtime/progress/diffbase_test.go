package progress

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/patches"
)

// The literal example of kopf-wire-format.md ("Diff-base essence").
const exampleDiffBase = `{"spec":{"duration":"1m","field":"value","items":["item1","item2"]},"metadata":{"labels":{"somelabel":"somevalue"},"annotations":{"someannotation":"somevalue"}}}` + "\n"

func TestNewAnnotationsDiffBaseStorage(t *testing.T) {
	s := NewAnnotationsDiffBaseStorage()
	if want := (&AnnotationsDiffBaseStorage{Prefix: "kopf.zalando.org", Key: "last-handled-configuration", V1: true}); !reflect.DeepEqual(s, want) {
		t.Errorf("defaults = %+v", s)
	}
	if got := s.Keys(nil); !reflect.DeepEqual(got, []string{"kopf.zalando.org/last-handled-configuration"}) {
		t.Errorf("Keys() = %q", got)
	}
}

func TestAnnotationsDiffBaseWireExample(t *testing.T) {
	s := NewAnnotationsDiffBaseStorage()
	b := exampleBody()
	essence := s.Build(b, nil)
	p := patches.New()
	s.Store(b, p, essence)

	annotations := p["metadata"].(map[string]any)["annotations"].(map[string]any)
	if len(annotations) != 1 {
		t.Fatalf("unexpected annotations: %#v", annotations)
	}
	stored, ok := annotations["kopf.zalando.org/last-handled-configuration"].(string)
	if !ok || !strings.HasSuffix(stored, "}\n") || strings.Contains(stored, " ") {
		t.Fatalf("stored %q", stored)
	}
	if stored != exampleDiffBase {
		t.Errorf("stored\n  %s\nwant (byte for byte)\n  %s", stored, exampleDiffBase)
	}

	// Kopf's value, as found on an object, decodes to the built essence.
	b["metadata"].(map[string]any)["annotations"].(map[string]any)["kopf.zalando.org/last-handled-configuration"] = exampleDiffBase
	fetched, err := s.Fetch(b)
	if err != nil || !diffs.Equal(fetched, essence) {
		t.Errorf("Fetch() = %#v, %v; want %#v", fetched, err, essence)
	}
	if d := diffs.Compute(fetched, s.Build(b, nil)); len(d) != 0 {
		t.Errorf("diff after storing = %s", d)
	}
}

func TestAnnotationsDiffBaseFetch(t *testing.T) {
	key := "kopf.zalando.org/last-handled-configuration"
	tests := []struct {
		name    string
		storage AnnotationsDiffBaseStorage
		b       body.Body
		want    map[string]any
		wantErr bool
	}{
		{"absent", *NewAnnotationsDiffBaseStorage(), withAnnotations(nil), nil, false},
		{"present", *NewAnnotationsDiffBaseStorage(), withAnnotations(map[string]any{key: "{\"spec\":{\"n\":1,\"f\":1.5,\"big\":9007199254740993}}\n"}),
			map[string]any{"spec": map[string]any{"n": int64(1), "f": 1.5, "big": int64(9007199254740993)}}, false},
		{"json null is absent", *NewAnnotationsDiffBaseStorage(), withAnnotations(map[string]any{key: "null"}), nil, false},
		{"empty object", *NewAnnotationsDiffBaseStorage(), withAnnotations(map[string]any{key: "{}\n"}), map[string]any{}, false},
		{"malformed", *NewAnnotationsDiffBaseStorage(), withAnnotations(map[string]any{key: "{\"spec\":"}), nil, true},
		{"trailing garbage", *NewAnnotationsDiffBaseStorage(), withAnnotations(map[string]any{key: "{} {}"}), nil, true},
		{"not an object", *NewAnnotationsDiffBaseStorage(), withAnnotations(map[string]any{key: "[1]"}), nil, true},
		{"not a string", *NewAnnotationsDiffBaseStorage(), withAnnotations(map[string]any{key: map[string]any{}}), nil, true},
		{"custom key", AnnotationsDiffBaseStorage{Prefix: "my-op.example.com", Key: "base"},
			withAnnotations(map[string]any{key: `{"a":1}`, "my-op.example.com/base": `{"b":2}`}), map[string]any{"b": int64(2)}, false},
		{"drs", *NewAnnotationsDiffBaseStorage(), func() body.Body {
			b := drsBody()
			b["metadata"].(map[string]any)["annotations"] = map[string]any{key: `{"a":1}`, key + "-ofDRS": `{"b":2}`}
			return b
		}(), map[string]any{"b": int64(2)}, false},
		{"v1 key of a long name", AnnotationsDiffBaseStorage{Key: strings.Repeat("k", 50), V1: true},
			withAnnotations(map[string]any{KeyV1(DefaultPrefix, strings.Repeat("k", 50)): `{"v":"1"}`}), map[string]any{"v": "1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.storage.Fetch(tt.b)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Fetch() error = %v, wantErr %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fetch() = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestAnnotationsDiffBaseStore(t *testing.T) {
	essence := map[string]any{"spec": map[string]any{"msg": "<é>&", "n": int64(1)}}
	const encoded = "{\"spec\":{\"msg\":\"<\\u00e9>&\",\"n\":1}}\n"
	long := strings.Repeat("k", 50)
	tests := []struct {
		name    string
		storage AnnotationsDiffBaseStorage
		b       body.Body
		want    map[string]any
	}{
		{"default", *NewAnnotationsDiffBaseStorage(), withAnnotations(nil),
			annotationsPatch(map[string]any{"kopf.zalando.org/last-handled-configuration": encoded})},
		{"drs", *NewAnnotationsDiffBaseStorage(), drsBody(),
			annotationsPatch(map[string]any{"kopf.zalando.org/last-handled-configuration-ofDRS": encoded})},
		{"custom prefix with marker", AnnotationsDiffBaseStorage{Prefix: "my-op.example.com"}, withAnnotations(nil),
			annotationsPatch(map[string]any{"my-op.example.com/last-handled-configuration": encoded, "my-op.example.com/kopf-managed": "yes"})},
		{"v1 and v2 keys", AnnotationsDiffBaseStorage{Key: long, V1: true}, withAnnotations(nil),
			annotationsPatch(map[string]any{KeyV2(DefaultPrefix, long): encoded, KeyV1(DefaultPrefix, long): encoded})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := patches.New()
			tt.storage.Store(tt.b, p, essence)
			assertPatch(t, p, tt.want)
		})
	}

	p := patches.New()
	NewAnnotationsDiffBaseStorage().Store(withAnnotations(nil), p, map[string]any{"bad": func() {}})
	assertPatch(t, p, nil)
}

func TestAnnotationsDiffBaseBuild(t *testing.T) {
	b := exampleBody()
	ann := b["metadata"].(map[string]any)["annotations"].(map[string]any)
	ann["my-op.example.com/base"] = "{}"
	ann["my-op.example.com/base-extra"] = "kept"

	s := AnnotationsDiffBaseStorage{Prefix: "my-op.example.com", Key: "base", IgnoredFields: [][]string{{"spec", "duration"}}}
	got := s.Build(b, [][]string{{"status", "create_fn"}})
	want := map[string]any{
		"spec": map[string]any{"field": "value", "items": []any{"item1", "item2"}},
		"metadata": map[string]any{
			"labels":      map[string]any{"somelabel": "somevalue"},
			"annotations": map[string]any{"someannotation": "somevalue", "my-op.example.com/base-extra": "kept"},
		},
		"status": map[string]any{"create_fn": map[string]any{"message": "hello"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Build() =\n  %#v\nwant\n  %#v", got, want)
	}

	// Once marked, the whole prefix is excluded.
	ann["my-op.example.com/kopf-managed"] = "yes"
	got = s.Build(b, nil)
	if _, ok := resolve(got, "metadata", "annotations", "my-op.example.com/base-extra"); ok {
		t.Errorf("marked prefix not excluded: %#v", got)
	}

	// Removing the own key may leave empty stanzas, which are removed.
	got = AnnotationsDiffBaseStorage{Prefix: "my-op.example.com", Key: "base"}.Build(body.Body{
		"metadata": map[string]any{"annotations": map[string]any{"my-op.example.com/base": "{}"}},
		"spec":     map[string]any{"a": "b"},
	}, nil)
	if want := map[string]any{"spec": map[string]any{"a": "b"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Build() = %#v", got)
	}
}

func TestStatusDiffBaseStorage(t *testing.T) {
	s := NewStatusDiffBaseStorage()
	if !reflect.DeepEqual(s.Field, []string{"status", "kopf", "last-handled-configuration"}) {
		t.Errorf("default field = %q", s.Field)
	}

	b := exampleBody()
	essence := s.Build(b, [][]string{{"status"}})
	if _, ok := essence["status"]; !ok {
		t.Fatalf("extra status not kept: %#v", essence)
	}
	p := patches.New()
	s.Store(b, p, map[string]any{"spec": map[string]any{"a": "b"}})
	assertPatch(t, p, map[string]any{"status": map[string]any{"kopf": map[string]any{"last-handled-configuration": `{"spec":{"a":"b"}}`}}})

	// Its own field is never part of the essence.
	b["status"].(map[string]any)["kopf"] = map[string]any{"last-handled-configuration": `{"spec":{"a":"b"}}`}
	essence = s.Build(b, [][]string{{"status"}})
	if _, ok := resolve(essence, "status", "kopf"); ok {
		t.Errorf("own field in the essence: %#v", essence)
	}

	tests := []struct {
		name    string
		status  any
		want    map[string]any
		wantErr bool
	}{
		{"absent", map[string]any{}, nil, false},
		{"present", map[string]any{"kopf": map[string]any{"last-handled-configuration": `{"spec":{"a":"b"}}`}},
			map[string]any{"spec": map[string]any{"a": "b"}}, false},
		{"null", map[string]any{"kopf": map[string]any{"last-handled-configuration": nil}}, nil, false},
		{"not a string", map[string]any{"kopf": map[string]any{"last-handled-configuration": map[string]any{}}}, nil, true},
		{"malformed", map[string]any{"kopf": map[string]any{"last-handled-configuration": "{"}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := withAnnotations(nil)
			b["status"] = tt.status
			got, err := StatusDiffBaseStorage{}.Fetch(b)
			if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fetch() = %#v, %v; want %#v, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestMultiDiffBaseStorage(t *testing.T) {
	s := MultiDiffBaseStorage{Storages: []DiffBaseStorage{
		StatusDiffBaseStorage{Field: []string{"status", "diff-base"}},
		NewAnnotationsDiffBaseStorage(),
	}}
	b := exampleBody()
	b["status"].(map[string]any)["diff-base"] = `{"from":"status"}`
	b["metadata"].(map[string]any)["annotations"].(map[string]any)["kopf.zalando.org/last-handled-configuration"] = `{"from":"annotations"}`

	got, err := s.Fetch(b)
	if err != nil || !reflect.DeepEqual(got, map[string]any{"from": "status"}) {
		t.Errorf("Fetch() = %#v, %v", got, err)
	}
	delete(b["status"].(map[string]any), "diff-base")
	got, err = s.Fetch(b)
	if err != nil || !reflect.DeepEqual(got, map[string]any{"from": "annotations"}) {
		t.Errorf("Fetch() = %#v, %v", got, err)
	}

	essence := s.Build(b, [][]string{{"status"}})
	want := NewAnnotationsDiffBaseStorage().Build(b, [][]string{{"status"}})
	if !reflect.DeepEqual(essence, want) {
		t.Errorf("Build() =\n  %#v\nwant\n  %#v", essence, want)
	}

	p := patches.New()
	s.Store(b, p, map[string]any{"a": "b"})
	assertPatch(t, p, map[string]any{
		"status":   map[string]any{"diff-base": `{"a":"b"}`},
		"metadata": map[string]any{"annotations": map[string]any{"kopf.zalando.org/last-handled-configuration": "{\"a\":\"b\"}\n"}},
	})
}
