package kwargs

import (
	"errors"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
)

type example struct {
	Spec struct {
		Field    string `json:"field"`
		Replicas int32  `json:"replicas"`
	} `json:"spec"`
}

func TestDecodeChangingOncePerCycle(t *testing.T) {
	b := body.Body{"spec": map[string]any{"field": "new", "replicas": int64(2)}}
	old := map[string]any{"spec": map[string]any{"field": "old"}}
	now := map[string]any{"spec": map[string]any{"field": "new"}}
	tests := []struct {
		name   string
		shared bool
		same   bool // the second decoding returns the first's objects
	}{
		{"shared: decoded once", true, true},
		{"not shared (built by hand): decoded per call", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kw := &Changing{Base: Base{Body: b}, Old: old, New: now}
			if tt.shared {
				kw.ShareDecoded()
			}
			first, err := DecodeChanging[example](kw)
			if err != nil {
				t.Fatal(err)
			}
			if first.Object.Spec.Field != "new" || first.Object.Spec.Replicas != 2 || first.Old.Spec.Field != "old" || first.New.Spec.Field != "new" {
				t.Fatalf("decoded %+v, old %+v, new %+v", first.Object, first.Old, first.New)
			}
			// A handler's kwargs narrowed to a field: a copy whose Old and
			// New are the field's values. The typed Old and New stay the
			// whole essences when shared.
			narrowed := *kw
			narrowed.Old, narrowed.New = "old", "new"
			second, err := DecodeChanging[example](&narrowed)
			if err != nil {
				t.Fatal(err)
			}
			if got := second.Object == first.Object && second.Old == first.Old && second.New == first.New; got != tt.same {
				t.Errorf("the same objects: %v, want %v", got, tt.same)
			}
			if tt.shared && (second.Old == nil || second.Old.Spec.Field != "old") {
				t.Errorf("narrowed copy: typed Old = %+v, want the whole old essence", second.Old)
			}
			if second.Changing.Old != "old" {
				t.Errorf("the field's old value is %v, want it kept in Changing.Old", second.Changing.Old)
			}
		})
	}
}

func TestDecodeErrorNamesTheField(t *testing.T) {
	type nested struct {
		Spec struct {
			Items []string `json:"items"`
			Sub   struct {
				N int64 `json:"n"`
			} `json:"sub"`
		} `json:"spec"`
	}
	tests := []struct {
		name string
		body body.Body
		want string
	}{
		{"a string for an int", body.Body{"spec": map[string]any{"replicas": "three"}},
			"decoding the object as kwargs.example: field spec.replicas holds a string, not int32 (unrecognized type: int32)"},
		{"an object for a string", body.Body{"spec": map[string]any{"field": map[string]any{"a": "b"}}},
			"decoding the object as kwargs.example: field spec.field holds an object, not string ("},
		{"a string for an object", body.Body{"spec": "flat"},
			"decoding the object as kwargs.example: field spec holds a string, not struct {"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeChanging[example](&Changing{Base: Base{Body: tt.body}})
			var de *DecodeError
			if !errors.As(err, &de) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err = %v (%T), want a *DecodeError starting with %q", err, err, tt.want)
			}
		})
	}
	// Deeper fields, and slices.
	_, err := DecodeChanging[nested](&Changing{Base: Base{Body: body.Body{"spec": map[string]any{"items": []any{"a"}, "sub": map[string]any{"n": "x"}}}}})
	if err == nil || !strings.Contains(err.Error(), "field spec.sub.n holds a string, not int64") {
		t.Errorf("nested: err = %v", err)
	}
	_, err = DecodeChanging[nested](&Changing{Base: Base{Body: body.Body{"spec": map[string]any{"items": "a"}}}})
	if err == nil || !strings.Contains(err.Error(), "field spec.items holds a string, not []string") {
		t.Errorf("slice: err = %v", err)
	}
}

// The change that fixes an object decodes although its old state does
// not: Old is nil, the untyped Old keeps it.
func TestDecodeFixedObject(t *testing.T) {
	bad := map[string]any{"spec": map[string]any{"replicas": "four"}}
	good := map[string]any{"spec": map[string]any{"replicas": int64(4)}}
	kw := &Changing{Base: Base{Body: body.Body(good)}, Old: bad, New: good}
	kw.ShareDecoded()
	got, err := DecodeChanging[example](kw)
	if err != nil || got.Old != nil || got.New == nil || got.New.Spec.Replicas != 4 || got.Changing.Old == nil {
		t.Errorf("got %+v, %v; want Old nil, New decoded, no error", got, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	kw := &Changing{Base: Base{Body: body.Body{"spec": map[string]any{"replicas": "three"}}}}
	kw.ShareDecoded()
	for range 2 { // the error is cached too
		if _, err := DecodeChanging[example](kw); err == nil || !strings.Contains(err.Error(), "decoding the object as kwargs.example") {
			t.Errorf("err = %v", err)
		}
	}
	ev := &Event{Base: Base{Body: body.Body{"spec": map[string]any{"field": "x"}}}}
	ev.ShareDecoded()
	a, errA := DecodeEvent[example](ev)
	b, errB := DecodeEvent[example](ev)
	if errA != nil || errB != nil || a.Object != b.Object || a.Object.Spec.Field != "x" {
		t.Errorf("events: %v %v %+v %+v", errA, errB, a.Object, b.Object)
	}
	// No body, no object, no error (kwargs built by hand).
	if got, err := DecodeChanging[example](&Changing{}); err != nil || got.Object != nil || got.Old != nil {
		t.Errorf("empty: %+v, %v", got, err)
	}
}
