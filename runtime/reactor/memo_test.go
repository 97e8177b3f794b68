package reactor

import (
	"testing"

	"github.com/kopf-go/kopf/runtime/kwargs"
)

// TestObjectMemoIsAShallowCopyOfTheOperators checks Kopf's copy.copy of the
// operator's memo per object: the keys set at start are there, the values
// are shared, and what one object's handlers store is not seen elsewhere.
func TestObjectMemoIsAShallowCopyOfTheOperators(t *testing.T) {
	shared := &struct{ n int }{}
	tests := []struct {
		name     string
		base     kwargs.Memo
		wantKeys int
	}{
		{"nil memo: empty", nil, 0},
		{"empty memo", kwargs.Memo{}, 0},
		{"memo with values", kwargs.Memo{"shared": shared, "greeting": "hello"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reactor{Memo: tt.base}
			a := r.memory("ns/a", "uid-a").memo
			b := r.memory("ns/b", "uid-b").memo
			if a == nil || b == nil {
				t.Fatalf("memos are nil: %v, %v", a, b)
			}
			if len(a) != tt.wantKeys || len(b) != tt.wantKeys {
				t.Fatalf("memo keys: %d and %d, want %d", len(a), len(b), tt.wantKeys)
			}
			a["own"] = 1
			if _, ok := b["own"]; ok {
				t.Error("a key set in one object's memo is seen in another's")
			}
			if _, ok := tt.base["own"]; ok {
				t.Error("a key set in an object's memo is seen in the operator's")
			}
			if tt.base["shared"] != nil && (a["shared"] != shared || b["shared"] != shared) {
				t.Error("the operator's values are not shared by the objects' memos")
			}
			if again := r.memory("ns/a", "uid-a").memo; again["own"] != 1 {
				t.Error("an object's memo is not kept between cycles")
			}
			if renewed := r.memory("ns/a", "uid-a2").memo; renewed["own"] != nil {
				t.Error("a recreated object (new uid) keeps the old object's memo")
			}
		})
	}
}
