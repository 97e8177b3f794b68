package port

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kopf-go/kopf/runtime/registry"
)

// group is the kind of Go function a marker asks for: its kwargs and what
// it returns.
type group int

const (
	changing group = iota
	event
	daemon
	timer
	index
	activity
	login
	probe
	admission
)

// decoratorMarkers maps Kopf's decorators (kopf.on.create...) to kopf-gen's
// markers and the group of their functions.
var decoratorMarkers = map[string]struct {
	marker string
	group  group
}{
	"on.resume": {"on.resume", changing}, "on.create": {"on.create", changing},
	"on.update": {"on.update", changing}, "on.delete": {"on.delete", changing},
	"on.field": {"on.field", changing}, "on.event": {"on.event", event},
	"daemon": {"daemon", daemon}, "timer": {"timer", timer}, "index": {"index", index},
	"on.startup": {"on.startup", activity}, "on.cleanup": {"on.cleanup", activity},
	"on.login": {"on.login", login}, "on.probe": {"on.probe", probe},
	"on.validate": {"on.validate", admission}, "on.mutate": {"on.mutate", admission},
}

// marker is one //kopf: line and what was left of its decorator.
type marker struct {
	name string
	args []string
	// todo lists the decorator's arguments that have no translation.
	todo []string
	// resource is the resolved resource (nil for activities).
	resource *resourceRef
}

func (m marker) String() string {
	return strings.TrimSpace("//kopf:" + m.name + " " + strings.Join(m.args, " "))
}

// callbackUse is how a filter calls a Python function or lambda.
type callbackUse int

const (
	whenCallback  callbackUse = iota // when=: func(kw K) bool
	metaCallback                     // labels=/annotations= values: func(value string, kw kopf.ResourceKwargs) bool
	valueCallback                    // value=, old=, new=: func(value any, kw kopf.ResourceKwargs) bool
)

// callback is a Go stub for a filter's Python callback.
type callback struct {
	goName string
	use    callbackUse
	// kwargsType is the kwargs type of a when= callback.
	kwargsType string
	// py is the FunctionDef or Lambda.
	py Node
	// group is the group of the handlers whose when= it is.
	group group
}

// decoratorName returns the decorator's Kopf name ("on.create", "daemon",
// "subhandler", "register"...) and its call node, or "" when it is not
// Kopf's.
func decoratorName(dec Node) (string, Node) {
	call := Node(nil)
	if dec.Is("Call") {
		call, dec = dec, dec.Get("func")
	}
	name := dottedName(dec)
	rest, ok := strings.CutPrefix(name, "kopf.")
	if !ok {
		return "", nil
	}
	return rest, call
}

// dottedName is a.b.c for Name and Attribute chains, "" otherwise.
func dottedName(n Node) string {
	switch n.Type() {
	case "Name":
		return n.Str("id")
	case "Attribute":
		if base := dottedName(n.Get("value")); base != "" {
			return base + "." + n.Str("attr")
		}
	}
	return ""
}

