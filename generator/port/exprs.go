package port

import (
	"fmt"
	"strconv"
	"strings"
)

// kind is what a Go expression is known to be.
type kind int

const (
	kAny kind = iota
	kStr
	kBool
	kInt
)

// expr is a translated Python expression.
type expr struct {
	code string
	kind kind
}

// errUntranslated marks an expression or statement left to the user.
type errUntranslated struct{ what string }

func (e errUntranslated) Error() string { return e.what }

func fail(format string, args ...any) error { return errUntranslated{fmt.Sprintf(format, args...)} }

// asStr is e as a Go string: Python's str().
func (f *fnCtx) asStr(e expr) string {
	if e.kind == kStr {
		return e.code
	}
	f.use("pyfmt")
	return "pyfmt.Str(" + e.code + ")"
}

// asBool is e as a Go bool: Python's truth.
func (f *fnCtx) asBool(e expr) string {
	if e.kind == kBool {
		return e.code
	}
	return "pyTruthy(" + e.code + ")"
}

// kwargs are Kopf's keyword arguments that kopf-go's kwargs have, by the
// groups of handlers that get them.
var kwargs = map[string]struct {
	code   string
	kind   kind
	groups []group
}{
	"body": {"kw.Body", kAny, resourceGroups}, "spec": {"kw.Spec", kAny, resourceGroups},
	"status": {"kw.Status", kAny, resourceGroups}, "meta": {"kw.Meta", kAny, resourceGroups},
	"metadata": {"kw.Meta", kAny, resourceGroups}, "name": {"kw.Name", kStr, resourceGroups},
	"namespace": {"kw.Namespace", kStr, resourceGroups}, "uid": {"kw.UID", kStr, resourceGroups},
	"labels": {"kw.Labels", kAny, resourceGroups}, "annotations": {"kw.Annotations", kAny, resourceGroups},
	"resource": {"kw.Resource", kAny, resourceGroups},
	"retry":    {"kw.Retry", kInt, []group{changing, daemon, timer, activity, login, probe}},
	"started":  {"kw.Started", kAny, []group{changing, daemon, timer, activity, login, probe}},
	"runtime":  {"kw.Runtime", kAny, []group{changing, daemon, timer, activity, login, probe}},
	"param":    {"kw.Param", kAny, allGroups},
	"reason":   {"string(kw.Reason)", kStr, []group{changing}},
	"diff":     {"kw.Diff", kAny, []group{changing, admission}},
	"old":      {"kw.Old", kAny, []group{changing, admission}}, "new": {"kw.New", kAny, []group{changing, admission}},
	"event": {"kw.Event", kAny, []group{event}}, "type": {"kw.Type", kStr, []group{event}},
	"dryrun": {"kw.DryRun", kBool, []group{admission}}, "subresource": {"kw.Subresource", kStr, []group{admission}},
	"operation": {"kw.Operation", kStr, []group{admission}}, "headers": {"kw.Headers", kAny, []group{admission}},
	"sslpeer": {"kw.SSLPeer", kAny, []group{admission}}, "userinfo": {"kw.UserInfo", kAny, []group{admission}},
}

var (
	resourceGroups = []group{changing, event, daemon, timer, index, admission, callbackGroup}
	allGroups      = []group{changing, event, daemon, timer, index, activity, login, probe, admission}
)

// callbackGroup is the group of filters' callbacks (kopf.ResourceKwargs).
const callbackGroup group = 100

func hasGroup(gs []group, g group) bool {
	for _, x := range gs {
		if x == g {
			return true
		}
	}
	return false
}

