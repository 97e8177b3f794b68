package kwargs

import (
	"context"
	"testing"
)

// indices stands for a package's generated Indices struct.
type indices struct{ Count int }

// The shapes of generated kwargs structs in a package with indices.
type (
	changingKw struct {
		Changing
		indices
	}
	typedTimerKw struct {
		TypedTimer[struct{ Name string }]
		indices
	}
	eventKw struct {
		Event
		indices
	}
)

func TestWithIndices(t *testing.T) {
	proto := changingKw{indices: indices{Count: 3}}
	fn := WithIndices[Changing](proto, func(_ context.Context, kw changingKw) (any, error) {
		return []any{kw.Name, kw.Reason, kw.Count}, nil
	})
	got, _ := fn(t.Context(), Changing{Base: Base{Name: "a"}, Reason: "create"})
	if want := []any{"a", "create", 3}; got.([]any)[0] != want[0] || got.([]any)[2] != want[2] {
		t.Errorf("the handler saw %v, want %v", got, want)
	}

	// Typed kwargs: the typed form is set, not only its body-only part.
	typed := WithIndices[TypedTimer[struct{ Name string }]](typedTimerKw{indices: indices{Count: 5}}, func(_ context.Context, kw typedTimerKw) (any, error) {
		return kw.Object.Name + "/" + kw.Timer.Name, nil
	})
	obj := &struct{ Name string }{"decoded"}
	got, _ = typed(t.Context(), TypedTimer[struct{ Name string }]{Timer: Timer{Base: Base{Name: "body"}}, Object: obj})
	if got != "decoded/body" {
		t.Errorf("the typed handler saw %v", got)
	}

	ev := WithIndicesEvent[Event](eventKw{indices: indices{Count: 7}}, func(_ context.Context, kw eventKw) error {
		if kw.Count != 7 || kw.Type != "ADDED" {
			t.Errorf("the event handler saw %+v", kw)
		}
		return nil
	})
	_ = ev(t.Context(), Event{Type: "ADDED"})

	when := WithIndicesWhen[Changing](proto, func(kw changingKw) bool { return kw.Count == 3 && kw.Name == "b" })
	if !when(Changing{Base: Base{Name: "b"}}) {
		t.Error("the when= callback did not see its kwargs and indices")
	}
	// Each call gets its own copy: the proto is never changed.
	if proto.Name != "" {
		t.Errorf("the proto was changed: %+v", proto)
	}
}
