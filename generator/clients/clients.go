// Package clients generates typed clientsets and apply configurations for
// API packages with k8s.io/code-generator's own generators, client-gen and
// applyconfiguration-gen, used as libraries (through k8s.io/gengo/v2), so
// that the output is exactly what those tools write and stays so as they
// evolve: hand-written templates of clientsets would drift from
// client-go's.
//
// The tools' main loops (gengo.Execute) write to disk, name the generator
// in the header after os.Args[0] and format with a gofmt binary from PATH;
// Generate runs their targets instead with a file type of its own, which
// keeps the files in memory, formats them in-process and gives them
// kopf-gen's header, so that the output is the same bytes on every machine
// and can be compared with the disk (kopf-gen verify) without writing.
//
// The layout is kube_codegen.sh's (code-generator's script): under the
// output directory, clientset/versioned (the clientset, its scheme, and
// typed/<group-package>/<version>) and applyconfiguration (the apply
// configurations, in <group-package>/<version>, and their utilities).
// The group package is the parent directory of the API package (api for
// api/v1alpha1), as with kube_codegen.sh's --input group-dir/version; the
// group name comes from the request (the //kopf:resource markers), given
// to the tools as if the package's doc comment had +groupName. The types
// of k8s.io/api that the inputs' types use get client-go's apply
// configurations (see externalApplyConfigurations).
//
// client-gen's fake clientset is generated too, as kube_codegen.sh does:
// clientset/versioned/fake (NewClientset, which serves apply
// configurations through applyconfiguration's type converter, and the
// older NewSimpleClientset) and typed/<group-package>/<version>/fake, for
// handlers' unit tests (kopftest.WithClient, docs/testing.md). No listers
// or informers are generated.
//
// Server-side apply in the fake (and the apply configurations' Extract
// functions) needs a structured-merge-diff schema of every applied type,
// which applyconfiguration-gen takes from an OpenAPI document: Generate
// gives it one in which each +genclient type is an object that preserves
// unknown fields (see openAPIModels), so that the fake merges applied
// objects as the API server merges those of a CRD without a schema: maps
// field by field, lists as a whole. (The API server itself applies with
// the CRD's schema, list-map keys included.)
package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/imports"
	acargs "k8s.io/code-generator/cmd/applyconfiguration-gen/args"
	acgenerators "k8s.io/code-generator/cmd/applyconfiguration-gen/generators"
	cgargs "k8s.io/code-generator/cmd/client-gen/args"
	cggenerators "k8s.io/code-generator/cmd/client-gen/generators"
	cgutil "k8s.io/code-generator/cmd/client-gen/generators/util"
	cgtypes "k8s.io/code-generator/cmd/client-gen/types"
	"k8s.io/gengo/v2"
	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/parser"
	gengotypes "k8s.io/gengo/v2/types"
	openapiutil "k8s.io/kube-openapi/pkg/util"
)

// The directories of the output, under Request.OutputDir, as
// kube_codegen.sh lays them out.
const (
	ClientsetDir          = "clientset"
	ClientsetName         = "versioned"
	ApplyConfigurationDir = "applyconfiguration"
)

// Input is one API package to generate clients for.
type Input struct {
	// PkgPath is the package's import path; its last element is the
	// version and the one before it names the group's package.
	PkgPath string
	// Group and Version are the API group and version of its types.
	Group, Version string
}

// Request says what to generate.
type Request struct {
	// Dir is where package paths are resolved ("" is the current
	// directory).
	Dir string
	// OutputDir is the directory to generate into (absolute), OutputPkg
	// its import path.
	OutputDir, OutputPkg string
	// Inputs are the API packages, each of one group and version.
	Inputs []Input
	// Header is the first line of every file, without its line break.
	Header string
}