// expr translates a Python expression.
func (f *fnCtx) expr(n Node) (expr, error) {
	switch n.Type() {
	case "Constant":
		return f.constant(n)
	case "JoinedStr":
		return f.fstring(n)
	case "Name":
		return f.name(n.Str("id"))
	case "Attribute":
		return f.attribute(n)
	case "Subscript":
		base, err := f.expr(n.Get("value"))
		if err != nil {
			return expr{}, err
		}
		key, err := f.expr(sliceOf(n))
		if err != nil {
			return expr{}, err
		}
		return expr{"pyIndex(" + base.code + ", " + key.code + ")", kAny}, nil
	case "Call":
		return f.call(n)
	case "Compare":
		return f.compare(n)
	case "BoolOp":
		return f.boolOp(n)
	case "UnaryOp":
		return f.unary(n)
	case "BinOp":
		return f.binOp(n)
	case "Dict":
		return f.dict(n)
	case "List", "Tuple":
		var elts []string
		for _, e := range n.List("elts") {
			x, err := f.expr(e)
			if err != nil {
				return expr{}, err
			}
			elts = append(elts, x.code)
		}
		return expr{"[]any{" + strings.Join(elts, ", ") + "}", kAny}, nil
	case "IfExp":
		c, err := f.expr(n.Get("test"))
		if err != nil {
			return expr{}, err
		}
		a, err := f.expr(n.Get("body"))
		if err != nil {
			return expr{}, err
		}
		b, err := f.expr(n.Get("orelse"))
		if err != nil {
			return expr{}, err
		}
		return expr{"func() any {\nif " + f.asBool(c) + " {\nreturn " + a.code + "\n}\nreturn " + b.code + "\n}()", kAny}, nil
	case "Await":
		return f.expr(n.Get("value"))
	case "ListComp", "GeneratorExp", "DictComp":
		return f.comprehension(n)
	}
	return expr{}, fail("%s", n.Type())
}

// sliceOf is the key of a subscript (Python 3.8 wraps it in Index).
func sliceOf(n Node) Node {
	s := n.Get("slice")
	if s.Is("Index") {
		return s.Get("value")
	}
	return s
}

func (f *fnCtx) constant(n Node) (expr, error) {
	switch v := n["value"].(type) {
	case nil:
		return expr{"nil", kAny}, nil
	case string:
		return expr{strconv.Quote(v), kStr}, nil
	case bool:
		return expr{strconv.FormatBool(v), kBool}, nil
	case fmt.Stringer:
		return expr{v.String(), kInt}, nil
	case map[string]any:
		if s, ok := v["_float"].(string); ok {
			return expr{"float64(" + s + ")", kAny}, nil
		}
	}
	return expr{}, fail("constant")
}

// fstring translates an f-string into fmt.Sprintf: {x} is str(x), {x!r}
// repr(x), as Python formats them (package pyfmt).
func (f *fnCtx) fstring(n Node) (expr, error) {
	var format strings.Builder
	var args []string
	for _, part := range n.List("values") {
		if s, ok := constString(part); ok {
			format.WriteString(strings.ReplaceAll(s, "%", "%%"))
			continue
		}
		if !part.Is("FormattedValue") || part.Get("format_spec") != nil {
			return expr{}, fail("format spec")
		}
		x, err := f.expr(part.Get("value"))
		if err != nil {
			return expr{}, err
		}
		format.WriteString("%s")
		switch part.int("conversion") {
		case 'r':
			f.use("pyfmt")
			args = append(args, "pyfmt.Repr("+x.code+")")
		case -1, 's':
			args = append(args, f.asStr(x))
		default:
			return expr{}, fail("conversion")
		}
	}
	if len(args) == 0 {
		return expr{strconv.Quote(format.String()), kStr}, nil
	}
	f.use("fmt")
	return expr{"fmt.Sprintf(" + strconv.Quote(format.String()) + ", " + strings.Join(args, ", ") + ")", kStr}, nil
}

// name resolves a name: a local, a kwarg of the handler, a module-level
// name (the memo).
func (f *fnCtx) name(id string) (expr, error) {
	if goName, ok := f.locals[id]; ok {
		return expr{goName, f.localKinds[id]}, nil
	}
	if f.params[id] {
		if k, ok := kwargs[id]; ok && hasGroup(k.groups, f.group) {
			code := k.code
			if f.typed && (id == "old" || id == "new") {
				code = "kw.Changing." + strings.TrimPrefix(code, "kw.")
			}
			return expr{code, k.kind}, nil
		}
		switch id {
		case "memo":
			return expr{"kw.Memo", kAny}, nil
		case "stopped":
			if f.group == daemon || f.group == timer {
				return expr{"pyStopped(kw.Stopped)", kBool}, nil
			}
		}
		return expr{}, fail("kwarg %s", id)
	}
	if f.p.globals[id] && f.group != moduleGroup && f.group != callbackGroup {
		return expr{"kw.Memo[" + strconv.Quote(id) + "]", kAny}, nil
	}
	return expr{}, fail("name %s", id)
}

// moduleGroup is the context of module-level values (the memo).
const moduleGroup group = 101

