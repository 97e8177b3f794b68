package sharding

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestFencePreconditions(t *testing.T) {
	f := &Fence{Identity: "replica-a"}
	tests := []struct {
		name string
		got  func() ([]byte, error)
		want string
	}{
		{"merge patch gets the resourceVersion", func() ([]byte, error) {
			return withResourceVersion([]byte(`{"status":{"x":1},"metadata":{"annotations":{"k":"v"}}}`), "42")
		}, `{"metadata":{"annotations":{"k":"v"},"resourceVersion":"42"},"status":{"x":1}}`},
		{"merge patch without metadata", func() ([]byte, error) {
			return withResourceVersion([]byte(`{"spec":null}`), "7")
		}, `{"metadata":{"resourceVersion":"7"},"spec":null}`},
		{"JSON patch gets a test of the stamp first", func() ([]byte, error) {
			return f.testStamp([]byte(`[{"op":"remove","path":"/metadata/finalizers/0"}]`))
		}, `[{"op":"test","path":"/metadata/annotations/kopf.zalando.org~1shard-owner","value":"replica-a"},{"op":"remove","path":"/metadata/finalizers/0"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			_ = json.Unmarshal(data, &got)
			_ = json.Unmarshal([]byte(tt.want), &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %s, want %s", data, tt.want)
			}
		})
	}
}

func TestFenceKeepsTheNewestOwnVersion(t *testing.T) {
	f := &Fence{Identity: "a"}
	steps := []struct {
		rv, stamp string
		want      string // "" : none known
	}{
		{"10", "a", "10"},
		{"9", "a", "10"}, // an older version arriving late
		{"12", "a", "12"},
		{"13", "b", ""}, // taken over
		{"14", "a", "14"},
	}
	for _, s := range steps {
		f.observe("/p", s.rv, s.stamp)
		got, _ := f.lookup("/p")
		if got != s.want {
			t.Errorf("after %s stamped %s: known %q, want %q", s.rv, s.stamp, got, s.want)
		}
	}
}