// Generate runs client-gen and applyconfiguration-gen for the request and
// returns the files they produce, by absolute path. It writes nothing
// (the tools' empty output directories and the OpenAPI document of
// openAPIModels are made in a temporary directory,
// removed before it returns).
func Generate(ctx context.Context, req Request) (files map[string][]byte, err error) {
	if len(req.Inputs) == 0 {
		return map[string][]byte{}, nil
	}
	inputs, err := sortedInputs(req.Inputs)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "kopf-gen-clients-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	defer func() {
		// The tools report some errors by panicking (bad +genclient tags).
		if r := recover(); r != nil {
			if os.Getenv("KOPF_GEN_DEBUG") != "" {
				debug.PrintStack()
			}
			files, err = nil, fmt.Errorf("code-generator failed: %v", r)
		}
	}()
	load := loader(ctx, req.Dir, inputs)
	header := []byte(req.Header + "\n\n")
	out := &memory{files: map[string][]byte{}, tmp: tmp, dir: req.OutputDir, header: header}
	if err := clientGen(load, req, inputs, out, tmp); err != nil {
		return nil, err
	}
	if err := applyConfigurationGen(ctx, load, req, inputs, out, tmp); err != nil {
		return nil, err
	}
	return out.files, nil
}

// sortedInputs returns the inputs sorted by package path, after checking
// that their paths are as code-generator expects them.
func sortedInputs(in []Input) ([]Input, error) {
	inputs := slices.Clone(in)
	sort.Slice(inputs, func(i, j int) bool { return inputs[i].PkgPath < inputs[j].PkgPath })
	for _, in := range inputs {
		if path.Base(in.PkgPath) != in.Version || path.Dir(in.PkgPath) == "." {
			return nil, fmt.Errorf("package %s: code-generator takes the version from the package's last path element and the group's package from the one before it: put the types of %s in a package .../<group>/%s", in.PkgPath, apiVersion(in), in.Version)
		}
	}
	return inputs, nil
}

// loader returns a function that loads the input packages with gengo's
// parser, from dir. Each tool gets a parser of its own, as when it runs
// alone: a parser makes the types of a package into one universe only.
func loader(ctx context.Context, dir string, inputs []Input) func() (*parser.Parser, error) {
	paths := make([]string, len(inputs))
	for i, in := range inputs {
		paths[i] = in.PkgPath
	}
	return func() (*parser.Parser, error) {
		p := parser.NewWithOptions(parser.Options{BuildTags: []string{gengo.StdBuildTag}})
		// The only way to give gengo's parser a directory other than the
		// process's working directory.
		if err := p.LoadPackagesWithConfigForTesting(&packages.Config{Context: ctx, Dir: dir}, paths...); err != nil {
			return nil, fmt.Errorf("loading %s for code-generator: %w", strings.Join(paths, " "), err)
		}
		return p, nil
	}
}

// clientGen runs client-gen into out: the clientset, its scheme and the
// typed clients.
func clientGen(load func() (*parser.Parser, error), req Request, inputs []Input, out *memory, tmp string) error {
	p, err := load()
	if err != nil {
		return err
	}
	cg := cgargs.New()
	cg.OutputDir = filepath.Join(tmp, ClientsetDir)
	cg.OutputPkg = path.Join(req.OutputPkg, ClientsetDir)
	cg.ClientsetName = ClientsetName
	cg.FakeClient = true
	cg.ApplyConfigurationPackage = path.Join(req.OutputPkg, ApplyConfigurationDir)
	cg.Groups = clientsetGroups(inputs)
	if err := cg.Validate(); err != nil {
		return err
	}
	c, err := generator.NewContext(p, cggenerators.NameSystems(nil), cggenerators.DefaultNameSystem())
	if err != nil {
		return fmt.Errorf("client-gen: %w", err)
	}
	setGroups(c, inputs)
	c.FileTypes[generator.GoFileType] = out
	if err := c.ExecuteTargets(withHeader(cggenerators.GetTargets(c, cg), out.header)); err != nil {
		return fmt.Errorf("client-gen: %w", err)
	}
	return nil
}

