package kwargs

import (
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
