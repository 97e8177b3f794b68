package port

import (
	"strconv"
	"strings"
)

// logLevels maps a logger's methods to slog's.
var logLevels = map[string]string{"debug": "Debug", "info": "Info", "warning": "Warn", "warn": "Warn",
	"error": "Error", "exception": "Error", "critical": "Error"}

// exprStmt translates a call as a statement: print, logger.*, kopf's
// events and hierarchies, warnings.append, sleeps, kopf.register.
func (f *fnCtx) exprStmt(v Node) error {
	if v.Is("Await") {
		v = v.Get("value")
	}
	if !v.Is("Call") {
		return fail("expression")
	}
	fn := v.Get("func")
	name := dottedName(fn)
	args := v.List("args")
	kws := map[string]Node{}
	for _, k := range v.List("keywords") {
		if k.Str("arg") == "" {
			return fail("**kwargs")
		}
		kws[k.Str("arg")] = k.Get("value")
	}
	switch {
	case name == "print":
		return f.print(args, kws)
	case name == "pprint.pprint" && len(args) == 1 && len(kws) == 0:
		x, err := f.expr(args[0])
		if err != nil {
			return err
		}
		f.use("fmt")
		f.use("pyfmt")
		f.line("fmt.Println(pyfmt.Pformat(%s))", x.code)
		return nil
	case strings.HasPrefix(name, "logger.") && f.params["logger"]:
		return f.log(strings.TrimPrefix(name, "logger."), args, kws)
	case name == "kopf.info" || name == "kopf.warn" || name == "kopf.event" || name == "kopf.exception":
		return f.post(strings.TrimPrefix(name, "kopf."), args, kws)
	case name == "kopf.adopt" || name == "kopf.label":
		return f.hierarchy(strings.TrimPrefix(name, "kopf."), args, kws)
	case name == "warnings.append" && f.params["warnings"] && f.group == admission && len(args) == 1:
		x, err := f.expr(args[0])
		if err != nil {
			return err
		}
		f.line("*kw.Warnings = append(*kw.Warnings, %s)", f.asStr(x))
		return nil
	case name == "asyncio.sleep" || name == "time.sleep" || name == "stopped.wait" && f.params["stopped"]:
		if len(args) != 1 {
			return fail("sleep")
		}
		x, err := f.expr(args[0])
		if err != nil {
			return err
		}
		if name == "stopped.wait" {
			f.line("pyWait(ctx, kw.Stopped, %s)", x.code)
			return nil
		}
		f.line("if err := pySleep(ctx, %s); err != nil {\nreturn %serr\n}", x.code, f.zero)
		return nil
	case name == "kopf.register":
		return f.register(args, kws)
	}
	return fail("call %s", name)
}

func (f *fnCtx) print(args []Node, kws map[string]Node) error {
	if len(kws) > 0 {
		return fail("print's keywords")
	}
	var parts []string
	for _, a := range args {
		x, err := f.expr(a)
		if err != nil {
			return err
		}
		parts = append(parts, f.asStr(x))
	}
	f.use("fmt")
	f.line("fmt.Println(%s)", strings.Join(parts, ", "))
	return nil
}

// log translates logger.info(msg, *args): args are formatted into the
// message with %, as Python's logging does.
func (f *fnCtx) log(method string, args []Node, kws map[string]Node) error {
	level, ok := logLevels[method]
	if !ok || len(args) == 0 || len(kws) > 0 {
		return fail("logger.%s", method)
	}
	msg, err := f.expr(args[0])
	if err != nil {
		return err
	}
	code := f.asStr(msg)
	if len(args) > 1 {
		format, ok := constString(args[0])
		if !ok {
			return fail("logger's format")
		}
		var goArgs []string
		var out strings.Builder
		i := 1
		for j := 0; j < len(format); j++ {
			c := format[j]
			if c != '%' || j+1 >= len(format) {
				out.WriteByte(c)
				continue
			}
			j++
			switch format[j] {
			case '%':
				out.WriteString("%%")
				continue
			case 's', 'r', 'd':
			default:
				return fail("logger's format")
			}
			if i >= len(args) {
				return fail("logger's arguments")
			}
			x, err := f.expr(args[i])
			if err != nil {
				return err
			}
			i++
			out.WriteString("%s")
			if format[j] == 'r' {
				f.use("pyfmt")
				goArgs = append(goArgs, "pyfmt.Repr("+x.code+")")
			} else {
				goArgs = append(goArgs, f.asStr(x))
			}
		}
		f.use("fmt")
		code = "fmt.Sprintf(" + strconv.Quote(out.String()) + ", " + strings.Join(goArgs, ", ") + ")"
	}
	f.line("kw.Logger.%s(%s)", level, code)
	return nil
}

