package generator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kopf-go/kopf/generator/emit"
	"github.com/kopf-go/kopf/generator/load"
	"github.com/kopf-go/kopf/generator/manifests"
	"github.com/kopf-go/kopf/generator/model"
)

// RoleFile and CRDDir are where manifests go, under Options.Manifests.
const (
	RoleFile = "rbac/role.yaml"
	CRDDir   = "crd"
)

// extras plans the manifests and DeepCopy files that the options ask for.
func extras(ctx context.Context, opts Options, pkgs []*load.Package, models []*model.Package) ([]File, error) {
	base := opts.Dir
	if base == "" {
		base = "."
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	var (
		files []File
		errs  scanner.ErrorList
	)
	keep := func(f File, ok bool, err error) error {
		var list scanner.ErrorList
		switch {
		case errors.As(err, &list):
			errs = append(errs, list...)
		case err != nil:
			return err
		case ok:
			files = append(files, f)
		}
		return nil
	}

	var req manifests.CodeRequest
	req.Dir, req.Version = opts.Dir, Version
	dir := ""
	if opts.Manifests != "" {
		dir = opts.Manifests
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(base, dir)
		}
		name := opts.RoleName
		if name == "" {
			module := ""
			for _, p := range pkgs {
				if p.Module != "" {
					module = p.Module
					break
				}
			}
			name = manifests.DefaultRoleName(module)
		}
		role, err := manifests.Role(models, manifests.RoleOptions{Name: name, Peering: opts.Peering, Version: Version})
		if err := keep(File{}, false, err); err != nil {
			return nil, err
		}
		if role != nil {
			if err := keep(planExtra(filepath.Join(dir, filepath.FromSlash(RoleFile)), role, isGeneratedYAML)); err != nil {
				return nil, err
			}
		}
		webhooks, err := planWebhooks(dir, name, models)
		if err != nil {
			return nil, err
		}
		for _, f := range webhooks {
			if err := keep(f.File, f.ok, f.err); err != nil {
				return nil, err
			}
		}
		for _, m := range models {
			req.Resources = append(req.Resources, m.Resources...)
		}
	}
	if opts.DeepCopy {
		for _, p := range pkgs {
			if !hasDeepCopyMarkers(p) {
				continue
			}
			asts := make([]*ast.File, len(p.Files))
			for i, f := range p.Files {
				asts[i] = f.AST
			}
			// controller-tools would fail on what this finds, or panic.
			if bad := manifests.CheckDeepCopy(p.Fset, asts); len(bad) > 0 {
				errs = append(errs, bad...)
				continue
			}
			req.DeepCopy = append(req.DeepCopy, p.PkgPath)
		}
	}
	code, err := manifests.Code(ctx, req)
	if err := keep(File{}, false, err); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, dedupe(errs)
	}

	if opts.Manifests != "" {
		crdDir := filepath.Join(dir, CRDDir)
		names := make([]string, 0, len(code.CRDs))
		for name := range code.CRDs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if err := keep(planExtra(filepath.Join(crdDir, name), code.CRDs[name], isGeneratedYAML)); err != nil {
				return nil, err
			}
		}
		// Generated CRDs that nothing produces any more are orphans.
		entries, err := os.ReadDir(crdDir)
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("listing %s: %w", crdDir, err)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") || code.CRDs[e.Name()] != nil {
				continue
			}
			if err := keep(planOrphan(filepath.Join(crdDir, e.Name()), isGeneratedYAML)); err != nil {
				return nil, err
			}
		}
	}
	if opts.DeepCopy {
		for _, p := range pkgs {
			path := filepath.Join(p.Dir, manifests.DeepCopyFileName)
			if want := code.DeepCopy[p.Dir]; want != nil {
				want, err := dropRedundantImportNames(want, p)
				if err != nil {
					return nil, fmt.Errorf("formatting %s: %w", path, err)
				}
				if err := keep(planExtra(path, want, IsGenerated)); err != nil {
					return nil, err
				}
				continue
			}
			if err := keep(planOrphan(path, isOurs)); err != nil {
				return nil, err
			}
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, dedupe(errs)
	}
	return files, nil
}

// planExtra plans a generated file, refusing to overwrite a file that is
// not marked as generated.
func planExtra(path string, want []byte, generated func([]byte) bool) (File, bool, error) {
	have, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err):
		have = nil
	case err != nil:
		return File{}, false, fmt.Errorf("reading %s: %w", path, err)
	case !generated(have):
		var list scanner.ErrorList
		list.Add(token.Position{Filename: path, Line: 1, Column: 1},
			fmt.Sprintf("%s is not marked as generated (no \"Code generated ... DO NOT EDIT.\" line at the top); refusing to overwrite it", filepath.Base(path)))
		return File{}, false, list
	}
	return File{Path: path, Want: want, Have: have}, true, nil
}

// planOrphan plans the removal of a file if it exists and is generated.
func planOrphan(path string, generated func([]byte) bool) (File, bool, error) {
	have, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err):
		return File{}, false, nil
	case err != nil:
		return File{}, false, fmt.Errorf("reading %s: %w", path, err)
	case !generated(have):
		return File{}, false, nil
	}
	return File{Path: path, Have: have}, true, nil
}

func isGeneratedYAML(b []byte) bool { return manifests.IsGenerated(b) }

// isOurs reports whether Go source was generated by kopf-gen (not by
// controller-gen or deepcopy-gen, whose files kopf-gen leaves alone unless
// it generates the same file).
func isOurs(src []byte) bool {
	return IsGenerated(src) && (strings.HasPrefix(string(src), emit.HeaderPrefix) || strings.Contains(string(src), "\n"+emit.HeaderPrefix))
}

// hasDeepCopyMarkers reports whether a package's comments enable DeepCopy
// generation.
func hasDeepCopyMarkers(p *load.Package) bool {
	for _, f := range p.Files {
		for _, cg := range f.AST.Comments {
			for _, c := range cg.List {
				for _, m := range manifests.DeepCopyMarkers {
					if strings.Contains(c.Text, m) {
						return true
					}
				}
			}
		}
	}
	return false
}

// dropRedundantImportNames removes the names of imports that are the
// imported packages' own names. controller-tools names an import only if
// the package does not import it already, so without this its output
// would change once another generated file (the scheme registration)
// imports the same package.
func dropRedundantImportNames(src []byte, pkg *load.Package) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	changed := false
	for _, spec := range f.Imports {
		if spec.Name == nil {
			continue
		}
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		if name := importedName(pkg, path); name != "" && name == spec.Name.Name {
			spec.Name = nil
			changed = true
		}
	}
	if !changed {
		return src, nil
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// importedName returns the name of the package at path if the package
// imports it, directly or not, or "".
func importedName(pkg *load.Package, path string) string {
	if pkg.Types == nil {
		return ""
	}
	seen := map[*types.Package]bool{}
	var find func(*types.Package) string
	find = func(tp *types.Package) string {
		if seen[tp] {
			return ""
		}
		seen[tp] = true
		if tp.Path() == path {
			return tp.Name()
		}
		for _, imp := range tp.Imports() {
			if name := find(imp); name != "" {
				return name
			}
		}
		return ""
	}
	return find(pkg.Types)
}
