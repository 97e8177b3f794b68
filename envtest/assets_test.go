package envtest_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/envtest"
)

// Assets finds the binaries in $KUBEBUILDER_ASSETS, else in kopf-gen
// envtest's cache, and names the fix when they are missing.
func TestAssets(t *testing.T) {
	full := t.TempDir()
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if err := os.WriteFile(filepath.Join(full, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	half := t.TempDir()
	if err := os.WriteFile(filepath.Join(half, "etcd"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	cached := filepath.Join(cache, "kopf-go", "k8s", envtest.KubernetesVersion+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	tests := []struct {
		name    string
		assets  string // $KUBEBUILDER_ASSETS
		fill    bool   // the cache holds the binaries
		wantDir string
		wantErr string // a fragment of the error; "" for none
	}{
		{name: "KUBEBUILDER_ASSETS", assets: full, wantDir: full},
		{name: "KUBEBUILDER_ASSETS wins over the cache", assets: full, fill: true, wantDir: full},
		{name: "KUBEBUILDER_ASSETS incomplete", assets: half, wantDir: half, wantErr: "kube-apiserver is missing in " + half + " ($KUBEBUILDER_ASSETS)"},
		{name: "the cache", fill: true, wantDir: cached},
		{name: "nothing", wantDir: cached, wantErr: "KUBEBUILDER_ASSETS is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBEBUILDER_ASSETS", tt.assets)
			t.Setenv("XDG_CACHE_HOME", cache) // os.UserCacheDir on Linux
			t.Setenv("HOME", cache)           // and on macOS
			if runtime.GOOS != "linux" {
				t.Skip("the cache directory is set through XDG_CACHE_HOME on Linux only")
			}
			_ = os.RemoveAll(filepath.Join(cache, "kopf-go"))
			if tt.fill {
				if err := os.MkdirAll(cached, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, name := range []string{"etcd", "kube-apiserver"} {
					if err := os.WriteFile(filepath.Join(cached, name), nil, 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			dir, err := envtest.Assets()
			if dir != tt.wantDir {
				t.Errorf("dir = %q, want %q", dir, tt.wantDir)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one with %q", tt.wantErr)
			}
			if !errors.Is(err, envtest.ErrNoAssets) {
				t.Errorf("the error does not wrap ErrNoAssets: %v", err)
			}
			for _, fragment := range []string{tt.wantErr, "kopf-gen@latest envtest", "KUBEBUILDER_ASSETS to the directory it prints"} {
				if !strings.Contains(err.Error(), fragment) {
					t.Errorf("the error does not say %q: %v", fragment, err)
				}
			}
		})
	}
}

// Start fails with Assets' error, and starts nothing, when the binaries are
// missing.
func TestStartWithoutAssets(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	_, err := envtest.StartDetached()
	if !errors.Is(err, envtest.ErrNoAssets) {
		t.Fatalf("StartDetached without binaries: %v, want ErrNoAssets", err)
	}
}