// post translates kopf.info/warn/event/exception(body, ...).
func (f *fnCtx) post(fn string, args []Node, kws map[string]Node) error {
	if len(args) != 1 || !args[0].Is("Name") || args[0].Str("id") != "body" || !f.params["body"] {
		return fail("kopf.%s of another object than the handler's", fn)
	}
	get := func(key string, pos int) (string, error) {
		v, ok := kws[key]
		if !ok {
			return `""`, nil
		}
		x, err := f.expr(v)
		if err != nil {
			return "", err
		}
		return f.asStr(x), nil
	}
	typ, err := get("type", 0)
	if err != nil {
		return err
	}
	reason, err := get("reason", 0)
	if err != nil {
		return err
	}
	message, err := get("message", 0)
	if err != nil {
		return err
	}
	f.use("kopf")
	switch fn {
	case "event":
		f.line("kopf.Event(ctx, kw.Body, %s, %s, %s)", typ, reason, message)
	case "info":
		f.line("kopf.Info(ctx, kw.Body, %s, %s)", reason, message)
	case "warn":
		f.line("kopf.Warn(ctx, kw.Body, %s, %s)", reason, message)
	case "exception":
		f.line("kopf.Exception(ctx, kw.Body, %s, nil, %s)", reason, message)
	}
	return nil
}

// hierarchy translates kopf.adopt(obj) and kopf.label(obj, {...}) for the
// handler's object as the owner.
func (f *fnCtx) hierarchy(fn string, args []Node, kws map[string]Node) error {
	if len(kws) > 0 || len(args) == 0 || f.group == activity || f.group == login || f.group == probe {
		return fail("kopf.%s", fn)
	}
	obj, err := f.expr(args[0])
	if err != nil {
		return err
	}
	f.use("kopf")
	switch {
	case fn == "adopt" && len(args) == 1:
		f.line("if err := kopf.Adopt(%s, kopf.OwnerOfBody(kw.Body)); err != nil {\nreturn %serr\n}", obj.code, f.zero)
	case fn == "label" && len(args) == 2 && args[1].Is("Dict"):
		var parts []string
		vals := args[1].List("values")
		for i, k := range args[1].List("keys") {
			ks, ok1 := constString(k)
			vs, ok2 := constString(vals[i])
			if !ok1 || !ok2 {
				return fail("kopf.label's labels")
			}
			parts = append(parts, strconv.Quote(ks)+": "+strconv.Quote(vs))
		}
		f.line("if err := kopf.Label(%s, map[string]string{%s}); err != nil {\nreturn %serr\n}", obj.code, strings.Join(parts, ", "), f.zero)
	default:
		return fail("kopf.%s", fn)
	}
	return nil
}

// nestedDef translates @kopf.subhandler functions into sub-handlers
// registered at once, and keeps undecorated ones for kopf.register.
func (f *fnCtx) nestedDef(s Node) error {
	decs := s.List("decorator_list")
	if len(decs) == 0 {
		f.nested[s.Str("name")] = s
		f.translated++
		return nil
	}
	name, call := decoratorName(decs[0])
	if len(decs) != 1 || name != "subhandler" {
		return fail("a nested function")
	}
	var kws []Node
	if call != nil {
		kws = call.List("keywords")
	}
	return f.subhandler(s, kws)
}

