package port

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/kopf-go/kopf/runtime/settings"
)

// fnCtx is the translation of one function's body.
type fnCtx struct {
	p     *porter
	mod   *Module
	group group
	// typed: the handler's kwargs are typed (a built-in resource): Kopf's
	// old and new are kw.Changing.Old and .New.
	typed bool
	// params are the Python function's parameters.
	params map[string]bool
	// locals are the names the body assigns, by their Go names.
	locals     map[string]string
	localKinds map[string]kind
	// zero is what a return of an error puts before the error: "nil, "
	// for handlers with a result, "" for the others.
	zero string
	// results: the function returns a result (changing, probe).
	results bool
	// goName and kwargsType are the handler's, for sub-handlers.
	goName, kwargsType string
	// nested are the nested functions, for kopf.register.
	nested     map[string]Node
	registered map[string]bool

	translated, left int
	imports          map[string]bool
	b                strings.Builder
	depth            int
	pending          []string
	boolResult       bool
}

func (f *fnCtx) use(pkg string) { f.imports[pkg] = true }

func (f *fnCtx) line(format string, args ...any) {
	fmt.Fprintf(&f.b, format+"\n", args...)
}

// todo keeps a statement as a Python comment.
func (f *fnCtx) todo(n Node, why error) {
	f.left++
	src := dedent(n.Source(f.mod.Lines))
	f.line("// TODO(port): %s", why)
	for _, l := range strings.Split(src, "\n") {
		f.line("//\t%s", l)
	}
}

func dedent(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) < 2 {
		return s
	}
	min := -1
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := len(l) - len(strings.TrimLeft(l, " \t"))
		if min < 0 || ind < min {
			min = ind
		}
	}
	for i, l := range lines[1:] {
		if len(l) >= min && min > 0 {
			lines[i+1] = "    " + l[min:]
		}
	}
	return strings.Join(lines, "\n")
}

// body translates a list of statements; it reports whether the list
// ends in a translated return or raise (a terminating statement in Go).
func (f *fnCtx) body(stmts []Node) bool {
	terminated := false
	for i, s := range stmts {
		if i == 0 && s.Is("Expr") && s.Get("value").Is("Constant") {
			if _, ok := constString(s.Get("value")); ok {
				continue // a docstring
			}
		}
		if terminated {
			f.todo(s, fail("unreachable"))
			continue
		}
		terminated = f.stmt(s)
	}
	return terminated
}

// stmt translates one statement (or keeps it as a comment); it reports
// whether it terminates.
func (f *fnCtx) stmt(s Node) bool {
	mark := f.b.Len()
	before := map[string]bool{}
	for k := range f.imports {
		before[k] = true
	}
	counted := f.translated
	term, err := f.stmtCode(s)
	var u errUntranslated
	if errors.As(err, &u) {
		for k := range f.imports {
			if !before[k] {
				delete(f.imports, k)
			}
		}
		f.translated = counted
		// Drop what was written of it, keep it as Python.
		out := f.b.String()[:mark]
		f.b.Reset()
		f.b.WriteString(out)
		f.todo(s, err)
		return false
	}
	return term
}

// stmtCode writes a statement in Go, or fails.
func (f *fnCtx) stmtCode(s Node) (bool, error) {
	switch s.Type() {
	case "Pass", "Global", "Nonlocal":
		f.translated++
		return false, nil
	case "Break", "Continue":
		f.translated++
		f.line("%s", strings.ToLower(s.Type()))
		return false, nil
	case "Expr":
		if err := f.exprStmt(s.Get("value")); err != nil {
			return false, err
		}
		f.translated++
		return false, nil
	case "Assign", "AnnAssign", "AugAssign":
		if err := f.assign(s); err != nil {
			return false, err
		}
		f.translated++
		return false, nil
	case "Return":
		return true, f.ret(s)
	case "Raise":
		return true, f.raise(s)
	case "If":
		return f.ifStmt(s)
	case "For":
		return false, f.forStmt(s)
	case "While":
		if len(s.List("orelse")) > 0 {
			return false, fail("while-else")
		}
		c, err := f.expr(s.Get("test"))
		if err != nil {
			return false, err
		}
		f.translated++
		f.line("for %s {", f.asBool(c))
		f.body(s.List("body"))
		f.line("}")
		return false, nil
	case "FunctionDef", "AsyncFunctionDef":
		return false, f.nestedDef(s)
	case "Assert":
		if f.group == index || f.boolResult {
			return false, fail("assert")
		}
		return false, f.assert(s)
	}
	return false, fail("%s", strings.ToLower(s.Type()))
}

