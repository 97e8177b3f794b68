package port

import (
	"fmt"
	"strings"
)

// comprehension translates a list or dict comprehension, or a generator
// expression (evaluated at once, into a list), into a Go function
// literal called in place: its for clauses are loops over pyIter (a
// dict's sorted keys), its if clauses skip, tuple targets unpack by
// index. Its names are its own, as Python 3's comprehensions' are.
func (f *fnCtx) comprehension(n Node) (expr, error) {
	saved := map[string]string{}
	savedKinds := map[string]kind{}
	defer func() {
		for k := range saved {
			if saved[k] == "\x00" {
				delete(f.locals, k)
				delete(f.localKinds, k)
				continue
			}
			f.locals[k], f.localKinds[k] = saved[k], savedKinds[k]
		}
	}()
	bind := func(name string) string {
		if _, ok := saved[name]; !ok {
			if g, ok := f.locals[name]; ok {
				saved[name], savedKinds[name] = g, f.localKinds[name]
			} else {
				saved[name] = "\x00"
			}
		}
		g := goLocal(name)
		f.locals[name], f.localKinds[name] = g, kAny
		return g
	}
	var b strings.Builder
	depth := f.depth
	defer func() { f.depth = depth }()
	gens := n.List("generators")
	for _, g := range gens {
		if g.int("is_async") != 0 {
			return expr{}, fail("async comprehension")
		}
		it, err := f.expr(g.Get("iter"))
		if err != nil {
			return expr{}, err
		}
		f.depth++
		item := fmt.Sprintf("item%d", f.depth)
		fmt.Fprintf(&b, "for _, %s := range pyIter(%s) {\n", item, it.code)
		if err := f.unpack(&b, g.Get("target"), item, bind); err != nil {
			return expr{}, err
		}
		for _, c := range g.List("ifs") {
			x, err := f.expr(c)
			if err != nil {
				return expr{}, err
			}
			fmt.Fprintf(&b, "if %s {\ncontinue\n}\n", negate(f.asBool(x)))
		}
	}
	var out, add string
	if n.Is("DictComp") {
		k, err := f.expr(n.Get("key"))
		if err != nil {
			return expr{}, err
		}
		v, err := f.expr(n.Get("value"))
		if err != nil {
			return expr{}, err
		}
		out, add = "map[string]any{}", "out["+f.asStr(k)+"] = "+v.code
	} else {
		e, err := f.expr(n.Get("elt"))
		if err != nil {
			return expr{}, err
		}
		out, add = "[]any{}", "out = append(out, "+e.code+")"
	}
	b.WriteString(add + "\n" + strings.Repeat("}\n", len(gens)))
	return expr{"func() any {\nout := " + out + "\n" + b.String() + "return out\n}()", kAny}, nil
}

// unpack binds a for clause's target (a name, or a tuple of targets) to
// the item v.
func (f *fnCtx) unpack(b *strings.Builder, t Node, v string, bind func(string) string) error {
	switch t.Type() {
	case "Name":
		if t.Str("id") == "_" {
			return nil
		}
		g := bind(t.Str("id"))
		fmt.Fprintf(b, "%s := %s\n_ = %[1]s\n", g, v)
		return nil
	case "Tuple", "List":
		for i, e := range t.List("elts") {
			if e.Is("Starred") {
				return fail("starred target")
			}
			if err := f.unpack(b, e, fmt.Sprintf("pyIndex(%s, %d)", v, i), bind); err != nil {
				return err
			}
		}
		return nil
	}
	return fail("comprehension target")
}

// negate is the negation of a Go condition as the port writes them: a
// call, a negated call or a parenthesized expression.
func negate(cond string) string {
	if rest, ok := strings.CutPrefix(cond, "!"); ok {
		return rest
	}
	return "!" + cond
}
