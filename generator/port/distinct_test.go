package port

import (
	"reflect"
	"testing"
)

// TestDistinctIDs: stacked decorators keep Kopf's id where kopf-gen
// registers them under one id (equal options, or changing handlers with
// other options and no cause in common), and get a distinct one otherwise.
func TestDistinctIDs(t *testing.T) {
	res := &resourceRef{group: "example.com", version: "v1", name: "widgets"}
	m := func(name string, args ...string) marker {
		return marker{name: name, args: append([]string{"example.com/v1/widgets"}, args...), resource: res}
	}
	for _, tt := range []struct {
		name      string
		ms        []marker // in Kopf's order
		wantArgs  [][]string
		wantNotes int
	}{
		{"equal options", []marker{m("on.resume"), m("on.create")},
			[][]string{{"example.com/v1/widgets"}, {"example.com/v1/widgets"}}, 0},
		{"other options, other causes", []marker{m("on.resume", "deleted=true"), m("on.create", "retries=3")},
			[][]string{{"example.com/v1/widgets", "deleted=true"}, {"example.com/v1/widgets", "retries=3"}}, 0},
		{"explicit id, other causes", []marker{m("on.update", "id=sync"), m("on.create", "id=sync", "retries=2")},
			[][]string{{"example.com/v1/widgets", "id=sync"}, {"example.com/v1/widgets", "id=sync", "retries=2"}}, 0},
		{"a cause in common", []marker{m("on.update", "labels={a: b}"), m("on.update", "labels={c: d}")},
			[][]string{{"example.com/v1/widgets", "labels={a: b}"}, {"example.com/v1/widgets", "id=fn/update", "labels={c: d}"}}, 1},
		{"a field's id is another", []marker{m("on.update", "labels={a: b}"), m("on.field", "field=spec.x")},
			[][]string{{"example.com/v1/widgets", "labels={a: b}"}, {"example.com/v1/widgets", "field=spec.x"}}, 0},
		{"timers", []marker{m("timer", "interval=1"), m("timer", "interval=2")},
			[][]string{{"example.com/v1/widgets", "interval=1"}, {"example.com/v1/widgets", "id=fn/timer", "interval=2"}}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			notes := distinctIDs(tt.ms, "Fn")
			var args [][]string
			for _, m := range tt.ms {
				args = append(args, m.args)
			}
			if !reflect.DeepEqual(args, tt.wantArgs) || len(notes) != tt.wantNotes {
				t.Errorf("distinctIDs: markers %q, notes %q; want %q and %d notes", args, notes, tt.wantArgs, tt.wantNotes)
			}
		})
	}
}