func (f *fnCtx) attribute(n Node) (expr, error) {
	base := n.Get("value")
	if base.Is("Name") && base.Str("id") == "memo" && f.params["memo"] {
		return expr{"kw.Memo[" + strconv.Quote(n.Str("attr")) + "]", kAny}, nil
	}
	return expr{}, fail("attribute %s", n.Str("attr"))
}

func (f *fnCtx) compare(n Node) (expr, error) {
	ops, comps := n.List("ops"), n.List("comparators")
	if len(ops) != 1 {
		return expr{}, fail("chained comparison")
	}
	a, err := f.expr(n.Get("left"))
	if err != nil {
		return expr{}, err
	}
	b, err := f.expr(comps[0])
	if err != nil {
		return expr{}, err
	}
	op := ops[0].Type()
	if op == "Is" || op == "IsNot" {
		if b.code != "nil" {
			return expr{}, fail("is")
		}
		zero := "nil"
		switch a.kind {
		case kStr:
			zero = `""`
		case kInt:
			zero = "-1"
		case kBool:
			return expr{strconv.FormatBool(op == "IsNot"), kBool}, nil
		}
		return expr{"(" + a.code + map[bool]string{true: " != ", false: " == "}[op == "IsNot"] + zero + ")", kBool}, nil
	}
	same := a.kind == b.kind && (a.kind == kStr || a.kind == kInt)
	goOps := map[string]string{"Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">="}
	if g, ok := goOps[op]; ok && same {
		return expr{"(" + a.code + " " + g + " " + b.code + ")", kBool}, nil
	}
	switch op {
	case "Eq":
		return expr{"pyEq(" + a.code + ", " + b.code + ")", kBool}, nil
	case "NotEq":
		return expr{"!pyEq(" + a.code + ", " + b.code + ")", kBool}, nil
	case "Lt":
		return expr{"pyLess(" + a.code + ", " + b.code + ")", kBool}, nil
	case "Gt":
		return expr{"pyLess(" + b.code + ", " + a.code + ")", kBool}, nil
	case "LtE":
		return expr{"!pyLess(" + b.code + ", " + a.code + ")", kBool}, nil
	case "GtE":
		return expr{"!pyLess(" + a.code + ", " + b.code + ")", kBool}, nil
	case "In":
		return expr{"pyIn(" + a.code + ", " + b.code + ")", kBool}, nil
	case "NotIn":
		return expr{"!pyIn(" + a.code + ", " + b.code + ")", kBool}, nil
	}
	return expr{}, fail("comparison %s", op)
}

func (f *fnCtx) boolOp(n Node) (expr, error) {
	var xs []expr
	allBool := true
	for _, v := range n.List("values") {
		x, err := f.expr(v)
		if err != nil {
			return expr{}, err
		}
		xs = append(xs, x)
		allBool = allBool && x.kind == kBool
	}
	and := n.Get("op").Is("And")
	if allBool {
		var parts []string
		for _, x := range xs {
			parts = append(parts, x.code)
		}
		return expr{"(" + strings.Join(parts, map[bool]string{true: " && ", false: " || "}[and]) + ")", kBool}, nil
	}
	fn := map[bool]string{true: "pyAnd", false: "pyOr"}[and]
	var parts []string
	for _, x := range xs {
		parts = append(parts, x.code)
	}
	return expr{fn + "(" + strings.Join(parts, ", ") + ")", kAny}, nil
}

func (f *fnCtx) unary(n Node) (expr, error) {
	x, err := f.expr(n.Get("operand"))
	if err != nil {
		return expr{}, err
	}
	switch n.Get("op").Type() {
	case "Not":
		return expr{"!" + f.asBool(x), kBool}, nil
	case "USub":
		if x.kind == kInt {
			return expr{"-" + x.code, kInt}, nil
		}
		return expr{"pySub(0, " + x.code + ")", kAny}, nil
	}
	return expr{}, fail("unary operator")
}

func (f *fnCtx) binOp(n Node) (expr, error) {
	a, err := f.expr(n.Get("left"))
	if err != nil {
		return expr{}, err
	}
	b, err := f.expr(n.Get("right"))
	if err != nil {
		return expr{}, err
	}
	op := n.Get("op").Type()
	goOps := map[string]string{"Add": "+", "Sub": "-", "Mult": "*"}
	g, ok := goOps[op]
	if !ok {
		return expr{}, fail("operator %s", op)
	}
	if a.kind == kInt && b.kind == kInt || op == "Add" && a.kind == kStr && b.kind == kStr {
		return expr{"(" + a.code + " " + g + " " + b.code + ")", a.kind}, nil
	}
	return expr{"py" + op[:3] + "(" + a.code + ", " + b.code + ")", kAny}, nil
}

func (f *fnCtx) dict(n Node) (expr, error) {
	var parts []string
	values := n.List("values")
	for i, k := range n.List("keys") {
		if k == nil {
			return expr{}, fail("**")
		}
		kx, err := f.expr(k)
		if err != nil {
			return expr{}, err
		}
		if kx.kind != kStr {
			return expr{}, fail("dict key")
		}
		vx, err := f.expr(values[i])
		if err != nil {
			return expr{}, err
		}
		parts = append(parts, kx.code+": "+vx.code)
	}
	return expr{"map[string]any{" + strings.Join(parts, ", ") + "}", kAny}, nil
}

// call translates the calls that are expressions: x.get(k, d), len, str,
// repr, bool, list, sum, sorted, x.startswith, x.items/keys/values,
// x.setdefault, time.time.
func (f *fnCtx) call(n Node) (expr, error) {
	fn := n.Get("func")
	args := n.List("args")
	if len(n.List("keywords")) > 0 {
		return expr{}, fail("keywords")
	}
	var xs []expr
	for _, a := range args {
		x, err := f.expr(a)
		if err != nil {
			return expr{}, err
		}
		xs = append(xs, x)
	}
	if fn.Is("Attribute") {
		attr := fn.Str("attr")
		if dottedName(fn) == "time.time" && len(xs) == 0 {
			return expr{"pyTime()", kAny}, nil
		}
		base, err := f.expr(fn.Get("value"))
		if err != nil {
			return expr{}, err
		}
		switch {
		case attr == "get" && len(xs) == 1:
			return expr{"pyGet(" + base.code + ", " + xs[0].code + ", nil)", kAny}, nil
		case attr == "get" && len(xs) == 2:
			return expr{"pyGet(" + base.code + ", " + xs[0].code + ", " + xs[1].code + ")", kAny}, nil
		case (attr == "startswith" || attr == "endswith") && len(xs) == 1 && xs[0].kind == kStr:
			f.use("strings")
			g := map[string]string{"startswith": "HasPrefix", "endswith": "HasSuffix"}[attr]
			return expr{"strings." + g + "(" + f.asStr(base) + ", " + xs[0].code + ")", kBool}, nil
		case (attr == "items" || attr == "keys" || attr == "values") && len(xs) == 0:
			g := map[string]string{"items": "pyItems", "keys": "pyIter", "values": "pyValues"}[attr]
			return expr{g + "(" + base.code + ")", kAny}, nil
		case attr == "setdefault" && len(xs) == 2 && xs[0].kind == kStr:
			return expr{"pySetDefault(" + base.code + ", " + xs[0].code + ", " + xs[1].code + ")", kAny}, nil
		case attr == "lower" || attr == "upper" || attr == "strip":
			if len(xs) == 0 {
				f.use("strings")
				g := map[string]string{"lower": "ToLower", "upper": "ToUpper", "strip": "TrimSpace"}[attr]
				return expr{"strings." + g + "(" + f.asStr(base) + ")", kStr}, nil
			}
		}
		return expr{}, fail("method %s", attr)
	}
	if !fn.Is("Name") || len(xs) != 1 {
		return expr{}, fail("call")
	}
	switch fn.Str("id") {
	case "len":
		return expr{"pyLen(" + xs[0].code + ")", kInt}, nil
	case "str":
		return expr{f.asStr(xs[0]), kStr}, nil
	case "repr":
		f.use("pyfmt")
		return expr{"pyfmt.Repr(" + xs[0].code + ")", kStr}, nil
	case "bool":
		return expr{f.asBool(xs[0]), kBool}, nil
	case "list":
		return expr{"pyIter(" + xs[0].code + ")", kAny}, nil
	case "sum":
		return expr{"pySum(" + xs[0].code + ")", kAny}, nil
	case "sorted":
		return expr{"pySorted(" + xs[0].code + ")", kAny}, nil
	}
	return expr{}, fail("call %s", fn.Str("id"))
}