// clientsetGroups returns client-gen's groups of the inputs, sorted.
func clientsetGroups(inputs []Input) []cgtypes.GroupVersions {
	groups := map[cgtypes.Group]*cgtypes.GroupVersions{}
	for _, in := range inputs {
		g := cgtypes.Group(in.Group)
		if groups[g] == nil {
			groups[g] = &cgtypes.GroupVersions{PackageName: path.Base(path.Dir(in.PkgPath)), Group: g}
		}
		groups[g].Versions = append(groups[g].Versions, cgtypes.PackageVersion{Version: cgtypes.Version(in.Version), Package: in.PkgPath})
	}
	var out []cgtypes.GroupVersions
	for _, g := range groups {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// applyConfigurationGen runs applyconfiguration-gen into out: the apply
// configurations.
func applyConfigurationGen(ctx context.Context, load func() (*parser.Parser, error), req Request, inputs []Input, out *memory, tmp string) error {
	ac := acargs.New()
	ac.OutputDir = filepath.Join(tmp, ApplyConfigurationDir)
	ac.OutputPkg = path.Join(req.OutputPkg, ApplyConfigurationDir)
	if err := ac.Validate(); err != nil {
		return err
	}
	p, err := load()
	if err != nil {
		return err
	}
	c, err := generator.NewContext(p, acgenerators.NameSystems(), acgenerators.DefaultNameSystem())
	if err != nil {
		return fmt.Errorf("applyconfiguration-gen: %w", err)
	}
	setGroups(c, inputs)
	c.FileTypes[generator.GoFileType] = out
	if ac.OpenAPISchemaFilePath, err = openAPIModels(c, inputs, tmp); err != nil {
		return fmt.Errorf("applyconfiguration-gen: %w", err)
	}
	for name, pkg := range externalApplyConfigurations(ctx, req.Dir, c, inputs) {
		ac.ExternalApplyConfigurations[name] = pkg
	}
	if err := c.ExecuteTargets(withHeader(acgenerators.GetTargets(c, ac), out.header)); err != nil {
		return fmt.Errorf("applyconfiguration-gen: %w", err)
	}
	return nil
}

// openAPIModels writes into dir an OpenAPI document for
// applyconfiguration-gen that defines every +genclient type of the inputs
// as an object of its group, version and kind that preserves unknown
// fields, under the name that applyconfiguration-gen looks it up by (the
// type's REST-friendly name), and returns its path.
func openAPIModels(c *generator.Context, inputs []Input, dir string) (string, error) {
	defs := map[string]any{}
	for _, in := range inputs {
		p := c.Universe.Package(in.PkgPath)
		if p == nil {
			continue
		}
		for _, t := range p.Types {
			tags, err := cgutil.ParseClientGenTags(append(slices.Clone(t.SecondClosestCommentLines), t.CommentLines...))
			if err != nil || !tags.GenerateClient {
				continue // client-gen reports bad tags
			}
			defs[openapiutil.ToRESTFriendlyName(t.Name.Package+"."+t.Name.Name)] = map[string]any{
				"type":                                 "object",
				"x-kubernetes-preserve-unknown-fields": true,
				"x-kubernetes-group-version-kind":      []map[string]string{{"group": in.Group, "version": in.Version, "kind": t.Name.Name}},
			}
		}
	}
	doc, err := json.Marshal(map[string]any{
		"swagger": "2.0", "info": map[string]string{"title": "kopf-gen", "version": "v0"},
		"paths": map[string]any{}, "definitions": defs,
	})
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "openapi.json")
	return file, os.WriteFile(file, doc, 0o600)
}

func apiVersion(in Input) string {
	if in.Group == "" {
		return in.Version
	}
	return in.Group + "/" + in.Version
}

// setGroups gives the tools each input's group as a +groupName tag of its
// package's doc comment, which is where they read it from.
func setGroups(c *generator.Context, inputs []Input) {
	for _, in := range inputs {
		p := c.Universe.Package(in.PkgPath)
		tag := "+groupName=" + in.Group
		p.Comments = append(slices.DeleteFunc(slices.Clone(p.Comments), func(l string) bool {
			return strings.HasPrefix(strings.TrimSpace(l), "+groupName=")
		}), tag)
		p.DocComments = append(slices.DeleteFunc(slices.Clone(p.DocComments), func(l string) bool {
			return strings.HasPrefix(strings.TrimSpace(l), "+groupName=")
		}), tag)
	}
}

// withHeader gives every target kopf-gen's header instead of the tools'.
func withHeader(targets []generator.Target, header []byte) []generator.Target {
	for _, t := range targets {
		if st, ok := t.(*generator.SimpleTarget); ok {
			st.HeaderComment = slices.Clip(slices.Clone(header))
		}
	}
	return targets
}

// memory is a gengo file type that keeps Go files in memory, formatted
// in-process, by their path under dir instead of tmp.
type memory struct {
	files    map[string][]byte
	tmp, dir string
	header   []byte
}

func (m *memory) AssembleFile(f *generator.File, pathname string) error {
	if !bytes.HasPrefix(f.Header, m.header) {
		// The tools' own header names the program that runs them.
		return fmt.Errorf("code-generator's %s lacks kopf-gen's header", f.Name)
	}
	var b bytes.Buffer
	et := generator.NewErrorTracker(&b)
	generator.NewGoFile().Assemble(et, f)
	if err := et.Error(); err != nil {
		return err
	}
	src, err := imports.Process("", b.Bytes(), &imports.Options{Comments: true, TabIndent: true, TabWidth: 8, FormatOnly: true})
	if err != nil {
		return fmt.Errorf("formatting %s: %w", f.Name, err)
	}
	rel, err := filepath.Rel(m.tmp, pathname)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("code-generator wrote %s outside its output directory", pathname)
	}
	m.files[filepath.Join(m.dir, rel)] = src
	return nil
}

