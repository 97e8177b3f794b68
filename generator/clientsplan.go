package generator

import (
	"context"
	"fmt"
	"go/ast"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	cgutil "k8s.io/code-generator/cmd/client-gen/generators/util"

	"github.com/kopf-go/kopf/generator/clients"
	"github.com/kopf-go/kopf/generator/emit"
	"github.com/kopf-go/kopf/generator/load"
	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/generator/model"
)

// planClients plans the typed clientset and apply configurations of the
// matched packages' //kopf:resource types marked +genclient (see
// Options.Clients), and the removal of the generated files under the
// output directory that nothing produces any more.
func planClients(ctx context.Context, opts Options, pkgs []*load.Package, models []*model.Package) ([]File, scanner.ErrorList, error) {
	outDir, err := opts.resolve(opts.Clients)
	if err != nil {
		return nil, nil, err
	}
	outPkg, err := importPathOf(outDir)
	if err != nil {
		return nil, nil, fmt.Errorf("--clients %s: %w", opts.Clients, err)
	}
	req := clients.Request{Dir: opts.Dir, OutputDir: outDir, OutputPkg: outPkg, Header: emit.Header(Version())}
	var errs, warns scanner.ErrorList
	req.Inputs = clientInputs(pkgs, models, opts.DeepCopy, &errs, &warns)
	if len(errs) > 0 {
		errs.Sort()
		return nil, warns, dedupe(errs)
	}
	want, err := clients.Generate(ctx, req)
	if err != nil {
		return nil, warns, err
	}
	var p plans
	if err := p.planClientFiles(outDir, want); err != nil {
		return nil, warns, err
	}
	files, err := p.result()
	return files, warns, err
}

// clientInputs returns client-gen's inputs: the packages of typed
// resources that have +genclient types (see clientInput).
func clientInputs(pkgs []*load.Package, models []*model.Package, deepcopy bool, errs, warns *scanner.ErrorList) []clients.Input {
	byPath := map[string]*load.Package{}
	for _, p := range pkgs {
		byPath[p.PkgPath] = p
	}
	var inputs []clients.Input
	for _, m := range models {
		pkg := byPath[m.PkgPath]
		if pkg == nil || len(m.Resources) == 0 {
			continue
		}
		if in, ok := clientInput(pkg, m, deepcopy, errs, warns); ok {
			inputs = append(inputs, in)
		}
	}
	return inputs
}

// planClientFiles plans the generated files of the clientset and the apply
// configurations under outDir (want, by path), and the removal of the
// generated Go files there that are not wanted any more.
func (p *plans) planClientFiles(outDir string, want map[string][]byte) error {
	paths := make([]string, 0, len(want))
	for file := range want {
		paths = append(paths, file)
	}
	sort.Strings(paths)
	for _, file := range paths {
		if err := p.keep(planGenerated(file, want[file], isOurs)); err != nil {
			return err
		}
	}
	for _, sub := range []string{filepath.Join(clients.ClientsetDir, clients.ClientsetName), clients.ApplyConfigurationDir} {
		root := filepath.Join(outDir, sub)
		err := filepath.WalkDir(root, func(file string, d fs.DirEntry, err error) error {
			switch {
			case os.IsNotExist(err):
				return filepath.SkipDir
			case err != nil:
				return err
			case d.IsDir() || !strings.HasSuffix(file, ".go") || want[file] != nil:
				return nil
			}
			return p.keep(planOrphan(file, isOurs))
		})
		if err != nil {
			return fmt.Errorf("listing %s: %w", root, err)
		}
	}
	return nil
}

