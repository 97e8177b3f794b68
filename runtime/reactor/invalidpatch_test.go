package reactor

import (
	"errors"
	"strings"
	"testing"
)

// The hint about oversized annotations names a setting that operator code
// can reach through the facade.
func TestInvalidPatchHint(t *testing.T) {
	tests := []struct {
		name, cause string
		hinted      bool
	}{
		{"annotations too long", `metadata.annotations: Too long: must have at most 262144 bytes`, true},
		{"another invalid field", `spec.x: Invalid value`, false},
	}
	const hint = "kopf.WithSettings(func(s *kopf.Settings) { s.Persistence.DiffBaseStorage = &kopf.StatusDiffBaseStorage{} })"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := (&invalidPatchError{ref: "ns/name", err: errors.New(tt.cause)}).Error()
			if !strings.HasPrefix(msg, "patching ns/name: "+tt.cause) || strings.Contains(msg, hint) != tt.hinted {
				t.Errorf("the message is %q; want the hint %v", msg, tt.hinted)
			}
		})
	}
}
