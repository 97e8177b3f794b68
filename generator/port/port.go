package port

import (
	"context"
	"fmt"
	"go/format"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kopf-go/kopf/generator/scaffold"
)

// Options are the inputs of a port.
type Options struct {
	// Python is the interpreter that parses the files (default python3).
	Python string
	// Files are the operator's Python files; CRDs its CRDs' YAML files.
	Files, CRDs []string
	// Scaffold are the options of the repository's skeleton (kopf-gen
	// init's); Group, Version and Kind default to the first CRD's.
	Scaffold scaffold.Options
}

// Stats are the figures of a port.
type Stats struct {
	// Decorators are Kopf's decorators met; Translated those whose every
	// argument has a marker's equivalent.
	Decorators, DecoratorsTranslated int
	// Statements are the statements of the handlers' and callbacks'
	// bodies; StatementsTranslated those written in Go.
	Statements, StatementsTranslated int
	// Handlers are the figures per handler.
	Handlers []HandlerStats
}

// HandlerStats are the figures of one ported function.
type HandlerStats struct {
	File, Python, Go       string
	Translated, Left       int
	DecoratorsUntranslated int
}

// Result is a port: the repository's files by path relative to its
// directory, and its figures.
type Result struct {
	Files map[string][]byte
	Stats Stats
}

// porter is one port in progress.
type porter struct {
	ctx   context.Context
	crds  []*crd
	funcs map[string]Node
	// globals are the module-level names (the memo's keys).
	globals       map[string]bool
	callbacks     map[string]*callback
	callbackOrder []string
	mod           *Module
	stats         Stats
	memo          []string
	webhooks      bool
}

func (p *porter) source(n Node) string { return n.Source(p.mod.Lines) }

