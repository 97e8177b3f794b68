package release_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"

	"github.com/kopf-go/kopf/e2e/release"
)

func TestReleaseGoMod(t *testing.T) {
	ours := func(p string) bool { return p == kopfGo || strings.HasPrefix(p, kopfGo+"/") }
	published := map[string]bool{kopfGo: true, kopfGo + "/generator": true}
	tests := []struct {
		name, in, want, err string
	}{{
		name: "replaces of ours dropped, requirements of ours at the version",
		in: "module github.com/kopf-go/kopf/cmd/kopf-gen\n\ngo 1.25.0\n\n" +
			"require (\n\tgithub.com/kopf-go/kopf/generator v0.0.0\n\tgolang.org/x/mod v0.40.0\n)\n\n" +
			"require github.com/kopf-go/kopf v0.0.0 // indirect\n\n" +
			"replace (\n\tgithub.com/kopf-go/kopf => ../../\n\tgithub.com/kopf-go/kopf/generator => ../../generator\n)\n",
		want: "module github.com/kopf-go/kopf/cmd/kopf-gen\n\ngo 1.25.0\n\n" +
			"require (\n\tgithub.com/kopf-go/kopf/generator v0.1.0\n\tgolang.org/x/mod v0.40.0\n)\n\n" +
			"require github.com/kopf-go/kopf v0.1.0 // indirect\n",
	}, {
		name: "nothing of ours: unchanged",
		in:   "module github.com/kopf-go/kopf\n\ngo 1.25.0\n\nrequire golang.org/x/mod v0.40.0\n",
		want: "module github.com/kopf-go/kopf\n\ngo 1.25.0\n\nrequire golang.org/x/mod v0.40.0\n",
	}, {
		name: "a replace of another module stays, and fails",
		in:   "module github.com/kopf-go/kopf\n\ngo 1.25.0\n\nrequire golang.org/x/mod v0.40.0\n\nreplace golang.org/x/mod => ../mod\n",
		err:  "go.mod:7: replace golang.org/x/mod: a released go.mod has no replace directive",
	}, {
		name: "an exclude fails",
		in:   "module github.com/kopf-go/kopf\n\ngo 1.25.0\n\nexclude golang.org/x/mod v0.39.0\n",
		err:  "go.mod:5: exclude golang.org/x/mod@v0.39.0: go install refuses",
	}, {
		name: "a requirement of an unpublished module of ours fails",
		in:   "module github.com/kopf-go/kopf/generator\n\ngo 1.25.0\n\nrequire github.com/kopf-go/kopf/e2e v0.0.0\n\nreplace github.com/kopf-go/kopf/e2e => ../e2e\n",
		err:  "go.mod requires github.com/kopf-go/kopf/e2e, which a release does not publish",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := release.ReleaseGoMod("go.mod", []byte(tt.in), "v0.1.0", ours, published)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestBuildProxy builds the proxy of this checkout and checks it as the go
// command would read it: each module's files in the proxy's layout, a zip
// that x/mod/zip accepts with the released go.mod in it, no file of a
// nested module, and released go.mod files without replace directives.
func TestBuildProxy(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const version = "v0.1.0-rc.0"
	mods, err := release.BuildProxy(t.Context(), root, dir, version)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != len(release.Published()) {
		t.Fatalf("%d modules, want %d", len(mods), len(release.Published()))
	}
	for _, m := range mods {
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			t.Fatal(err)
		}
		at := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if list, err := os.ReadFile(filepath.Join(at, "list")); err != nil || string(list) != version+"\n" {
			t.Errorf("%s: list %q, %v", m.Path, list, err)
		}
		mod, err := os.ReadFile(filepath.Join(at, version+".mod"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.Parse("go.mod", mod, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Replace) > 0 {
			t.Errorf("%s: the released go.mod has replace directives:\n%s", m.Path, mod)
		}
		for _, r := range f.Require {
			if strings.HasPrefix(r.Mod.Path, kopfGo) && r.Mod.Version != version {
				t.Errorf("%s requires %s", m.Path, r.Mod)
			}
		}
		cf, err := zip.CheckZip(module.Version{Path: m.Path, Version: version}, filepath.Join(at, version+".zip"))
		if err != nil {
			t.Fatalf("%s: %v", m.Path, err)
		}
		prefix := m.Path + "@" + version + "/"
		var names []string
		for _, p := range cf.Valid {
			p = strings.TrimPrefix(p, prefix)
			names = append(names, p)
			if m.Dir == "." && (strings.HasPrefix(p, "generator/") || strings.HasPrefix(p, "e2e/") || strings.HasPrefix(p, "examples/")) {
				t.Errorf("the root module's zip holds %s, of a nested module", p)
			}
		}
		if !slices.Contains(names, "go.mod") {
			t.Errorf("%s: the zip has no go.mod", m.Path)
		}
	}
}