func (f *fnCtx) ifStmt(s Node) (bool, error) {
	c, err := f.expr(s.Get("test"))
	if err != nil {
		return false, err
	}
	f.translated++
	f.line("if %s {", f.asBool(c))
	t1 := f.body(s.List("body"))
	orelse := s.List("orelse")
	if len(orelse) == 0 {
		f.line("}")
		return false, nil
	}
	f.line("} else {")
	t2 := f.body(orelse)
	f.line("}")
	return t1 && t2, nil
}

func (f *fnCtx) forStmt(s Node) error {
	if len(s.List("orelse")) > 0 {
		return fail("for-else")
	}
	target := s.Get("target")
	it, err := f.expr(s.Get("iter"))
	if err != nil {
		return err
	}
	if target.Is("Name") {
		v, _ := f.name(target.Str("id"))
		f.translated++
		f.line("for _, %s = range pyIter(%s) {", v.code, it.code)
		f.body(s.List("body"))
		f.line("}")
		return nil
	}
	// A tuple target: its names are the function's locals, assigned
	// from the item by index.
	var assigns []string
	var walk func(t Node, v string) error
	walk = func(t Node, v string) error {
		switch {
		case t.Is("Name"):
			if t.Str("id") != "_" {
				x, err := f.name(t.Str("id"))
				if err != nil {
					return err
				}
				assigns = append(assigns, x.code+" = "+v)
			}
			return nil
		case t.Is("Tuple") || t.Is("List"):
			for i, e := range t.List("elts") {
				if err := walk(e, fmt.Sprintf("pyIndex(%s, %d)", v, i)); err != nil {
					return err
				}
			}
			return nil
		}
		return fail("for target")
	}
	f.depth++
	item := fmt.Sprintf("item%d", f.depth)
	defer func() { f.depth-- }()
	if err := walk(target, item); err != nil {
		return err
	}
	f.translated++
	f.line("for _, %s := range pyIter(%s) {", item, it.code)
	for _, a := range assigns {
		f.line("%s", a)
	}
	f.body(s.List("body"))
	f.line("}")
	return nil
}

// assert translates assert: an error (Python's AssertionError) when the
// condition is false.
func (f *fnCtx) assert(s Node) error {
	c, err := f.expr(s.Get("test"))
	if err != nil {
		return err
	}
	msg := expr{strconv.Quote("AssertionError: " + dedent(s.Get("test").Source(f.mod.Lines))), kStr}
	if m := s.Get("msg"); m != nil {
		if msg, err = f.expr(m); err != nil {
			return err
		}
	}
	f.use("errors")
	f.translated++
	f.line("if %s {\nreturn %serrors.New(%s)\n}", negate(f.asBool(c)), f.zero, f.asStr(msg))
	return nil
}

// ret translates return: the result of handlers that have one.
func (f *fnCtx) ret(s Node) error {
	v := s.Get("value")
	if (v == nil || v.Is("Constant") && v["value"] == nil) && !f.boolResult {
		f.translated++
		f.line("return %snil", f.zero)
		return nil
	}
	if !f.results && !f.boolResult {
		return fail("a return value of a handler without a result")
	}
	x, err := f.expr(v)
	if err != nil {
		return err
	}
	f.translated++
	if f.boolResult {
		f.line("return %s", f.asBool(x))
		return nil
	}
	f.line("return %s, nil", x.code)
	return nil
}