// The packages of Kubernetes' own types, and of client-go's apply
// configurations of them.
const (
	apiPrefix                = "k8s.io/api/"
	applyConfigurationPrefix = "k8s.io/client-go/applyconfigurations/"
)

// externalApplyConfigurations maps the types of k8s.io/api that the
// inputs' types use (a corev1.PodTemplateSpec in a spec) to client-go's
// apply configurations of them, as kube_codegen.sh's --applyconfig-externals
// would, so that apply configurations take client-go's
// PodTemplateSpecApplyConfiguration rather than a whole corev1.PodTemplateSpec.
// Only types that client-go has an apply configuration of are mapped; the
// others are used as they are.
func externalApplyConfigurations(ctx context.Context, dir string, c *generator.Context, inputs []Input) map[gengotypes.Name]string {
	used := map[string]map[string]bool{} // client-go package: type names
	seen := map[*gengotypes.Type]bool{}
	var visit func(t *gengotypes.Type)
	visit = func(t *gengotypes.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		if rest, ok := strings.CutPrefix(t.Name.Package, apiPrefix); ok {
			if t.Kind == gengotypes.Struct {
				pkg := applyConfigurationPrefix + rest
				if used[pkg] == nil {
					used[pkg] = map[string]bool{}
				}
				used[pkg][t.Name.Name] = true
			}
			return // client-go's apply configuration covers what it holds
		}
		for _, m := range t.Members {
			visit(m.Type)
		}
		visit(t.Elem)
		visit(t.Key)
		visit(t.Underlying)
	}
	for _, in := range inputs {
		if p := c.Universe.Package(in.PkgPath); p != nil {
			for _, name := range slices.Sorted(maps.Keys(p.Types)) {
				visit(p.Types[name])
			}
		}
	}
	out := map[gengotypes.Name]string{}
	if len(used) == 0 {
		return out
	}
	paths := slices.Sorted(maps.Keys(used))
	pkgs, err := packages.Load(&packages.Config{Context: ctx, Dir: dir, Mode: packages.NeedName | packages.NeedFiles}, paths...)
	if err != nil {
		return out // the types are used as they are
	}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			continue
		}
		declared := map[string]bool{}
		for _, f := range p.GoFiles {
			src, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, m := range applyConfigurationDecl.FindAllSubmatch(src, -1) {
				declared[string(m[1])] = true
			}
		}
		for name := range used[p.PkgPath] {
			if declared[name] {
				out[gengotypes.Name{Package: apiPrefix + strings.TrimPrefix(p.PkgPath, applyConfigurationPrefix), Name: name}] = p.PkgPath
			}
		}
	}
	return out
}

// applyConfigurationDecl matches the declaration of an apply
// configuration type in client-go's source.
var applyConfigurationDecl = regexp.MustCompile(`(?m)^type (\w+)ApplyConfiguration struct`)