// register translates kopf.register(fn, id=...) of a nested function.
func (f *fnCtx) register(args []Node, kws map[string]Node) error {
	if len(args) != 1 || !args[0].Is("Name") {
		return fail("kopf.register")
	}
	def, ok := f.nested[args[0].Str("id")]
	if !ok {
		return fail("kopf.register of a function defined elsewhere")
	}
	var list []Node
	for k, v := range kws {
		list = append(list, Node{"arg": k, "value": map[string]any(v)})
	}
	f.registered[def.Str("name")] = true
	return f.subhandler(def, list)
}

// subhandler writes a sub-handler's registration, with its body as a
// closure; default arguments (Python's early binding) become copies.
func (f *fnCtx) subhandler(def Node, kws []Node) error {
	if f.group != changing || f.typed {
		return fail("a sub-handler of a typed or non-changing handler")
	}
	id := expr{strconv.Quote(def.Str("name")), kStr}
	for _, k := range kws {
		if k.Str("arg") != "id" {
			return fail("sub-handler option %s", k.Str("arg"))
		}
		x, err := f.expr(k.Get("value"))
		if err != nil {
			return err
		}
		id = expr{f.asStr(x), kStr}
	}
	args := def.Get("args")
	inner := f.child(def)
	var binds []string
	defaults := args.List("defaults")
	params := args.List("args")
	for i, d := range defaults {
		pname := params[len(params)-len(defaults)+i].Str("arg")
		x, err := f.expr(d)
		if err != nil {
			return err
		}
		g := goLocal(pname)
		binds = append(binds, g+" := "+x.code+"\n_ = "+g)
		inner.locals[pname] = g
		inner.localKinds[pname] = kAny
		delete(inner.params, pname)
	}
	inner.header()
	if !inner.body(def.List("body")) {
		inner.line("return nil")
	}
	f.translated += inner.translated + 1
	f.left += inner.left
	f.use("kopf")
	f.line("{")
	for _, b := range binds {
		f.line("%s", b)
	}
	// kopf.SubhandlerFunc's function takes kopf.ChangingKwargs, which the
	// parent's kwargs embed when the package has indices.
	f.line("if err := kopf.SubhandlerFunc(ctx, %s, func(ctx context.Context, kw kopf.ChangingKwargs) error {\n%s}); err != nil {\nreturn %serr\n}", id.code, inner.b.String(), f.zero)
	f.line("}")
	return nil
}

// child is the context of a nested function (a sub-handler): the same
// kwargs, its own locals, no result.
func (f *fnCtx) child(def Node) *fnCtx {
	c := &fnCtx{p: f.p, mod: f.mod, group: f.group, typed: f.typed, params: paramsOf(def),
		locals: map[string]string{}, localKinds: map[string]kind{}, zero: "", goName: f.goName,
		kwargsType: f.kwargsType, nested: map[string]Node{}, registered: map[string]bool{}, imports: f.imports}
	for k, v := range f.locals {
		c.locals[k], c.localKinds[k] = v, f.localKinds[k]
	}
	c.declare(collectLocals(def.List("body"), c.params))
	return c
}

// declare adds locals, declared at the top of the function as any.
func (f *fnCtx) declare(names []string) {
	for _, n := range names {
		f.locals[n] = goLocal(n)
		f.localKinds[n] = kAny
		f.pending = append(f.pending, n)
	}
}

// header writes the declarations of the locals.
func (f *fnCtx) header() {
	for _, n := range f.pending {
		f.line("var %s any\n_ = %[1]s", goLocal(n))
	}
	f.pending = nil
}

// paramsOf are the names of a function's parameters.
func paramsOf(def Node) map[string]bool {
	out := map[string]bool{}
	a := def.Get("args")
	for _, field := range []string{"posonlyargs", "args", "kwonlyargs"} {
		for _, p := range a.List(field) {
			out[p.Str("arg")] = true
		}
	}
	return out
}
