package registry

import (
	"context"
	"errors"
	"testing"
)

func TestAnyResult(t *testing.T) {
	type greeting struct{ Message string }
	boom := errors.New("boom")
	for _, tt := range []struct {
		name    string
		fn      func(context.Context, int) (any, error)
		want    any
		wantErr error
	}{
		{"an int", AnyResult(func(context.Context, int) (int, error) { return 3, nil }), 3, nil},
		{"a pointer", AnyResult(func(context.Context, int) (*greeting, error) { return &greeting{"hi"}, nil }), &greeting{"hi"}, nil},
		{"a nil pointer is no result", AnyResult(func(context.Context, int) (*greeting, error) { return nil, boom }), nil, boom},
		{"a nil map is no result", AnyResult(func(context.Context, int) (map[string]int, error) { return nil, nil }), nil, nil},
		{"a nil interface is no result", AnyResult(func(context.Context, int) (error, error) { return nil, nil }), nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(context.Background(), 0)
			if g, ok := got.(*greeting); ok && g != nil {
				got = *g
				tt.want = *tt.want.(*greeting)
			}
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("got %#v, %v; want %#v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
