package kwargs

import (
	"context"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
)

func TestDecodeAdmission(t *testing.T) {
	newObj := body.Body{"spec": map[string]any{"field": "new", "replicas": int64(3)}}
	oldObj := body.Body{"spec": map[string]any{"field": "old"}}
	tests := []struct {
		name     string
		old, new body.Body
		shared   bool
		wantOld  string // "" means no old object
		wantNew  string
		same     bool // a second decoding returns the first's objects
	}{
		{"create, shared", nil, newObj, true, "", "new", true},
		{"update, shared", oldObj, newObj, true, "old", "new", true},
		{"update, by hand", oldObj, newObj, false, "old", "new", false},
		{"delete", oldObj, nil, false, "old", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.new
			if b == nil {
				b = tt.old
			}
			kw := &Admission{Base: Base{Body: b}, Old: tt.old, New: tt.new}
			if tt.shared {
				kw.ShareDecoded()
			}
			got, err := DecodeAdmission[example](kw)
			if err != nil {
				t.Fatal(err)
			}
			if got.Object == nil {
				t.Fatal("no object decoded")
			}
			if (got.Old == nil) != (tt.wantOld == "") || (got.Old != nil && got.Old.Spec.Field != tt.wantOld) {
				t.Errorf("Old = %+v, want field %q", got.Old, tt.wantOld)
			}
			if (got.New == nil) != (tt.wantNew == "") || (got.New != nil && got.New.Spec.Field != tt.wantNew) {
				t.Errorf("New = %+v, want field %q", got.New, tt.wantNew)
			}
			again, err := DecodeAdmission[example](kw)
			if err != nil {
				t.Fatal(err)
			}
			if same := again.Object == got.Object; same != tt.same {
				t.Errorf("the same object decoded twice: %v, want %v", same, tt.same)
			}
		})
	}
}

func TestDecodeAdmissionError(t *testing.T) {
	kw := &Admission{Base: Base{Body: body.Body{"spec": "not an object"}}}
	if _, err := DecodeAdmission[example](kw); err == nil {
		t.Fatal("a body that does not decode: no error")
	}
}

func TestAdmissionWarn(t *testing.T) {
	var warnings []string
	kw := Admission{Warnings: &warnings}
	copied := kw // handlers get copies: the warnings are shared
	copied.Warn("one")
	kw.Warn("two")
	if len(warnings) != 2 || warnings[0] != "one" || warnings[1] != "two" {
		t.Errorf("warnings = %q, want [one two]", warnings)
	}
	Admission{}.Warn("nowhere") // no list: no panic
}

// The kwargs of an admission handler in a package with indices embed
// Admission (or TypedAdmission[T]) and the indices: WithIndicesEvent
// fills them.
func TestAdmissionWithIndices(t *testing.T) {
	type withIndices struct {
		Admission
		Indices string
	}
	fn := WithIndicesEvent[Admission](withIndices{Indices: "idx"}, func(_ context.Context, kw withIndices) error {
		if kw.Indices != "idx" || kw.Operation != "CREATE" {
			t.Errorf("kwargs: %q, %q", kw.Indices, kw.Operation)
		}
		return nil
	})
	if err := fn(context.Background(), Admission{Operation: "CREATE"}); err != nil {
		t.Fatal(err)
	}
	type typedWithIndices struct {
		TypedAdmission[example]
		Indices string
	}
	typed := WithIndicesEvent[TypedAdmission[example]](typedWithIndices{Indices: "idx"}, func(_ context.Context, kw typedWithIndices) error {
		if kw.Indices != "idx" || kw.Object == nil {
			t.Errorf("typed kwargs: %q, %v", kw.Indices, kw.Object)
		}
		return nil
	})
	if err := typed(context.Background(), TypedAdmission[example]{Object: &example{}}); err != nil {
		t.Fatal(err)
	}
}
