// Package load reads the Go packages that kopf-gen generates code for.
//
// It loads them once with golang.org/x/tools/go/packages, with syntax
// (comments included) and type information for the packages matched by the
// patterns, and export data for their dependencies.
//
// Files named [GeneratedFileName] are blanked before type-checking: they
// are parsed for their package clause only, so that a stale or broken
// generated file never blocks its own regeneration. As a consequence, the
// names that generated code declares (kwargs types, Register) are undefined
// while loading, and code referring to them has type errors. Type errors are
// therefore not reported by Load: the generator checks what it relies on
// itself (marked functions' signatures) and reports precisely. Errors that
// leave a package without syntax (listing, parsing) are reported.
//
// Only the files that make up each package in the current build
// configuration are read: test files and files excluded by build
// constraints are not, so markers there have no effect.
//
// The packages that a loaded package imports directly (other than the
// standard library's) are listed as its Deps, with their type information
// and those of their files that contain //kopf:resource markers, found by
// one more go/packages query per Load: typed resources may be declared
// there. Package.Import loads the types of any other package on demand
// (from export data), for checks against built-in Kubernetes types.
package load

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/tools/go/packages"
)

// GeneratedFileName is the name of the file kopf-gen writes into each
// package with markers.
const GeneratedFileName = "zz_generated.kopf.go"

// Package is one loaded package.
type Package struct {
	// PkgPath is the import path, Name the package name.
	PkgPath string
	Name    string
	// Dir is the package's directory: where its generated file belongs.
	Dir string
	// Fset holds the positions of every file of every package of one Load.
	Fset *token.FileSet
	// Files are the package's syntax trees other than the generated file,
	// sorted by file name.
	Files []*File
	// Types and Info are the type-checker's results, computed without the
	// generated file. They may be incomplete; see the package doc.
	Types *types.Package
	Info  *types.Info
	// Generated is the path of the package's existing generated file, or
	// "" if it has none.
	Generated string
	// Deps are the packages this package imports directly, other than the
	// standard library's, sorted by import path.
	Deps []*Dep
	// Module is the path of the module the package belongs to ("" outside
	// modules).
	Module string

	shared *shared
}

// Dep is a package imported by a loaded package. Its types come from
// export data (or from source, if it was loaded itself); its files are
// parsed only if they may hold markers of types (see [ResourceMarker]).
type Dep struct {
	PkgPath string
	Name    string
	// Files are the dependency's files that contain ResourceMarker, sorted
	// by name; all its files if the dependency was loaded itself.
	Files []*File
	// Types is the dependency as the importing package sees it; nil if
	// the type-checker could not import it.
	Types *types.Package
}

// ResourceMarker starts the markers that kopf-gen reads in the packages a
// loaded package imports.
const ResourceMarker = "//kopf:resource"

// shared is what the packages of one Load share: the loader's settings
// and the packages imported lazily by Import.
type shared struct {
	dir      string
	fset     *token.FileSet
	imported map[string]importResult
}

type importResult struct {
	pkg *types.Package
	err error
}

// Import returns the type information of the package at path, as seen from
// this package's module: from this package's (transitive) imports if it
// has it, otherwise from a separate load of its export data, cached for
// the packages of one Load.
func (p *Package) Import(ctx context.Context, path string) (*types.Package, error) {
	if p.Types != nil {
		seen := map[*types.Package]bool{}
		var find func(*types.Package) *types.Package
		find = func(tp *types.Package) *types.Package {
			if seen[tp] {
				return nil
			}
			seen[tp] = true
			if tp.Path() == path && tp.Complete() {
				return tp
			}
			for _, imp := range tp.Imports() {
				if found := find(imp); found != nil {
					return found
				}
			}
			return nil
		}
		if found := find(p.Types); found != nil {
			return found, nil
		}
	}
	if p.shared == nil {
		return nil, fmt.Errorf("importing %s: the package was not loaded by Load", path)
	}
	if r, ok := p.shared.imported[path]; ok {
		return r.pkg, r.err
	}
	r := p.shared.load(ctx, p.Dir, path)
	p.shared.imported[path] = r
	return r.pkg, r.err
}

func (s *shared) load(ctx context.Context, dir, path string) importResult {
	cfg := &packages.Config{
		Context: ctx,
		Mode:    packages.NeedName | packages.NeedTypes,
		Dir:     dir,
		Fset:    s.fset,
	}
	queries.imports.Add(1)
	pkgs, err := packages.Load(cfg, path)
	if err != nil {
		return importResult{err: fmt.Errorf("importing %s: %w", path, err)}
	}
	if len(pkgs) != 1 {
		return importResult{err: fmt.Errorf("importing %s: got %d packages", path, len(pkgs))}
	}
	p := pkgs[0]
	if len(p.Errors) > 0 {
		return importResult{err: fmt.Errorf("importing %s: %s", path, p.Errors[0].Msg)}
	}
	if p.Types == nil || !p.Types.Complete() {
		return importResult{err: fmt.Errorf("importing %s: no type information", path)}
	}
	return importResult{pkg: p.Types}
}

