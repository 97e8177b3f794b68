package port

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kopf-go/kopf/generator/builtins"
	"github.com/kopf-go/kopf/runtime/registry"
)

// signatures are the Go results of each group's functions, with what a
// return of an error puts before it and the final return.
var signatures = map[group]struct{ results, zero, final string }{
	changing: {"(any, error)", "nil, ", "return nil, nil"}, event: {"error", "", "return nil"},
	daemon: {"error", "", "return nil"}, timer: {"error", "", "return nil"},
	index: {"map[string]any", "", "return nil"}, activity: {"error", "", "return nil"},
	login: {"(*kopf.ConnectionInfo, error)", "nil, ", "return nil, nil"}, probe: {"(any, error)", "nil, ", "return nil, nil"},
	admission: {"error", "", "return nil"},
}

// handler ports a decorated function: its markers and its body.
func (p *porter) handler(def Node, imports map[string]bool) (string, error) {
	goName := goFuncName(def.Str("name"))
	ms, notes, g := p.markers(def, goName)
	typed := false
	for _, m := range ms {
		if m.resource != nil && m.resource.builtin != nil {
			typed = true
		}
	}
	sig := signatures[g]
	f := p.fnCtx(g, def, typed)
	f.goName, f.kwargsType = goName, goName+"Kwargs"
	f.zero, f.results = sig.zero, g == changing || g == probe
	f.declare(collectLocals(def.List("body"), f.params))
	f.header()
	term := f.body(def.List("body"))
	for name, n := range f.nested {
		if !f.registered[name] {
			f.translated--
			f.todo(n, fail("a nested function not registered as a sub-handler"))
		}
	}
	if !term {
		f.line("%s", sig.final)
	}
	for i := range f.imports {
		imports[i] = true
	}
	if strings.Contains(sig.results, "kopf.") {
		imports["kopf"] = true
	}
	p.stats.Statements += f.translated + f.left
	p.stats.StatementsTranslated += f.translated
	p.stats.Handlers = append(p.stats.Handlers, HandlerStats{File: p.mod.Path, Python: def.Str("name"), Go: goName,
		Translated: f.translated, Left: f.left, DecoratorsUntranslated: len(notes)})
	var b strings.Builder
	fmt.Fprintf(&b, "// %s is ported from %s (%s:%d).\n", goName, def.Str("name"), baseName(p.mod.Path), def.Line())
	fmt.Fprintf(&b, "// Statements: %d translated, %d left as TODO(port).\n", f.translated, f.left)
	for _, n := range notes {
		fmt.Fprintf(&b, "// TODO(port): %s\n", strings.ReplaceAll(n, "\n", " "))
	}
	b.WriteString("//\n")
	for _, m := range ms {
		b.WriteString(m.String() + "\n")
	}
	fmt.Fprintf(&b, "func %s(ctx context.Context, kw %sKwargs) %s {\n%s}\n\n", goName, goName, sig.results, f.b.String())
	return b.String(), nil
}

// markers ports a function's decorators to its markers, written in the
// decorators' order, with the notes of what was not ported and the kind
// of handler they register.
func (p *porter) markers(def Node, goName string) ([]marker, []string, group) {
	decs := def.List("decorator_list")
	var ms []marker
	var notes []string
	g := group(-1)
	// Python applies decorators bottom to top, so Kopf registers the
	// bottom one first; so does kopf-gen with a function's markers. The
	// markers are collected in Kopf's order (for distinctIDs, which names
	// the later ones apart), then written in the decorators' order.
	for i := len(decs) - 1; i >= 0; i-- {
		name, call := decoratorName(decs[i])
		d, ok := decoratorMarkers[name]
		if !ok {
			notes = append(notes, "decorator not ported: @"+p.source(decs[i]))
			continue
		}
		p.stats.Decorators++
		switch {
		case g < 0:
			g = d.group
		case g != d.group:
			notes = append(notes, "decorator of another kind of handler, not ported: @"+p.source(decs[i]))
			continue
		}
		m := p.translateDecorator(def, name, call, goName)
		if len(m.todo) == 0 {
			p.stats.DecoratorsTranslated++
		}
		for _, t := range m.todo {
			notes = append(notes, "decorator argument not ported: "+t)
		}
		if g == admission {
			p.webhooks = true
		}
		ms = append(ms, m)
	}
	notes = append(notes, distinctIDs(ms, goName)...)
	slices.Reverse(ms)
	return ms, notes, g
}

