// Package release rehearses a release of kopf-go: it builds the modules that
// a release publishes, at one version, into a file-based module proxy, as
// the Go module proxy would serve them once the tags are pushed
// (docs/releasing.md).
//
// A release tags the root module (github.com/kopf-go/kopf, the runtime)
// vX.Y.Z, then generator/vX.Y.Z, cmd/kopf-gen/vX.Y.Z and envtest/vX.Y.Z, from
// commits whose go.mod files are those that ReleaseGoMod writes: no replace
// directive, and every requirement of one of these modules at the release's
// version. BuildProxy makes the module zips of that tree with
// golang.org/x/mod/zip (the go command's own implementation), from the files
// that git tracks or would track (git ls-files --cached --others
// --exclude-standard: the working tree as the next commit would have it),
// and writes them with their .info and .mod files and the list of versions
// in the GOPROXY protocol's layout. A go command with
// GOPROXY=file://DIR,<its proxy> and GONOSUMDB=github.com/kopf-go/kopf then
// resolves kopf-go's modules from DIR and everything else as usual.
package release

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// Published lists the directories, relative to the repository's root, of
// the modules that a release publishes: the runtime (the root), the
// generator, kopf-gen and envtest. e2e/, examples/ and bench/ are not
// published.
func Published() []string { return []string{".", "generator", "cmd/kopf-gen", "envtest"} }

// Module is one published module of a release.
type Module struct {
	// Dir is its directory relative to the repository's root, "." for the
	// root.
	Dir string
	// Path is its module path, as its go.mod declares it.
	Path string
	// GoMod is its go.mod as released (ReleaseGoMod).
	GoMod []byte
	// Files are the files of its zip, paths relative to Dir; files of
	// nested modules are among them and left out by zip.Create.
	Files []zip.File
}

// BuildProxy writes the modules of Published, from the repository at root,
// at version into dir in the GOPROXY protocol's layout
// (<escaped path>/@v/list, <version>.info, .mod, .zip), dated at the
// time of root's HEAD commit. It returns the modules it wrote.
func BuildProxy(ctx context.Context, root, dir, version string) ([]Module, error) {
	if module.CanonicalVersion(version) != version {
		return nil, fmt.Errorf("release version %q is not a canonical module version such as v0.1.0", version)
	}
	files, err := trackedFiles(ctx, root)
	if err != nil {
		return nil, err
	}
	mods, err := Modules(root, files, version)
	if err != nil {
		return nil, err
	}
	date, err := commitTime(ctx, root)
	if err != nil {
		return nil, err
	}
	for _, m := range mods {
		if err := writeModule(dir, m, version, date); err != nil {
			return nil, fmt.Errorf("module %s: %w", m.Path, err)
		}
	}
	return mods, nil
}

// Modules reads the published modules from root: for each, its released
// go.mod and its files among files (slash paths relative to root).
func Modules(root string, files []string, version string) ([]Module, error) {
	var mods []Module
	for _, d := range Published() {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(d), "go.mod"))
		if err != nil {
			return nil, err
		}
		mods = append(mods, Module{Dir: d, Path: modfile.ModulePath(data), GoMod: data})
	}
	ours := func(p string) bool { return p == mods[0].Path || strings.HasPrefix(p, mods[0].Path+"/") }
	published := map[string]bool{}
	for _, m := range mods {
		published[m.Path] = true
	}
	for i, m := range mods {
		gomod, err := ReleaseGoMod(path.Join(m.Dir, "go.mod"), m.GoMod, version, ours, published)
		if err != nil {
			return nil, err
		}
		mods[i].GoMod = gomod
		mods[i].Files = moduleFiles(root, m.Dir, files, gomod)
	}
	return mods, nil
}