// File is one parsed source file.
type File struct {
	Path string
	AST  *ast.File
}

// Mode is what Load asks go/packages for.
const Mode = packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
	packages.NeedImports | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo |
	packages.NeedModule

// Queries counts the go/packages queries of this process, by purpose, so
// that tests and benchmarks can check that a run loads its packages once.
type Queries struct {
	// Loads are the full loads (syntax and types) of Load: one per call.
	Loads int64
	// Listings are the listing-only queries: the files of imported
	// packages (at most one per Load), and the diagnosis of an empty load.
	Listings int64
	// Imports are the on-demand type loads of Package.Import.
	Imports int64
}

var queries struct{ loads, listings, imports atomic.Int64 }

// CountQueries returns the go/packages queries made so far by this
// process.
func CountQueries() Queries {
	return Queries{Loads: queries.loads.Load(), Listings: queries.listings.Load(), Imports: queries.imports.Load()}
}

// Load loads the packages matching patterns, resolved in dir ("" meaning
// the current directory). Packages are returned sorted by import path. The
// error, if any, is a go/scanner.ErrorList of every package's errors that
// prevent generation, or a plain error if the loading itself failed.
func Load(ctx context.Context, dir string, patterns ...string) ([]*Package, error) {
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	fset := token.NewFileSet()
	cfg := &packages.Config{
		Context:   ctx,
		Mode:      Mode,
		Dir:       dir,
		Fset:      fset,
		Tests:     false,
		ParseFile: parseFile,
	}
	queries.loads.Add(1)
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", strings.Join(patterns, " "), err)
	}
	if len(pkgs) == 0 {
		queries.listings.Add(1)
		// In export-data mode go/packages hides the go command's failures
		// (such as a go.mod needing updates) behind an empty result; a
		// listing-only load reports them.
		if _, err := packages.Load(&packages.Config{Context: ctx, Mode: packages.NeedName, Dir: dir}, patterns...); err != nil {
			return nil, fmt.Errorf("loading %s: %w", strings.Join(patterns, " "), err)
		}
		return nil, fmt.Errorf("loading %s: no packages matched", strings.Join(patterns, " "))
	}
	var errs scanner.ErrorList
	sh := &shared{dir: dir, fset: fset, imported: map[string]importResult{}}
	out := make([]*Package, 0, len(pkgs))
	for _, p := range pkgs {
		if fatal := fatalErrors(p); len(fatal) > 0 {
			errs = append(errs, fatal...)
			continue
		}
		lp, err := convert(fset, p)
		if err != nil {
			errs.Add(token.Position{}, err.Error())
			continue
		}
		if lp != nil {
			lp.shared = sh
			out = append(out, lp)
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, dedupe(errs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PkgPath < out[j].PkgPath })
	if err := loadDeps(ctx, dir, fset, pkgs, out); err != nil {
		return nil, err
	}
	return out, nil
}

// loadDeps fills the Deps of the loaded packages. The files of dependencies
// that were not loaded themselves are listed by one more go/packages query,
// and parsed only if they contain ResourceMarker.
func loadDeps(ctx context.Context, dir string, fset *token.FileSet, pkgs []*packages.Package, out []*Package) error {
	roots := map[string]*Package{}
	for _, lp := range out {
		roots[lp.PkgPath] = lp
	}
	var missing []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		for path := range p.Imports {
			if isStd(path) || roots[path] != nil || seen[path] {
				continue
			}
			seen[path] = true
			missing = append(missing, path)
		}
	}
	sort.Strings(missing)
	deps := map[string]*Dep{}
	for path, lp := range roots {
		deps[path] = &Dep{PkgPath: path, Name: lp.Name, Files: lp.Files}
	}
	if len(missing) > 0 {
		cfg := &packages.Config{Context: ctx, Mode: packages.NeedName | packages.NeedFiles, Dir: dir, Fset: fset}
		queries.listings.Add(1)
		listed, err := packages.Load(cfg, missing...)
		if err != nil {
			return fmt.Errorf("listing the imports of %s: %w", strings.Join(missing, " "), err)
		}
		for _, p := range listed {
			d := &Dep{PkgPath: p.PkgPath, Name: p.Name}
			files := append([]string(nil), p.GoFiles...)
			sort.Strings(files)
			for _, path := range files {
				src, err := os.ReadFile(path)
				if err != nil || !bytes.Contains(src, []byte(ResourceMarker)) {
					continue // unreadable files are the compiler's business
				}
				f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
				if err != nil {
					continue // as are files that do not parse
				}
				d.Files = append(d.Files, &File{Path: path, AST: f})
			}
			deps[p.PkgPath] = d
		}
	}
	for _, p := range pkgs {
		lp := roots[p.PkgPath]
		if lp == nil {
			continue
		}
		var imported map[string]*types.Package
		if lp.Types != nil {
			imported = map[string]*types.Package{}
			for _, tp := range lp.Types.Imports() {
				imported[tp.Path()] = tp
			}
		}
		for path := range p.Imports {
			d, ok := deps[path]
			if !ok || isStd(path) {
				continue
			}
			dep := *d
			dep.Types = imported[path]
			lp.Deps = append(lp.Deps, &dep)
		}
		sort.Slice(lp.Deps, func(i, j int) bool { return lp.Deps[i].PkgPath < lp.Deps[j].PkgPath })
	}
	return nil
}