// Port translates the operator and renders its repository.
func Port(ctx context.Context, o Options) (*Result, error) {
	if o.Python == "" {
		o.Python = "python3"
	}
	crds, err := readCRDs(o.CRDs)
	if err != nil {
		return nil, err
	}
	p := &porter{ctx: ctx, crds: crds, globals: map[string]bool{}, callbacks: map[string]*callback{}}
	var mods []*Module
	for _, f := range o.Files {
		m, err := ParseFile(ctx, o.Python, f)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	files := map[string][]byte{}
	for _, m := range mods {
		p.mod = m
		name, src, err := p.file(m)
		if err != nil {
			return nil, err
		}
		files["internal/handlers/"+name] = src
	}
	so := o.Scaffold
	if len(crds) > 0 {
		so.Group, so.Version, so.Kind, so.Plural = crds[0].Group, crds[0].Version, crds[0].Kind, crds[0].Plural
	} else {
		so.Group, so.Version, so.Kind = "example.com", "v1", "Placeholder"
	}
	so.Webhooks = p.webhooks
	if err := so.Validate(); err != nil {
		return nil, err
	}
	skel, err := scaffold.Render(so)
	if err != nil {
		return nil, err
	}
	for _, drop := range []string{"internal/handlers/handlers.go", "internal/handlers/webhooks.go",
		"internal/handlers/webhooks_test.go", "internal/handlers/handlers_test.go", "test/e2e/e2e_test.go"} {
		delete(skel, drop)
	}
	for name := range skel {
		if strings.HasPrefix(name, "api/") || strings.HasPrefix(name, "config/samples/") {
			delete(skel, name)
		}
	}
	// The memo is kopf.Main's first option (after the webhooks' ones, if
	// any: they are a slice).
	main := strings.Replace(string(skel["main.go"]), "kopf.Main(handlers.Register, webhooks()...)",
		"kopf.Main(handlers.Register, append(webhooks(), kopf.WithMemo(handlers.Memo()))...)", 1)
	if !strings.Contains(main, "kopf.WithMemo(") {
		main = strings.Replace(main, "kopf.Main(handlers.Register", "kopf.Main(handlers.Register, kopf.WithMemo(handlers.Memo())", 1)
	}
	skel["main.go"] = []byte(main)
	for name, data := range skel {
		files[name] = data
	}
	if err := p.apis(files, so.Module); err != nil {
		return nil, err
	}
	files["internal/handlers/pyport.go"] = []byte(helpersSource)
	memo, err := gofmt("memo.go", p.memoSource())
	if err != nil {
		return nil, err
	}
	files["internal/handlers/memo.go"] = memo
	files["internal/handlers/handlers_test.go"] = []byte(unitTestSource)
	e2e, err := gofmt("e2e_test.go", e2eSource(so.Module, crds))
	if err != nil {
		return nil, err
	}
	files["test/e2e/e2e_test.go"] = e2e
	return &Result{Files: files, Stats: p.stats}, nil
}

func gofmt(name, src string) ([]byte, error) {
	out, err := format.Source([]byte(src))
	if err != nil {
		return nil, fmt.Errorf("kopf-gen port wrote Go that does not parse (%s): %w\n%s", name, err, src)
	}
	return out, nil
}

// apis writes the CRDs' types, one package per group and version
// (api/<version>, or api/<group's first label><version> for the groups
// after the first), and a sample object of each kind.
func (p *porter) apis(files map[string][]byte, module string) error {
	type gv struct{ group, version string }
	var order []gv
	byGV := map[gv][]*crd{}
	for _, c := range p.crds {
		k := gv{c.Group, c.Version}
		if _, ok := byGV[k]; !ok {
			order = append(order, k)
		}
		byGV[k] = append(byGV[k], c)
		files["config/samples/"+c.Plural+".yaml"] = []byte(fmt.Sprintf("apiVersion: %s/%s\nkind: %s\nmetadata:\n  name: example\nspec: {}\n", c.Group, c.Version, c.Kind))
	}
	for i, k := range order {
		pkg := k.version
		if i > 0 && k.group != order[0].group {
			pkg = strings.ReplaceAll(strings.Split(k.group, ".")[0], "-", "") + k.version
		}
		src, err := gofmt("types.go", apiTypes(pkg, byGV[k]))
		if err != nil {
			return err
		}
		dir := path.Join("api", pkg)
		files[dir+"/types.go"] = src
		files[dir+"/doc.go"] = []byte(fmt.Sprintf("// Package %[1]s holds version %[2]s of the %[3]s API, ported from its CRDs by kopf-gen port.\n// kopf-gen generates the CRDs (config/crd/) from these types and their DeepCopy methods.\n//\n// +k8s:deepcopy-gen=package\n// +groupName=%[3]s\npackage %[1]s\n", pkg, k.version, k.group))
	}
	return nil
}

// file ports one Python module into a Go file of package handlers.
func (p *porter) file(m *Module) (string, []byte, error) {
	p.funcs = map[string]Node{}
	body := m.AST.List("body")
	for _, s := range body {
		switch s.Type() {
		case "FunctionDef", "AsyncFunctionDef":
			p.funcs[s.Str("name")] = s
		case "Assign", "AnnAssign":
			p.moduleAssign(s)
		}
	}
	imports := map[string]bool{"context": true}
	var out strings.Builder
	var rest []Node
	for _, s := range body {
		if !s.Is("FunctionDef", "AsyncFunctionDef") || !hasKopfDecorator(s) {
			rest = append(rest, s)
			continue
		}
		code, err := p.handler(s, imports)
		if err != nil {
			return "", nil, err
		}
		out.WriteString(code)
	}
	for _, name := range p.callbackOrder {
		out.WriteString(p.callbackCode(p.callbacks[name], imports))
	}
	p.callbackOrder = nil
	for _, s := range rest {
		out.WriteString(p.moduleRest(s))
	}
	base := strings.TrimSuffix(filepath.Base(m.Path), ".py")
	var head strings.Builder
	fmt.Fprintf(&head, "// Code ported by kopf-gen port from %s; the TODO(port) comments mark what is left to port by hand.\n\npackage handlers\n\nimport (\n", filepath.Base(m.Path))
	paths := make([]string, 0, len(imports))
	for i := range imports {
		paths = append(paths, i)
	}
	sort.Strings(paths)
	for _, i := range paths {
		switch i {
		case "kopf":
			head.WriteString("\t\"github.com/kopf-go/kopf\"\n")
		case "pyfmt":
			head.WriteString("\t\"github.com/kopf-go/kopf/pyfmt\"\n")
		default:
			if strings.Contains(i, " ") {
				fmt.Fprintf(&head, "\t%s\n", i)
			} else {
				fmt.Fprintf(&head, "\t%q\n", i)
			}
		}
	}
	head.WriteString(")\n\n")
	src, err := gofmt(base+".go", head.String()+out.String())
	if err != nil {
		return "", nil, err
	}
	return strings.ReplaceAll(base, "-", "_") + ".go", src, nil
}

func hasKopfDecorator(fn Node) bool {
	for _, d := range fn.List("decorator_list") {
		if name, _ := decoratorName(d); decoratorMarkers[name].marker != "" {
			return true
		}
	}
	return false
}

// moduleAssign records module-level state for the memo.
func (p *porter) moduleAssign(s Node) {
	var targets []Node
	if s.Is("Assign") {
		targets = s.List("targets")
	} else {
		targets = []Node{s.Get("target")}
	}
	for _, t := range targets {
		if !t.Is("Name") || strings.HasPrefix(t.Str("id"), "E2E_") {
			continue
		}
		name := t.Str("id")
		p.globals[name] = true
		value := "nil"
		if v := s.Get("value"); v != nil {
			f := p.fnCtx(moduleGroup, nil, false)
			if x, err := f.expr(v); err == nil {
				value = x.code
			} else {
				value = "nil, // TODO(port): " + strings.ReplaceAll(p.source(v), "\n", " ") + "\n"
			}
		}
		if !strings.HasSuffix(value, "\n") {
			value += ",\n"
		}
		p.memo = append(p.memo, strconv.Quote(name)+": "+value)
	}
}

func (p *porter) memoSource() string {
	return "package handlers\n\nimport \"github.com/kopf-go/kopf\"\n\n" +
		"// Memo is the operator's memo as the Python operator's module-level state\n" +
		"// started (kopf.WithMemo in main.go and in the tests): handlers read it as\n" +
		"// kw.Memo[\"NAME\"], each object's handlers a shallow copy of it.\n" +
		"func Memo() kopf.Memo {\n\treturn kopf.Memo{\n" + strings.Join(p.memo, "") + "}\n}\n"
}

// moduleRest keeps module-level code that is not a handler as comments.
func (p *porter) moduleRest(s Node) string {
	switch s.Type() {
	case "Import", "ImportFrom", "Assign", "AnnAssign":
		return ""
	case "Expr":
		if _, ok := constString(s.Get("value")); ok {
			return "" // the module's docstring
		}
	case "FunctionDef", "AsyncFunctionDef":
		if p.isCallback(s.Str("name")) {
			return ""
		}
	}
	var b strings.Builder
	b.WriteString("// TODO(port): module-level code of the Python operator, not ported:\n")
	for _, l := range strings.Split(p.source(s), "\n") {
		fmt.Fprintf(&b, "//\t%s\n", l)
	}
	return b.String() + "\n"
}

func (p *porter) isCallback(name string) bool {
	for _, c := range p.callbacks {
		if c.py.Str("name") == name {
			return true
		}
	}
	return false
}

func (p *porter) fnCtx(g group, def Node, typed bool) *fnCtx {
	f := &fnCtx{p: p, mod: p.mod, group: g, typed: typed, params: map[string]bool{}, locals: map[string]string{},
		localKinds: map[string]kind{}, nested: map[string]Node{}, registered: map[string]bool{}, imports: map[string]bool{}}
	if def != nil {
		f.params = paramsOf(def)
	}
	return f
}