// distinctIDs gives a distinct id to a stacked marker that Kopf registers
// under the same id as an earlier one of the function, for the same
// resource, with other options, where kopf-gen cannot keep Kopf's id:
// markers with equal options are merged into one registration, and
// changing markers (on.create/update/delete/resume/field) with other
// options and no reason in common are registrations of that one id, as in
// Kopf; any other repetition (a reason in common, daemons, timers, events)
// would be two registrations of one id, which kopf-gen refuses. The id
// gets the marker's name (create_fn/resume). It returns a note for each,
// since the handler's progress in the objects is then stored under another
// id than Kopf's.
func distinctIDs(ms []marker, goName string) []string {
	first := map[string][]registered{} // selector and id: the markers so far
	var notes []string
	for i := range ms {
		m := &ms[i]
		if m.resource == nil || len(m.args) == 0 {
			continue
		}
		id := registry.DefaultID(goName)
		var options []string
		field := "" // field= is a part of the id (fn/spec.x)
		at := -1
		for j, a := range m.args[1:] {
			if strings.HasPrefix(a, "field=") {
				field = a
			}
			switch {
			case strings.HasPrefix(a, "id="):
				id, at = strings.Trim(strings.TrimPrefix(a, "id="), `"`), j+1
			case !strings.HasPrefix(a, "deleted=") && !strings.HasPrefix(a, "optional="):
				options = append(options, a)
			}
		}
		key := m.args[0] + " " + id + " " + field
		this := registered{strings.Join(options, " "), changingReasons[m.name]}
		if keepsID(first[key], this.options, this.reasons) {
			first[key] = append(first[key], this)
			continue
		}
		distinct := "id=" + quoteIfNeeded(id+"/"+strings.TrimPrefix(m.name, "on."))
		if at > 0 {
			m.args[at] = distinct
		} else {
			m.args = append(m.args[:1:1], append([]string{distinct}, m.args[1:]...)...)
		}
		why := "and a cause in common"
		if len(this.reasons) == 0 {
			why = "(kopf-gen registers an id once for daemons, timers and event handlers)"
		}
		notes = append(notes, fmt.Sprintf("@kopf.%s is registered by Kopf under id %q too, with other options than the decorator below it %s; kopf-gen needs a distinct %s (its progress in the objects is stored under it)", m.name, id, why, distinct))
	}
	return notes
}

// registered is a marker seen by distinctIDs: its options other than
// deleted= and optional=, and its reasons (none: not a changing marker).
type registered struct {
	options string
	reasons []string
}

// changingReasons are the causes of the changing markers (as kopf-gen's
// model registers them).
var changingReasons = map[string][]string{
	"on.create": {"create"}, "on.update": {"update"}, "on.delete": {"delete"},
	"on.resume": {"resume"}, "on.field": {"create", "update"},
}

// keepsID reports whether a marker with these options and reasons can keep
// an id that the earlier markers prev of the function have: it is the
// first, or its options equal the first's (merged), or it is a changing
// marker with no reason in common with them.
func keepsID(prev []registered, options string, reasons []string) bool {
	if len(prev) == 0 || prev[0].options == options {
		return true
	}
	if len(reasons) == 0 {
		return false
	}
	for _, p := range prev {
		if len(p.reasons) == 0 {
			return false
		}
		for _, r := range p.reasons {
			if slices.Contains(reasons, r) {
				return false
			}
		}
	}
	return true
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// callbackCode writes a filter's callback: its Python source in a
// comment, its body translated where it can be.
func (p *porter) callbackCode(c *callback, imports map[string]bool) string {
	var params []Node
	if c.py.Is("Lambda") {
		params = c.py.Get("args").List("args")
	} else {
		params = c.py.Get("args").List("args")
	}
	g := c.group
	f := p.fnCtx(g, nil, strings.Contains(c.kwargsType, "Typed"))
	f.params = paramsOf(c.py)
	var sig string
	switch c.use {
	case whenCallback:
		sig = "kw " + c.kwargsType
	case metaCallback:
		sig = "value string, kw kopf.ResourceKwargs"
	case valueCallback:
		sig = "value any, kw kopf.ResourceKwargs"
	}
	if c.use != whenCallback && len(params) > 0 {
		first := params[0].Str("arg")
		f.locals[first] = "value"
		f.localKinds[first] = map[callbackUse]kind{metaCallback: kStr, valueCallback: kAny}[c.use]
		delete(f.params, first)
	}
	f.zero = ""
	f.boolResult = true
	if c.py.Is("Lambda") {
		x, err := f.expr(c.py.Get("body"))
		if err != nil {
			f.todo(c.py.Get("body"), err)
			f.line("return false")
		} else {
			f.translated++
			f.line("return %s", f.asBool(x))
		}
	} else {
		f.declare(collectLocals(c.py.List("body"), f.params))
		f.header()
		if !f.body(c.py.List("body")) {
			f.line("return false")
		}
	}
	for i := range f.imports {
		imports[i] = true
	}
	imports["kopf"] = true
	for _, b := range builtinsIn(c.kwargsType) {
		imports[b] = true
	}
	p.stats.Statements += f.translated + f.left
	p.stats.StatementsTranslated += f.translated
	var b strings.Builder
	fmt.Fprintf(&b, "// %s is a filter's callback, ported from (%s:%d):\n//\n", c.goName, baseName(p.mod.Path), c.py.Line())
	for _, l := range strings.Split(p.source(c.py), "\n") {
		fmt.Fprintf(&b, "//\t%s\n", l)
	}
	fmt.Fprintf(&b, "func %s(%s) bool {\n%s}\n\n", c.goName, sig, f.b.String())
	return b.String()
}

// builtinsIn are the imports (alias "path") of the built-in types that a
// kwargs type names.
func builtinsIn(t string) []string {
	var out []string
	for _, b := range builtins.Table() {
		if strings.Contains(t, "["+b.Alias+"."+b.Kind+"]") {
			out = append(out, b.Alias+" "+strconv.Quote(b.Package))
		}
	}
	return out
}
