package admission

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorCode(t *testing.T) {
	tests := []struct {
		err  *Error
		want int
	}{
		{NewError("bad", 0), 500},
		{NewError("bad", 400), 400},
		{&Error{Message: "x"}, 500},
	}
	for _, tt := range tests {
		if got := tt.err.StatusCode(); got != tt.want {
			t.Errorf("%v: code %d, want %d", tt.err, got, tt.want)
		}
	}
	var target *Error
	if wrapped := fmt.Errorf("checking: %w", NewError("no", 403)); !errors.As(wrapped, &target) || target.StatusCode() != 403 {
		t.Errorf("a wrapped Error is not found: %v", target)
	}
}