// goFuncName is the Go name of a Python function: CamelCase, exported,
// with an underscore kept before a digit (create_fn_1 → CreateFn_1), as
// registry.DefaultID reads it back.
func goFuncName(py string) string {
	var b strings.Builder
	up := true
	for i, r := range py {
		switch {
		case r == '_':
			if i+1 < len(py) && py[i+1] >= '0' && py[i+1] <= '9' && b.Len() > 0 {
				b.WriteByte('_')
			}
			up = true
		case up:
			b.WriteString(strings.ToUpper(string(r)))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 || !isLetter(b.String()[0]) {
		return "X" + b.String()
	}
	return b.String()
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

// translateDecorator turns one of Kopf's handler decorators into a marker.
func (p *porter) translateDecorator(fn Node, name string, call Node, goName string) marker {
	def := decoratorMarkers[name]
	m := marker{name: def.marker}
	var args, kwargs []Node
	if call != nil {
		args = call.List("args")
		kwargs = call.List("keywords")
	}
	if def.group != activity && def.group != login && def.group != probe {
		res, todo := p.resolveResource(args, kwargs)
		m.resource = res
		m.args = append(m.args, res.selector())
		m.todo = append(m.todo, todo...)
	} else if len(args) > 0 {
		m.todo = append(m.todo, "positional arguments")
	}
	id := fn.Str("name")
	for _, kw := range kwargs {
		key := kw.Str("arg")
		if resourceKeywords[key] {
			continue
		}
		v := kw.Get("value")
		switch key {
		case "id":
			if s, ok := constString(v); ok {
				id = s
				continue
			}
		case "field":
			if f, ok := fieldPath(v); ok {
				m.args = append(m.args, "field="+f)
				continue
			}
		case "registry":
			continue
		}
		if arg, ok := p.option(key, v, goName, def.group, m.resource); ok {
			m.args = append(m.args, arg)
			continue
		}
		m.todo = append(m.todo, key+"="+p.source(v))
	}
	// kopf-gen's default id is the Go name's in Kopf's spelling; Kopf's
	// is the Python name. Field handlers append the field to either.
	if registry.DefaultID(goName) != id {
		at := 0
		if m.resource != nil {
			at = 1
		}
		m.args = append(m.args[:at:at], append([]string{"id=" + quoteIfNeeded(id)}, m.args[at:]...)...)
	}
	return m
}

// resourceKeywords are the decorator keywords that name the resource.
var resourceKeywords = map[string]bool{"group": true, "version": true, "kind": true, "plural": true,
	"singular": true, "shortcut": true, "category": true}

// option translates one keyword of a decorator into a marker argument.
func (p *porter) option(key string, v Node, goName string, g group, res *resourceRef) (string, bool) {
	switch key {
	case "param":
		if s, ok := constString(v); ok {
			return "param=" + strconv.Quote(s), true
		}
	case "errors":
		if n := dottedName(v); strings.HasPrefix(n, "kopf.ErrorsMode.") {
			return "errors=" + strings.ToLower(strings.TrimPrefix(n, "kopf.ErrorsMode.")), true
		}
	case "timeout", "retries", "backoff", "interval", "idle", "initial_delay",
		"cancellation_backoff", "cancellation_timeout", "cancellation_polling":
		if s, ok := constNumber(v); ok {
			return key + "=" + s, true
		}
	case "deleted", "optional", "sharp", "persistent", "side_effects", "ignore_failures":
		if b, ok := constBool(v); ok {
			return key + "=" + strconv.FormatBool(b), true
		}
	case "operation":
		if s, ok := constString(v); ok {
			return "operations=[" + s + "]", true
		}
	case "operations":
		if ops, ok := stringList(v); ok {
			return "operations=[" + strings.Join(ops, ", ") + "]", true
		}
	case "subresource":
		if s, ok := constString(v); ok {
			return "subresource=" + quoteIfNeeded(s), true
		}
	case "labels", "annotations":
		return p.metaFilter(key, v, goName)
	case "value", "old", "new":
		return p.valueFilter(key, v, goName)
	case "when":
		cb, ok := p.addCallback(v, goName, "when", whenCallback, kwargsTypeOf(g, res), g)
		if ok {
			return "when=" + cb, true
		}
	}
	return "", false
}

// metaFilter translates labels={...} and annotations={...}.
func (p *porter) metaFilter(key string, v Node, goName string) (string, bool) {
	if !v.Is("Dict") {
		return "", false
	}
	var parts []string
	values := v.List("values")
	for i, k := range v.List("keys") {
		ks, ok := constString(k)
		if !ok {
			return "", false
		}
		val := values[i]
		var out string
		switch {
		case dottedName(val) == "kopf.PRESENT":
			out = "PRESENT"
		case dottedName(val) == "kopf.ABSENT":
			out = "ABSENT"
		default:
			if s, ok := constString(val); ok {
				out = strconv.Quote(s)
			} else if cb, ok := p.addCallback(val, goName, key+" "+ks, metaCallback, "", callbackGroup); ok {
				out = "fn:" + cb
			} else {
				return "", false
			}
		}
		parts = append(parts, quoteIfNeeded(ks)+": "+out)
	}
	return key + "={" + strings.Join(parts, ", ") + "}", true
}

// valueFilter translates value=, old= and new=.
func (p *porter) valueFilter(key string, v Node, goName string) (string, bool) {
	switch {
	case dottedName(v) == "kopf.PRESENT":
		return key + "=PRESENT", true
	case dottedName(v) == "kopf.ABSENT":
		return key + "=ABSENT", true
	}
	if s, ok := constString(v); ok {
		return key + "=" + strconv.Quote(s), true
	}
	if s, ok := constNumber(v); ok {
		return key + "=" + s, true
	}
	if b, ok := constBool(v); ok {
		return key + "=" + strconv.FormatBool(b), true
	}
	if cb, ok := p.addCallback(v, goName, key, valueCallback, "", callbackGroup); ok {
		return key + "=fn:" + cb, true
	}
	return "", false
}

// addCallback records a filter's callback (a module function or a lambda)
// and returns its Go name.
func (p *porter) addCallback(v Node, goName, what string, use callbackUse, kwargsType string, g group) (string, bool) {
	var py Node
	var name string
	switch {
	case v.Is("Lambda"):
		py = v
		name = lowerFirst(goName) + goFuncName(strings.ReplaceAll(strings.ReplaceAll(what, " ", "_"), ".", "_"))
	case v.Is("Name"):
		fn, ok := p.funcs[v.Str("id")]
		if !ok {
			return "", false
		}
		py = fn
		name = lowerFirst(goFuncName(v.Str("id")))
		if use == whenCallback {
			name += kwargsSuffix(kwargsType)
		}
	default:
		return "", false
	}
	if prev, ok := p.callbacks[name]; ok {
		if prev.use != use || prev.kwargsType != kwargsType {
			return "", false
		}
		return name, true
	}
	p.callbacks[name] = &callback{goName: name, use: use, kwargsType: kwargsType, py: py, group: g}
	p.callbackOrder = append(p.callbackOrder, name)
	return name, true
}

// kwargsSuffix tells apart the stubs of one when= function for kinds of
// handlers with other kwargs.
func kwargsSuffix(t string) string {
	switch {
	case strings.Contains(t, "Changing"):
		return ""
	case strings.Contains(t, "Event"):
		return "ForEvents"
	case strings.Contains(t, "Daemon"):
		return "ForDaemons"
	case strings.Contains(t, "Timer"):
		return "ForTimers"
	case strings.Contains(t, "Admission"):
		return "ForWebhooks"
	case strings.Contains(t, "Index"):
		return "ForIndices"
	}
	return ""
}

// kwargsTypeOf is the kwargs type of a group of handlers of a resource, as
// when= callbacks take it.
func kwargsTypeOf(g group, res *resourceRef) string {
	base := map[group]string{changing: "ChangingKwargs", event: "EventKwargs", daemon: "DaemonKwargs",
		timer: "TimerKwargs", admission: "AdmissionKwargs", index: "IndexKwargs"}[g]
	if res != nil && res.builtin != nil {
		return "kopf.Typed" + base + "[" + res.builtin.Alias + "." + res.builtin.Kind + "]"
	}
	return "kopf." + base
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// quoteIfNeeded quotes a marker value that is not a bare word.
func quoteIfNeeded(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./", r)) {
			return strconv.Quote(s)
		}
	}
	if s == "" || s == "true" || s == "false" || s == "PRESENT" || s == "ABSENT" {
		return strconv.Quote(s)
	}
	return s
}

// fieldPath translates field='a.b' or field=['a', 'b.c'].
func fieldPath(v Node) (string, bool) {
	if s, ok := constString(v); ok {
		return s, true
	}
	parts, ok := stringList(v)
	if !ok {
		return "", false
	}
	dotted := true
	for _, p := range parts {
		if strings.Contains(p, ".") {
			dotted = false
		}
	}
	if dotted {
		return strings.Join(parts, "."), true
	}
	q := make([]string, len(parts))
	for i, p := range parts {
		q[i] = quoteIfNeeded(p)
	}
	return "[" + strings.Join(q, ", ") + "]", true
}

func constString(n Node) (string, bool) {
	if !n.Is("Constant") {
		return "", false
	}
	s, ok := n["value"].(string)
	return s, ok
}

func constBool(n Node) (bool, bool) {
	if !n.Is("Constant") {
		return false, false
	}
	b, ok := n["value"].(bool)
	return b, ok
}

// constNumber is an int or float constant as written in a marker.
func constNumber(n Node) (string, bool) {
	if !n.Is("Constant") {
		return "", false
	}
	switch v := n["value"].(type) {
	case fmt.Stringer: // json.Number
		return v.String(), true
	case map[string]any:
		if f, ok := v["_float"].(string); ok {
			return f, true
		}
	}
	return "", false
}

func stringList(n Node) ([]string, bool) {
	if !n.Is("List", "Tuple", "Set") {
		return nil, false
	}
	var out []string
	for _, e := range n.List("elts") {
		s, ok := constString(e)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