// raise translates Kopf's errors and raising an exception with a message.
func (f *fnCtx) raise(s Node) error {
	exc := s.Get("exc")
	if !exc.Is("Call") || f.group == index {
		return fail("raise")
	}
	name := dottedName(exc.Get("func"))
	args := exc.List("args")
	kws := map[string]Node{}
	for _, k := range exc.List("keywords") {
		kws[k.Str("arg")] = k.Get("value")
	}
	msg := expr{`""`, kStr}
	if len(args) > 0 {
		var err error
		if msg, err = f.expr(args[0]); err != nil {
			return err
		}
	}
	var code string
	switch name {
	case "kopf.TemporaryError":
		delay := "0"
		if d, ok := kws["delay"]; ok {
			n, ok := constNumber(d)
			if !ok {
				return fail("delay")
			}
			f.use("time")
			delay = "time.Duration(" + n + " * float64(time.Second))"
		}
		code = "kopf.NewTemporaryError(" + f.asStr(msg) + ", " + delay + ")"
	case "kopf.PermanentError":
		code = `kopf.NewPermanentError("%s", ` + f.asStr(msg) + ")"
	case "kopf.AdmissionError":
		c := "0"
		if d, ok := kws["code"]; ok {
			n, ok := constNumber(d)
			if !ok {
				return fail("code")
			}
			c = n
		}
		code = "kopf.NewAdmissionError(" + f.asStr(msg) + ", " + c + ")"
	default:
		if len(kws) > 0 || !exc.Get("func").Is("Name") {
			return fail("raise")
		}
		f.use("errors")
		if len(args) == 0 {
			msg = expr{strconv.Quote(name), kStr}
		}
		code = "errors.New(" + f.asStr(msg) + ")"
	}
	if strings.HasPrefix(code, "kopf.") {
		f.use("kopf")
	}
	f.translated++
	f.line("return %s%s", f.zero, code)
	return nil
}

// assign translates assignments to locals, the patch, the memo, the
// settings and subscripts.
func (f *fnCtx) assign(s Node) error {
	var target Node
	switch s.Type() {
	case "Assign":
		ts := s.List("targets")
		if len(ts) != 1 {
			return fail("assignment")
		}
		target = ts[0]
	default:
		target = s.Get("target")
	}
	val := s.Get("value")
	if val == nil {
		return nil // a bare annotation
	}
	if settingsPath(target) != nil && f.group == activity {
		return f.setting(target, val)
	}
	x, err := f.expr(val)
	if err != nil {
		return err
	}
	if s.Is("AugAssign") {
		cur, err := f.expr(target)
		if err != nil {
			return err
		}
		op := s.Get("op").Type()
		if op != "Add" && op != "Sub" && op != "Mult" {
			return fail("operator")
		}
		x = expr{"py" + op[:3] + "(" + cur.code + ", " + x.code + ")", kAny}
	}
	lhs, err := f.target(target)
	if err != nil {
		return err
	}
	f.line("%s = %s", lhs, x.code)
	return nil
}

// target is the Go of an assignment's target.
func (f *fnCtx) target(t Node) (string, error) {
	switch t.Type() {
	case "Name":
		x, err := f.name(t.Str("id"))
		if err != nil || !strings.HasPrefix(x.code, "kw.Memo[") && f.locals[t.Str("id")] == "" {
			return "", fail("target %s", t.Str("id"))
		}
		return x.code, nil
	case "Attribute":
		x, err := f.attribute(t)
		return x.code, err
	case "Subscript":
		key, err := f.expr(sliceOf(t))
		if err != nil || key.kind != kStr {
			return "", fail("subscript")
		}
		if path := patchPath(t.Get("value")); path != nil && f.params["patch"] {
			return "kw.Patch.Dict(" + strings.Join(path, ", ") + ")[" + key.code + "]", nil
		}
		base, err := f.expr(t.Get("value"))
		if err != nil {
			return "", err
		}
		return "pyDict(" + base.code + ")[" + key.code + "]", nil
	}
	return "", fail("target")
}

// patchPath is the path of patch.a.b['c'] (quoted), nil if n is not one.
func patchPath(n Node) []string {
	switch n.Type() {
	case "Name":
		if n.Str("id") == "patch" {
			return []string{}
		}
	case "Attribute":
		if p := patchPath(n.Get("value")); p != nil {
			return append(p, strconv.Quote(n.Str("attr")))
		}
	case "Subscript":
		if p := patchPath(n.Get("value")); p != nil {
			if k, ok := constString(sliceOf(n)); ok {
				return append(p, strconv.Quote(k))
			}
		}
	}
	return nil
}