// isStd reports whether an import path is the standard library's: its
// first element has no dot.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// dedupe removes repeated errors (go/packages may report one error for
// several packages) from a sorted list. Unlike ErrorList.RemoveMultiples it
// keeps distinct errors of one line, and errors without a position.
func dedupe(errs scanner.ErrorList) scanner.ErrorList {
	out := errs[:0]
	for _, e := range errs {
		if len(out) > 0 && *out[len(out)-1] == *e {
			continue
		}
		out = append(out, e)
	}
	return out
}

// parseFile parses like go/packages does, except that generated files keep
// only their package clause.
func parseFile(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
	const mode = parser.AllErrors | parser.ParseComments | parser.SkipObjectResolution
	if filepath.Base(filename) == GeneratedFileName {
		return parser.ParseFile(fset, filename, src, parser.PackageClauseOnly)
	}
	return parser.ParseFile(fset, filename, src, mode)
}

// fatalErrors returns a package's errors that leave it unusable: listing
// and parse errors. Type errors are left to the generator; see the package
// doc.
func fatalErrors(p *packages.Package) scanner.ErrorList {
	var errs scanner.ErrorList
	for _, e := range p.Errors {
		if e.Kind == packages.TypeError || isCompileOutput(e) {
			continue
		}
		pos := ParsePos(e.Pos)
		msg := e.Msg
		if !pos.IsValid() && pos.Filename == "" {
			msg = p.PkgPath + ": " + msg
			if p.PkgPath == "" {
				msg = p.ID + ": " + e.Msg
			}
		}
		errs.Add(pos, msg)
	}
	return errs
}

// isCompileOutput reports whether an error is the compiler's output for a
// package that go list compiled for its export data ("# pkg" followed by
// type errors). The roots are type-checked from source anyway, so these
// are type errors in another form; they are what a stale or missing
// generated file causes.
func isCompileOutput(e packages.Error) bool {
	return e.Kind == packages.ListError && strings.HasPrefix(e.Msg, "# ")
}

// ParsePos parses go/packages' "file:line:col" or "file:line" positions.
func ParsePos(s string) token.Position {
	if s == "" || s == "-" {
		return token.Position{}
	}
	var nums []int
	rest := s
	for len(nums) < 2 {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			break
		}
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil {
			break
		}
		nums = append(nums, n)
		rest = rest[:i]
	}
	switch len(nums) {
	case 2:
		return token.Position{Filename: rest, Line: nums[1], Column: nums[0]}
	case 1:
		return token.Position{Filename: rest, Line: nums[0]}
	default:
		return token.Position{Filename: s}
	}
}

func convert(fset *token.FileSet, p *packages.Package) (*Package, error) {
	var dir string
	for _, list := range [][]string{p.GoFiles, p.CompiledGoFiles, p.OtherFiles, p.IgnoredFiles} {
		if len(list) > 0 {
			dir = filepath.Dir(list[0])
			break
		}
	}
	if dir == "" {
		return nil, nil // nothing on disk to generate next to
	}
	lp := &Package{
		PkgPath: p.PkgPath,
		Name:    p.Name,
		Dir:     dir,
		Fset:    fset,
		Types:   p.Types,
		Info:    p.TypesInfo,
	}
	if p.Module != nil {
		lp.Module = p.Module.Path
	}
	for _, f := range p.Syntax {
		path := fset.File(f.FileStart).Name()
		if filepath.Base(path) == GeneratedFileName {
			continue
		}
		lp.Files = append(lp.Files, &File{Path: path, AST: f})
	}
	sort.Slice(lp.Files, func(i, j int) bool { return lp.Files[i].Path < lp.Files[j].Path })
	gen := filepath.Join(dir, GeneratedFileName)
	switch _, err := os.Stat(gen); {
	case err == nil:
		lp.Generated = gen
	case !os.IsNotExist(err):
		return nil, fmt.Errorf("%s: %w", p.PkgPath, err)
	}
	return lp, nil
}
