package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/mod/modfile"

	"github.com/kopf-go/kopf/generator/markers"
)

// newAddVersionCmd is `kopf-gen add-version SRC VERSION`: a new version of
// the kinds of an API package, as kubebuilder's `create api` of a second
// version, with the conversions' stubs.
func newAddVersionCmd() *cobra.Command {
	var conversions string
	cmd := &cobra.Command{
		Use:   "add-version SRC VERSION",
		Short: "Add a version to the kinds of an API package: the new package, its doc.go, the conversions' stubs",
		Long: `add-version copies the API package in the directory SRC (e.g. ./api/v1alpha1)
into a new package VERSION beside it (./api/v1): its Go files but the tests and
generated files, with the package's name, the //kopf:resource markers and
+versionName in the new version, and a doc.go asking for DeepCopy methods
(+k8s:deepcopy-gen=package) if the package has none. The copies are not the
storage version: the kinds' storage version stays the one of SRC, which is
marked +kubebuilder:storageversion if it was not (a kind of several versions
has exactly one); add-version says so, and how to change it.

In the package of the directory --conversions (default: the current one, the
operator's), it writes conversion_<kind>_<version>.go: for every kind, the
pair of //kopf:conversion functions between the two versions, which convert
by JSON while the versions are equal and say TODO. Then edit the new types and
the conversions, and run kopf-gen generate.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return addVersion(cmd.OutOrStdout(), args[0], args[1], conversions)
		},
	}
	cmd.Flags().StringVar(&conversions, "conversions", ".", "the `DIR` of the package to write the conversion functions into")
	return cmd
}

// selector is the resource of a //kopf:resource marker.
type selector struct{ Group, Version, Name string }

// versionName is what add-version accepts as a version: Kubernetes'
// convention (v1, v1beta2, v2alpha1).
var versionName = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)

// apiKind is a //kopf:resource type of the source package.
type apiKind struct {
	name    string
	sel     selector
	storage bool
	file    string
	// marker is the text of its //kopf:resource marker.
	marker string
}

func addVersion(w io.Writer, src, version, convDir string) error {
	if !versionName.MatchString(version) {
		return fmt.Errorf("add-version: %q is not a Kubernetes version name (v1, v2beta1, v1alpha2)", version)
	}
	src = filepath.Clean(src)
	dst := filepath.Join(filepath.Dir(src), version)
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("add-version: %s exists already", dst)
	}
	fset := token.NewFileSet()
	files, kinds, err := readAPIPackage(fset, src)
	if err != nil {
		return err
	}
	old := kinds[0].sel.Version
	if old == version {
		return fmt.Errorf("add-version: %s is the version of %s already", version, src)
	}
	out := map[string][]byte{}
	hasDoc := false
	for name, content := range files {
		copied, doc := rewriteVersion(content, filepath.Base(src), version, kinds)
		out[filepath.Join(dst, name)] = copied
		hasDoc = hasDoc || doc
	}
	if !hasDoc {
		out[filepath.Join(dst, "doc.go")] = docGo(version, kinds[0].sel.Group)
	}
	srcImport, err := importPath(src)
	if err != nil {
		return err
	}
	dstImport := filepath.ToSlash(filepath.Join(filepath.Dir(srcImport), version))
	pkgName, err := packageName(convDir)
	if err != nil {
		return err
	}
	var notes []string
	for _, k := range kinds {
		if !k.storage {
			out[k.file] = markStorage(out[k.file], files, k)
			notes = append(notes, fmt.Sprintf("marked %s.%s +kubebuilder:storageversion in %s: the API server goes on storing %s %s", filepath.Base(src), k.name, k.file, k.name, old))
		}
		stub := conversionStubs(pkgName, k.name, filepath.Base(src), version, srcImport, dstImport)
		out[filepath.Join(convDir, fmt.Sprintf("conversion_%s_%s.go", strings.ToLower(k.name), version))] = stub
	}
	return writeNew(w, out, kinds, old, version, notes)
}

// writeNew writes the files (refusing to overwrite any but the marked
// source files) and says what it did.
func writeNew(w io.Writer, out map[string][]byte, kinds []apiKind, old, version string, notes []string) error {
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	sources := map[string]bool{}
	for _, k := range kinds {
		sources[k.file] = true
	}
	for _, name := range names {
		if _, err := os.Stat(name); err == nil && !sources[name] {
			return fmt.Errorf("add-version: %s exists already; move it away or remove it", name)
		}
	}
	for _, name := range names {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(name, out[name], 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s\n", name)
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintf(w, "The storage version stays %[1]s: the %[1]s types are marked +kubebuilder:storageversion and the new %[2]s types are not. To store %[2]s instead, move that marker to the %[2]s types (with two versions, the conversions stay as they are). Then edit the %[2]s types and the conversions (TODO), and run kopf-gen generate.\n",
		old, version)
	fmt.Fprintf(w, "Handlers in a package that imports both versions name their resource with its version (group/%s/plural): a plural alone is then ambiguous.\n", version)
	return nil
}

// readAPIPackage reads the Go files of an API package that add-version
// copies (not tests, not generated files) and its //kopf:resource kinds.
func readAPIPackage(fset *token.FileSet, dir string) (map[string][]byte, []apiKind, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("add-version: %w", err)
	}
	files := map[string][]byte{}
	var kinds []apiKind
	table := markers.Kopf()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			continue
		}
		path := filepath.Join(dir, name)
		content, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		f, err := parser.ParseFile(fset, path, content, parser.ParseComments)
		if err != nil {
			return nil, nil, fmt.Errorf("add-version: %w", err)
		}
		files[name] = content
		found, err := fileKinds(fset, table, f, path)
		if err != nil {
			return nil, nil, err
		}
		kinds = append(kinds, found...)
	}
	if len(kinds) == 0 {
		return nil, nil, fmt.Errorf("add-version: %s declares no //kopf:resource type", dir)
	}
	for _, k := range kinds[1:] {
		if k.sel.Group != kinds[0].sel.Group || k.sel.Version != kinds[0].sel.Version {
			return nil, nil, fmt.Errorf("add-version: the //kopf:resource types of %s differ in group or version (%s, %s)", dir, kinds[0].name, k.name)
		}
	}
	return files, kinds, nil
}

// fileKinds returns the //kopf:resource types of a file.
func fileKinds(fset *token.FileSet, table *markers.Table, f *ast.File, path string) ([]apiKind, error) {
	var kinds []apiKind
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE || len(gd.Specs) != 1 {
			continue
		}
		ts := gd.Specs[0].(*ast.TypeSpec)
		doc := ts.Doc
		if doc == nil {
			doc = gd.Doc
		}
		if doc == nil {
			continue
		}
		k := apiKind{name: ts.Name.Name, file: path}
		for _, c := range doc.List {
			if strings.TrimSpace(strings.TrimPrefix(c.Text, "//")) == markers.StorageVersion {
				k.storage = true
			}
			if !strings.HasPrefix(c.Text, markers.Prefix+markers.Resource+" ") {
				continue
			}
			m, err := table.Parse(c.Text, fset.Position(c.Slash))
			if err != nil {
				return nil, err
			}
			k.sel.Group, k.sel.Version, k.sel.Name = markers.ResourceOf(m)
			k.marker = c.Text
		}
		if k.sel.Version != "" {
			kinds = append(kinds, k)
		}
	}
	return kinds, nil
}

var (
	packageClause  = regexp.MustCompile(`(?m)^package \w+`)
	versionMarker  = regexp.MustCompile(`(?m)^(//\s*\+versionName=)\S+`)
	storageLine    = regexp.MustCompile(`(?m)^\s*//\s*\+kubebuilder:storageversion\s*\n`)
	deepCopyMarker = regexp.MustCompile(`(?m)^//\s*(\+k8s:deepcopy-gen=package|\+kubebuilder:object:generate=true)\s*$`)
)

// rewriteVersion renames a copied file's package and moves its kinds'
// markers to the new version; it drops the storage-version marker and
// reports whether the file has the package's DeepCopy marker.
func rewriteVersion(content []byte, pkg, version string, kinds []apiKind) ([]byte, bool) {
	s := packageClause.ReplaceAllString(string(content), "package "+version)
	s = strings.ReplaceAll(s, "Package "+pkg+" ", "Package "+version+" ")
	for _, k := range kinds {
		s = strings.ReplaceAll(s, k.marker, markers.Prefix+markers.Resource+" "+k.sel.Group+"/"+version+"/"+k.sel.Name)
	}
	s = versionMarker.ReplaceAllString(s, "${1}"+version)
	s = storageLine.ReplaceAllString(s, "")
	return []byte(s), deepCopyMarker.MatchString(s)
}

// markStorage adds the storage-version marker above a kind's
// //kopf:resource marker in its (source) file.
func markStorage(have []byte, files map[string][]byte, k apiKind) []byte {
	content := have
	if content == nil {
		content = files[filepath.Base(k.file)]
	}
	loc := regexp.MustCompile(`(?m)^//kopf:resource \S+\ntype ` + k.name + `\b`).FindIndex(content)
	if loc == nil {
		return content
	}
	return append(append(append([]byte{}, content[:loc[0]]...), []byte("// "+markers.StorageVersion+"\n//\n")...), content[loc[0]:]...)
}

// docGo is the doc.go of a new version package.
func docGo(version, group string) []byte {
	return []byte(fmt.Sprintf(`// Package %s is the %s version of the API group %s.
//
// +k8s:deepcopy-gen=package
// +groupName=%s
package %[1]s
`, version, version, group, group))
}

// conversionStubs renders the pair of conversion functions of a kind
// between two versions.
func conversionStubs(pkg, kind, old, version, oldImport, newImport string) []byte {
	from := kind + upperFirst(old) + "To" + upperFirst(version)
	back := kind + upperFirst(version) + "To" + upperFirst(old)
	src := fmt.Sprintf(`package %s

import (
	"encoding/json"

	%s %q
	%s %q
)

// %s converts a %[8]s from %[2]s to %[4]s.
//
// TODO: convert the fields that differ between the versions; until they
// differ, the JSON of one is the JSON of the other.
//
//kopf:conversion
func %[6]s(src *%[2]s.%[8]s, dst *%[4]s.%[8]s) error {
	b, err := json.Marshal(src)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// %[7]s converts a %[8]s from %[4]s to %[2]s.
//
// TODO: convert the fields that differ between the versions, as above.
//
//kopf:conversion
func %[7]s(src *%[4]s.%[8]s, dst *%[2]s.%[8]s) error {
	b, err := json.Marshal(src)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}
`, pkg, old, oldImport, version, newImport, from, back, kind)
	formatted, err := format.Source([]byte(src))
	if err != nil {
		return []byte(src)
	}
	return formatted
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// importPath returns the import path of the package in dir, from the
// go.mod above it.
func importPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for root := abs; ; root = filepath.Dir(root) {
		data, err := os.ReadFile(filepath.Join(root, "go.mod"))
		if err == nil {
			mod := modfile.ModulePath(data)
			if mod == "" {
				return "", fmt.Errorf("add-version: %s has no module path", filepath.Join(root, "go.mod"))
			}
			rel, err := filepath.Rel(root, abs)
			if err != nil {
				return "", err
			}
			return strings.TrimSuffix(mod+"/"+filepath.ToSlash(rel), "/."), nil
		}
		if filepath.Dir(root) == root {
			return "", errors.New("add-version: " + dir + " is in no Go module (no go.mod above it)")
		}
	}
}

// packageName returns the name of the Go package in dir.
func packageName(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("add-version: the conversions' package: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.PackageClauseOnly)
		if err == nil {
			return f.Name.Name, nil
		}
	}
	return "", fmt.Errorf("add-version: %s has no Go package for the conversions; give its directory with --conversions", dir)
}