// clientInput checks the +genclient types of a package of typed resources
// and returns the package as client-gen's input, if it has any.
func clientInput(pkg *load.Package, m *model.Package, deepcopy bool, errs, warns *scanner.ErrorList) (clients.Input, bool) {
	typed := map[string]*model.Typed{}
	for _, t := range m.Resources {
		typed[t.Object.Obj().Name()] = t
	}
	var first *model.Typed
	for _, spec := range typeSpecs(pkg) {
		name := spec.spec.Name.Name
		pos := pkg.Fset.Position(spec.spec.Name.Pos())
		tags, err := cgutil.ParseClientGenTags(spec.lines)
		if err != nil {
			errs.Add(pos, fmt.Sprintf("%s: +genclient: %v", name, err))
			continue
		}
		t := typed[name]
		if !tags.GenerateClient {
			if t != nil {
				warns.Add(t.Pos, fmt.Sprintf("%s%s type %s has no +genclient marker: --clients generates no client for it; add // +genclient above the type (+genclient:nonNamespaced for a cluster-scoped resource, +genclient:noStatus without a status subresource)",
					markers.Prefix, markers.Resource, name))
			}
			continue
		}
		if t != nil {
			scopeWarning(t, name, spec.lines, tags.NonNamespaced, warns)
		}
		if t == nil {
			errs.Add(pos, fmt.Sprintf("%s has +genclient but no %s%s marker: kopf-gen --clients generates clients for typed resources; add //kopf:resource <group>/<version>/<plural> to it", name, markers.Prefix, markers.Resource))
			continue
		}
		if !isRuntimeObject(pkg, name, deepcopy) {
			errs.Add(t.Pos, fmt.Sprintf("%s: a typed client needs *%s to be a runtime.Object (with a DeepCopyObject method): add // +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object (or +kubebuilder:object:root=true) above the type and generate with --deepcopy", name, name))
			continue
		}
		if tags.HasVerb("list") && !isRuntimeObject(pkg, name+"List", deepcopy) {
			errs.Add(t.Pos, fmt.Sprintf("%s: the typed client lists into %sList, which the package must declare as a runtime.Object: type %sList struct { metav1.TypeMeta; metav1.ListMeta; Items []%s } with // +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object (or +genclient:skipVerbs=list,watch)",
				name, name, name, name))
			continue
		}
		if first == nil {
			first = t
		}
	}
	if first == nil {
		return clients.Input{}, false
	}
	// A package that registers its types itself must do so as register-gen
	// does: the clients use its SchemeGroupVersion and AddToScheme.
	decls := topLevelDecls(pkg)
	if _, own := decls["AddToScheme"]; own {
		if _, ok := decls["SchemeGroupVersion"]; !ok {
			errs.Add(decls["AddToScheme"], fmt.Sprintf("the package registers its types itself (AddToScheme), but the typed clients of --clients also use its SchemeGroupVersion, which it does not declare: add var SchemeGroupVersion = schema.GroupVersion{Group: %q, Version: %q} (kubebuilder's groupversion_info.go calls it GroupVersion)",
				first.Group, first.Version))
			return clients.Input{}, false
		}
	}
	if path.Base(m.PkgPath) != first.Version || path.Dir(m.PkgPath) == "." {
		errs.Add(first.Pos, fmt.Sprintf("%s%s %s: code-generator takes the version of a typed client from its package's last path element, and names its group's package after the one before it: move the types into a package .../<group>/%s (such as api/%s)",
			markers.Prefix, markers.Resource, gv(first), first.Version, first.Version))
		return clients.Input{}, false
	}
	return clients.Input{PkgPath: m.PkgPath, Group: first.Group, Version: first.Version}, true
}

// clusterScope matches controller-gen's marker of a cluster-scoped CRD.
var clusterScope = regexp.MustCompile(`^\+kubebuilder:resource:(.*,)?scope=Cluster(,|$)`)

// scopeWarning warns when a typed resource's CRD scope
// (+kubebuilder:resource:scope=Cluster) and its typed client's
// (+genclient:nonNamespaced) differ: the client would address the
// objects in the wrong scope, and every request of it would fail.
func scopeWarning(t *model.Typed, name string, lines []string, nonNamespaced bool, warns *scanner.ErrorList) {
	cluster := false
	for _, l := range lines {
		if clusterScope.MatchString(strings.TrimSpace(l)) {
			cluster = true
		}
	}
	switch {
	case cluster && !nonNamespaced:
		warns.Add(t.Pos, fmt.Sprintf("%s is cluster-scoped (+kubebuilder:resource:scope=Cluster) but its typed client is namespaced: add // +genclient:nonNamespaced above the type", name))
	case !cluster && nonNamespaced:
		warns.Add(t.Pos, fmt.Sprintf("%s has a cluster-scoped typed client (+genclient:nonNamespaced) but a namespaced CRD: add // +kubebuilder:resource:scope=Cluster above the type", name))
	}
}

type typeSpec struct {
	spec  *ast.TypeSpec
	lines []string
}

// typeSpecs returns the struct types of a package with the lines of their
// doc comments (without the comment markers), as gengo gives them to
// client-gen.
func typeSpecs(pkg *load.Package) []typeSpec {
	var out []typeSpec
	for _, f := range pkg.Files {
		for _, d := range f.AST.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				if _, ok := ts.Type.(*ast.StructType); !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				var lines []string
				if doc != nil {
					for _, c := range doc.List {
						text := strings.TrimPrefix(c.Text, "//")
						lines = append(lines, strings.TrimPrefix(text, " "))
					}
				}
				out = append(out, typeSpec{spec: ts, lines: lines})
			}
		}
	}
	return out
}

// importPathOf returns the import path of a directory (which may not exist
// yet) from the go.mod of the module holding it.
func importPathOf(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modfile.ModulePath(data)
			if mod == "" {
				return "", fmt.Errorf("%s declares no module", filepath.Join(d, "go.mod"))
			}
			rel, err := filepath.Rel(d, dir)
			if err != nil {
				return "", err
			}
			if rel == "." {
				return mod, nil
			}
			return path.Join(mod, filepath.ToSlash(rel)), nil
		}
		if !os.IsNotExist(err) {
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is in no Go module (no go.mod above it)", dir)
		}
	}
}
