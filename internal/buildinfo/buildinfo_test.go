package buildinfo

import "testing"

func TestModuleVersion(t *testing.T) {
	tests := []struct{ path, want string }{
		// The module under test is the test binary's main module, at "(devel)".
		{"github.com/kopf-go/kopf", ""},
		// Not linked.
		{"example.com/none", ""},
	}
	for _, tt := range tests {
		if got := ModuleVersion(tt.path); got != tt.want {
			t.Errorf("ModuleVersion(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestIsVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.1.0": true, "v0.1.0-rc.0": true, "v0.0.0-20260101000000-abcdefabcdef+dirty": true,
		"(devel)": false, "": false, "v": false, "vx": false,
	} {
		if got := isVersion(v); got != want {
			t.Errorf("isVersion(%q) = %v, want %v", v, got, want)
		}
	}
}