// ReleaseGoMod rewrites the go.mod named name (for messages) as a release
// commits it: the replace directives of kopf-go's modules (those for which
// ours is true) removed, and every requirement of one of them set to
// version. It fails if a requirement of ours is not published, or if any
// replace or exclude directive remains: go install refuses a module with
// one (kopf-gen's), and dependents ignore them (the others'), so what the
// module was tested with would not be what users get.
func ReleaseGoMod(name string, data []byte, version string, ours func(string) bool, published map[string]bool) ([]byte, error) {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, err
	}
	for _, r := range f.Replace {
		if ours(r.Old.Path) {
			if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return nil, err
			}
		}
	}
	var errs []error
	for _, r := range f.Require {
		if !ours(r.Mod.Path) {
			continue
		}
		if !published[r.Mod.Path] {
			errs = append(errs, fmt.Errorf("%s requires %s, which a release does not publish", name, r.Mod.Path))
			continue
		}
		if err := f.AddRequire(r.Mod.Path, version); err != nil {
			return nil, err
		}
	}
	f.Cleanup()
	for _, r := range f.Replace {
		errs = append(errs, fmt.Errorf("%s:%d: replace %s: a released go.mod has no replace directive", name, r.Syntax.Start.Line, r.Old.Path))
	}
	for _, x := range f.Exclude {
		errs = append(errs, fmt.Errorf("%s:%d: exclude %s: go install refuses a module with an exclude directive", name, x.Syntax.Start.Line, x.Mod))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return modfile.Format(f.Syntax), nil
}

// trackedFiles lists the files of the repository at root as the next
// commit would have them: tracked or untracked and not ignored, and present
// in the working tree.
func trackedFiles(ctx context.Context, root string) ([]string, error) {
	out, err := gitOutput(ctx, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	var files []string
	for p := range strings.SplitSeq(strings.TrimRight(out, "\x00"), "\x00") {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("git ls-files lists no file in %s", root)
	}
	return files, nil
}

// commitTime is the commit time of root's HEAD, the time of a tag on it.
func commitTime(ctx context.Context, root string) (time.Time, error) {
	out, err := gitOutput(ctx, root, "log", "-1", "--format=%cI")
	if err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339, strings.TrimSpace(out))
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return string(out), nil
}

// moduleFiles are the files under dir among files, as zip.Files relative
// to dir; go.mod's content is gomod.
func moduleFiles(root, dir string, files []string, gomod []byte) []zip.File {
	var out []zip.File
	for _, p := range files {
		rel := p
		if dir != "." {
			var ok bool
			if rel, ok = strings.CutPrefix(p, dir+"/"); !ok {
				continue
			}
		}
		if rel == "go.mod" {
			out = append(out, dataFile{name: rel, data: gomod})
			continue
		}
		out = append(out, diskFile{name: rel, path: filepath.Join(root, filepath.FromSlash(p))})
	}
	return out
}

// writeModule writes m's list, .info, .mod and .zip files into dir.
func writeModule(dir string, m Module, version string, date time.Time) error {
	escPath, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	at := filepath.Join(dir, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	var z bytes.Buffer
	if err := zip.Create(&z, module.Version{Path: m.Path, Version: version}, m.Files); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, date.UTC()})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"list":               []byte(version + "\n"),
		escVersion + ".info": info,
		escVersion + ".mod":  m.GoMod,
		escVersion + ".zip":  z.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// diskFile is a file of the working tree.
type diskFile struct{ name, path string }

func (f diskFile) Path() string                 { return f.name }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.path) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }

// dataFile is a file whose content is given: a rewritten go.mod.
type dataFile struct {
	name string
	data []byte
}

func (f dataFile) Path() string                 { return f.name }
func (f dataFile) Lstat() (os.FileInfo, error)  { return dataInfo{f}, nil }
func (f dataFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type dataInfo struct{ f dataFile }

func (i dataInfo) Name() string       { return path.Base(i.f.name) }
func (i dataInfo) Size() int64        { return int64(len(i.f.data)) }
func (i dataInfo) Mode() fs.FileMode  { return 0o644 }
func (i dataInfo) ModTime() time.Time { return time.Time{} }
func (i dataInfo) IsDir() bool        { return false }
func (i dataInfo) Sys() any           { return nil }