// settingsPath is the path of settings.a.b, nil if n is not one.
func settingsPath(n Node) []string {
	name := dottedName(n)
	rest, ok := strings.CutPrefix(name, "settings.")
	if !ok {
		return nil
	}
	return strings.Split(rest, ".")
}

// setting translates settings.a.b = v in a startup handler into the
// field of kopf-go's settings of the same name, checked against the type.
func (f *fnCtx) setting(target, val Node) error {
	t := reflect.TypeOf(settings.Settings{})
	var goPath []string
	for _, part := range settingsPath(target) {
		if t.Kind() != reflect.Struct {
			return fail("settings")
		}
		fld, ok := t.FieldByNameFunc(func(s string) bool {
			return strings.EqualFold(s, strings.ReplaceAll(part, "_", ""))
		})
		if !ok {
			return fail("settings.%s has no equivalent", part)
		}
		goPath = append(goPath, fld.Name)
		t = fld.Type
	}
	if t == reflect.TypeFor[*settings.WebhookServer]() {
		return f.webhookServer(strings.Join(goPath, "."), val)
	}
	code, err := f.settingValue(t, val)
	if err != nil {
		return err
	}
	f.line("kw.Settings.%s = %s", strings.Join(goPath, "."), code)
	return nil
}

func (f *fnCtx) settingValue(t reflect.Type, val Node) (string, error) {
	levels := map[string]string{"logging.DEBUG": "slog.LevelDebug", "logging.INFO": "slog.LevelInfo",
		"logging.WARNING": "slog.LevelWarn", "logging.WARN": "slog.LevelWarn", "logging.ERROR": "slog.LevelError",
		"logging.CRITICAL": "slog.LevelError"}
	switch {
	case t.String() == "slog.Level":
		if l, ok := levels[dottedName(val)]; ok {
			f.use("log/slog")
			return l, nil
		}
	case t.String() == "time.Duration":
		if n, ok := constNumber(val); ok {
			f.use("time")
			return "time.Duration(" + n + " * float64(time.Second))", nil
		}
	case t.Kind() == reflect.String:
		if s, ok := constString(val); ok {
			return strconv.Quote(s), nil
		}
	case t.Kind() == reflect.Bool:
		if b, ok := constBool(val); ok {
			return strconv.FormatBool(b), nil
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
		if n, ok := constNumber(val); ok {
			return n, nil
		}
	}
	return "", fail("a value of settings")
}

// collectLocals finds the names a function assigns (not in nested
// functions, lambdas and comprehensions), sorted.
func collectLocals(body []Node, params map[string]bool) []string {
	seen := map[string]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		if n == nil {
			return
		}
		switch n.Type() {
		case "FunctionDef", "AsyncFunctionDef", "ClassDef":
			seen[n.Str("name")] = true
			return
		case "Lambda", "ListComp", "SetComp", "DictComp", "GeneratorExp":
			return
		case "Name":
			if n.Get("ctx").Is("Store") {
				seen[n.Str("id")] = true
			}
		case "Global", "Nonlocal":
			for _, name := range n["names"].([]any) {
				seen["\x00"+name.(string)] = true
			}
		}
		for k, v := range n {
			switch v := v.(type) {
			case map[string]any:
				if k != "_type" {
					walk(v)
				}
			case []any:
				for _, e := range v {
					if m, ok := e.(map[string]any); ok {
						walk(m)
					}
				}
			}
		}
	}
	for _, s := range body {
		walk(s)
	}
	var out []string
	for name := range seen {
		if name != "_" && !strings.HasPrefix(name, "\x00") && !seen["\x00"+name] && !params[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// goLocal is a Python local's Go name.
func goLocal(name string) string {
	switch name {
	case "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for", "func",
		"go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select", "struct",
		"switch", "type", "var", "kw", "ctx", "err", "any", "string", "int", "bool", "len", "nil", "true", "false":
		return name + "_"
	}
	return name
}
