package markers

import (
	"fmt"
	"go/scanner"
	"go/token"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kopf-go/kopf/runtime/resources"
)

// NodeKind is the syntactic form of a value.
type NodeKind int

// The syntactic forms of values.
const (
	NodeBare   NodeKind = iota + 1 // an unquoted token
	NodeQuoted                     // a Go interpreted or raw string literal
	NodeMap                        // {key: value, ...}
	NodeList                       // [item, ...]
)

func (k NodeKind) String() string {
	switch k {
	case NodeBare, NodeQuoted:
		return "a scalar"
	case NodeMap:
		return "a map"
	case NodeList:
		return "a list"
	default:
		return "nothing"
	}
}

// Node is a value as written, before conversion to its argument's type.
// Keeping the syntax lets later stages tell a bare word (such as PRESENT)
// from the same word quoted, and point at the parts of a value.
type Node struct {
	Kind NodeKind
	Pos  token.Position
	// Raw is the source text of the whole value.
	Raw string
	// Text is the scalar's value: the bare token, or the unquoted string.
	Text string
	// Items are a list's items.
	Items []Node
	// Keys and Values are a map's entries, in source order.
	Keys   []Node
	Values []Node
}

// Value is an argument's converted value.
type Value struct {
	Node
	// Go is the typed value; see [Type] for the Go type of each type.
	Go any
}

// NamedArg is a key=value argument.
type NamedArg struct {
	Name    string
	NamePos token.Position
	Value
}

// Marker is a parsed, validated marker.
type Marker struct {
	Name string
	Def  *Definition
	// Pos is the position of the comment's first slash.
	Pos token.Position
	// Positional are the positional arguments, as many as Def.Positional.
	Positional []Value
	// Args are the named arguments in source order.
	Args []NamedArg
}

// Arg returns the named argument called name.
func (m *Marker) Arg(name string) (NamedArg, bool) {
	for _, a := range m.Args {
		if a.Name == name {
			return a, true
		}
	}
	return NamedArg{}, false
}

// String renders the marker canonically: the prefix, name, positional
// arguments and named arguments as written, separated by single spaces.
func (m *Marker) String() string {
	var b strings.Builder
	b.WriteString(Prefix + m.Name)
	for _, v := range m.Positional {
		b.WriteString(" " + v.Raw)
	}
	for _, a := range m.Args {
		b.WriteString(" " + a.Name + "=" + a.Raw)
	}
	return b.String()
}

// IsMarker reports whether a comment's text is a marker comment, that is,
// starts with [Prefix].
func IsMarker(comment string) bool { return strings.HasPrefix(comment, Prefix) }

// Parse parses one marker comment. text is the comment's whole text
// including "//" (ast.Comment.Text), and pos the position of its first
// byte. On failure, the error is a [go/scanner.ErrorList] holding every
// error found, each positioned within the comment, and the marker is nil.
func (t *Table) Parse(text string, pos token.Position) (*Marker, error) {
	p := &parser{text: text, base: pos}
	m := p.parse(t)
	if len(p.errs) > 0 {
		p.errs.Sort()
		return nil, p.errs
	}
	return m, nil
}

type parser struct {
	text string
	base token.Position
	errs scanner.ErrorList
}

// pos returns the position of the byte at offset off of the comment.
func (p *parser) pos(off int) token.Position {
	pos := p.base
	if pos.Line <= 0 {
		pos.Line = 1
	}
	if pos.Column <= 0 {
		pos.Column = 1
	}
	pos.Offset += off
	pos.Column += off
	return pos
}

func (p *parser) errorf(off int, format string, args ...any) {
	p.errs.Add(p.pos(off), fmt.Sprintf(format, args...))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

func (p *parser) skipSpace(i int) int {
	for i < len(p.text) && isSpace(p.text[i]) {
		i++
	}
	return i
}

type rawArg struct {
	key    string
	keyOff int
	node   Node
	ok     bool // the value parsed
}

func (p *parser) parse(t *Table) *Marker {
	name, def, start, end := p.header(t)
	if def == nil {
		return nil
	}
	m, seen := p.bind(t, name, def, p.rawArgs(end))
	if missing := def.Positional[min(len(m.Positional), len(def.Positional)):]; len(missing) > 0 {
		p.errorf(start, "missing %s: %s%s takes %s", missing[0].Syntax(true), Prefix, name, positionalSummary(def))
	}
	for _, a := range def.Args {
		if _, given := seen[a.Name]; a.Required && !given {
			p.errorf(start, "missing %s: %s%s requires it (%s)", a.Syntax(false), Prefix, name, a.Doc)
		}
	}
	return m
}

// header parses the marker's name, and returns it with its definition and
// the offsets where the name starts and ends; the definition is nil after
// an error.
func (p *parser) header(t *Table) (name string, def *Definition, start, end int) {
	if !IsMarker(p.text) {
		p.errorf(0, "not a marker: a marker comment starts with %s", Prefix)
		return "", nil, 0, 0
	}
	if i := strings.IndexAny(p.text, "\n\r"); i >= 0 {
		p.errorf(i, "a marker must fit on one line")
		return "", nil, 0, 0
	}
	start = len(Prefix)
	end = start
	for end < len(p.text) && !isSpace(p.text[end]) {
		end++
	}
	name = p.text[start:end]
	if name == "" {
		if fix := t.markerName(firstWord(p.text[p.skipSpace(start):])); fix != "" {
			p.errorf(start, "missing marker name after %s; did you mean %s%s? markers have no space after the colon", Prefix, Prefix, fix)
		} else {
			p.errorf(start, "missing marker name after %s (no space is allowed after the colon)", Prefix)
		}
		return "", nil, 0, 0
	}
	def = t.Lookup(name)
	if def == nil {
		p.errorf(start, "%s", t.unknownMarker(name))
	}
	return name, def, start, end
}

// rawArgs lexes the arguments from offset i on, positional or key=value,
// each with whether its value parsed.
func (p *parser) rawArgs(i int) []rawArg {
	var args []rawArg
	for {
		i = p.skipSpace(i)
		if i >= len(p.text) {
			break
		}
		var a rawArg
		if k := keyEnd(p.text, i); k > i && k < len(p.text) && p.text[k] == '=' {
			a.key, a.keyOff = p.text[i:k], i
			i = k + 1
			if i >= len(p.text) || isSpace(p.text[i]) {
				p.errorf(i, "missing value after %s=", a.key)
				args = append(args, a)
				continue
			}
		}
		n := len(p.errs)
		a.node, i = p.value(i, ctxTop)
		a.ok = len(p.errs) == n
		if a.ok && i < len(p.text) && !isSpace(p.text[i]) {
			p.errorf(i, "unexpected %q after %s; separate arguments with spaces", p.text[i], a.node.Raw)
			a.ok = false
			for i < len(p.text) && !isSpace(p.text[i]) {
				i++
			}
		}
		args = append(args, a)
	}

	return args
}

// bind binds the arguments to the definition's positional and named
// arguments, converting their values; it returns the marker and the
// offsets of the named arguments given.
func (p *parser) bind(t *Table, name string, def *Definition, args []rawArg) (*Marker, map[string]int) {
	m := &Marker{Name: name, Def: def, Pos: p.pos(0)}
	seen := map[string]int{}
	for _, a := range args {
		if a.key == "" {
			if len(m.Positional) >= len(def.Positional) {
				p.errorf(a.node.Pos.Offset-p.base.Offset, "unexpected positional argument %s: %s%s takes %s",
					a.node.Raw, Prefix, name, positionalSummary(def))
				continue
			}
			spec := def.Positional[len(m.Positional)]
			v := Value{Node: a.node}
			if a.ok {
				v.Go = p.convert(spec, a.node)
			}
			m.Positional = append(m.Positional, v)
			continue
		}
		spec := def.Arg(a.key)
		if spec == nil {
			p.errorf(a.keyOff, "%s", unknownArg(t, def, a.key))
			continue
		}
		if prev, dup := seen[a.key]; dup {
			p.errorf(a.keyOff, "duplicate argument %s (first at column %d)", a.key, p.pos(prev).Column)
			continue
		}
		seen[a.key] = a.keyOff
		if !a.ok {
			continue
		}
		m.Args = append(m.Args, NamedArg{
			Name:    a.key,
			NamePos: p.pos(a.keyOff),
			Value:   Value{Node: a.node, Go: p.convert(*spec, a.node)},
		})
	}
	return m, seen
}

// unknownMarker says why name is not a marker of the table: a planned
// marker is not supported yet; anything else is unknown, with a
// suggestion if a name is close.
func (t *Table) unknownMarker(name string) string {
	if p := t.LookupPlanned(name); p != nil {
		if p.Instead != "" {
			return fmt.Sprintf("%s%s is not a marker (Kopf's %s): %s", Prefix, name, p.Kopf, p.Instead)
		}
		return fmt.Sprintf("%s%s is not supported yet (Kopf's %s); `kopf-gen markers` lists the markers this kopf-gen supports", Prefix, name, p.Kopf)
	}
	msg := fmt.Sprintf("unknown marker %s%s", Prefix, name)
	s := t.closestName(name)
	switch {
	case s == "":
		return msg + "; known markers: " + strings.Join(t.names(), ", ")
	case t.LookupPlanned(s) != nil:
		return msg + "; did you mean " + Prefix + s + "? (not supported yet)"
	default:
		return msg + "; did you mean " + Prefix + s + "?"
	}
}

// markerName returns the name of a defined or planned marker that word is
// or is close to, or "".
func (t *Table) markerName(word string) string {
	if word == "" {
		return ""
	}
	if t.known(word) {
		return word
	}
	return t.closestName(word)
}

func (t *Table) known(name string) bool { return t.Lookup(name) != nil || t.LookupPlanned(name) != nil }

// closestName returns the defined or planned marker name that name most
// likely misspells, or "": the name with or without Kopf's "on." (Kopf
// has both kopf.timer and kopf.on.timer), else the closest by edit
// distance.
func (t *Table) closestName(name string) string {
	if rest, ok := strings.CutPrefix(name, "on."); ok && t.known(rest) {
		return rest
	}
	if t.known("on." + name) {
		return "on." + name
	}
	return suggest(name, t.allNames())
}

// firstWord returns s up to its first space or tab.
func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}

func positionalSummary(def *Definition) string {
	switch len(def.Positional) {
	case 0:
		return "no positional arguments"
	case 1:
		return "one positional argument, " + def.Positional[0].Syntax(true) + " (" + def.Positional[0].Doc + ")"
	default:
		parts := make([]string, len(def.Positional))
		for i, a := range def.Positional {
			parts[i] = a.Syntax(true)
		}
		return fmt.Sprintf("%d positional arguments, %s", len(def.Positional), strings.Join(parts, " "))
	}
}

func unknownArg(t *Table, def *Definition, key string) string {
	names := make([]string, len(def.Args))
	for i, a := range def.Args {
		names[i] = a.Name
	}
	msg := fmt.Sprintf("unknown argument %s of %s%s", key, Prefix, def.Name)
	var owners []string
	for _, other := range t.defs {
		if other.Arg(key) != nil {
			owners = append(owners, Prefix+other.Name)
		}
	}
	switch s := suggest(key, names); {
	case len(owners) > 0:
		return msg + "; it is an argument of " + strings.Join(owners, ", ")
	case s != "":
		return msg + "; did you mean " + s + "?"
	case len(names) == 0:
		return msg + "; it takes no named arguments"
	default:
		return msg + "; known arguments: " + strings.Join(names, ", ")
	}
}

// keyEnd returns the end of the key starting at i, or i if there is none.
func keyEnd(s string, i int) int {
	j := i
	for j < len(s) && (s[j] == '_' || isLetter(s[j]) || (j > i && isDigit(s[j]))) {
		j++
	}
	return j
}

func isKey(s string) bool { return s != "" && keyEnd(s, 0) == len(s) }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// The contexts a value is lexed in; they differ in where a bare token ends.
type lexCtx int

const (
	ctxTop lexCtx = iota
	ctxItem
	ctxKey
)

func (c lexCtx) stops(b byte) bool {
	switch c {
	case ctxTop:
		return isSpace(b)
	case ctxItem:
		return isSpace(b) || b == ',' || b == '}' || b == ']'
	default:
		return isSpace(b) || b == ',' || b == '}' || b == ']' || b == ':'
	}
}

// value lexes one value starting at i and returns it and the offset after
// it. On a syntax error it records the error and returns len(text): the rest
// of the marker is abandoned, so that one mistake yields one error.
func (p *parser) value(i int, ctx lexCtx) (Node, int) {
	n := Node{Pos: p.pos(i)}
	if i >= len(p.text) {
		n.Kind = NodeBare
		return n, i
	}
	switch c := p.text[i]; c {
	case '"', '`':
		j := i + 1
		for j < len(p.text) && p.text[j] != c {
			if c == '"' && p.text[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(p.text) {
			p.errorf(i, "unterminated quoted string")
			return n, len(p.text)
		}
		n.Kind, n.Raw = NodeQuoted, p.text[i:j+1]
		s, err := strconv.Unquote(n.Raw)
		if err != nil {
			p.errorf(i, "invalid quoted string %s: want a Go string literal", n.Raw)
			return n, len(p.text)
		}
		n.Text = s
		return n, j + 1
	case '{':
		return p.compound(i, NodeMap)
	case '[':
		return p.compound(i, NodeList)
	}
	j := i
	for j < len(p.text) && !ctx.stops(p.text[j]) {
		j++
	}
	n.Kind, n.Raw, n.Text = NodeBare, p.text[i:j], p.text[i:j]
	return n, j
}

// compound lexes a map or a list starting at its opening brace or bracket.
func (p *parser) compound(i int, kind NodeKind) (Node, int) {
	n := Node{Kind: kind, Pos: p.pos(i)}
	closing, what := byte(']'), "list"
	if kind == NodeMap {
		closing, what = '}', "map"
	}
	keys := map[string]bool{}
	j := i + 1
	for {
		j = p.skipSpace(j)
		if j >= len(p.text) {
			p.errorf(i, "unterminated %s: missing %q", what, closing)
			return n, len(p.text)
		}
		if p.text[j] == closing {
			j++
			break
		}
		if kind == NodeMap {
			k, next := p.item(j, ctxKey, "map key")
			if next < 0 {
				return n, len(p.text)
			}
			if k.Kind != NodeBare && k.Kind != NodeQuoted {
				p.errorf(j, "a map key must be a string, not %s", k.Kind)
				return n, len(p.text)
			}
			if keys[k.Text] {
				p.errorf(j, "duplicate map key %s", k.Raw)
				return n, len(p.text)
			}
			keys[k.Text] = true
			j = p.skipSpace(next)
			if j >= len(p.text) || p.text[j] != ':' {
				p.errorf(j, "missing ':' after map key %s", k.Raw)
				return n, len(p.text)
			}
			v, next := p.item(p.skipSpace(j+1), ctxItem, "map value")
			if next < 0 {
				return n, len(p.text)
			}
			n.Keys, n.Values = append(n.Keys, k), append(n.Values, v)
			j = next
		} else {
			v, next := p.item(j, ctxItem, "list item")
			if next < 0 {
				return n, len(p.text)
			}
			n.Items = append(n.Items, v)
			j = next
		}
		j = p.skipSpace(j)
		if j < len(p.text) && p.text[j] == ',' {
			j++
			continue
		}
		if j < len(p.text) && p.text[j] == closing {
			j++
			break
		}
		if j >= len(p.text) {
			p.errorf(i, "unterminated %s: missing %q", what, closing)
		} else {
			p.errorf(j, "unexpected %q in %s: want ',' or %q", p.text[j], what, closing)
		}
		return n, len(p.text)
	}
	n.Raw = p.text[i:j]
	return n, j
}

// item lexes a value inside a map or list; it returns -1 after an error.
func (p *parser) item(j int, ctx lexCtx, what string) (Node, int) {
	errs := len(p.errs)
	v, next := p.value(j, ctx)
	if len(p.errs) > errs {
		return v, -1
	}
	if v.Kind == NodeBare && v.Text == "" {
		if j < len(p.text) {
			p.errorf(j, "missing %s before %q", what, p.text[j])
		} else {
			p.errorf(j, "missing %s", what)
		}
		return v, -1
	}
	return v, next
}

// convert converts a lexed value to its argument's type, recording an
// error and returning nil when it does not fit.
func (p *parser) convert(a Arg, n Node) any {
	switch a.Type {
	case TypeMatch, TypeMatchMap, TypeFunc, TypeFieldPath:
		return p.convertFilter(a, n)
	case TypeStringMap:
		return p.convertStringMap(a, n)
	case TypeStringList:
		return p.convertStringList(a, n)
	case TypeResources:
		return p.convertResources(a, n)
	}
	if n.Kind != NodeBare && n.Kind != NodeQuoted {
		return p.fail(a, n, "want %s, got %s", describe(a), n.Kind)
	}
	if a.OrFunc && n.Kind == NodeBare && strings.HasPrefix(n.Text, CallbackPrefix) {
		name := strings.TrimPrefix(n.Text, CallbackPrefix)
		if !token.IsIdentifier(name) {
			return p.fail(a, n, "want the name of a function of the package after fn:, got %q", n.Text)
		}
		return Func(name)
	}
	return p.convertScalar(a, n)
}

// fail records an error in the value n of the argument a and returns nil.
func (p *parser) fail(a Arg, n Node, format string, args ...any) any {
	p.errorf(n.Pos.Offset-p.base.Offset, "%s: %s", a.Name, fmt.Sprintf(format, args...))
	return nil
}

// convertStringMap converts a map {key: value, ...} of strings.
func (p *parser) convertStringMap(a Arg, n Node) any {
	if n.Kind != NodeMap {
		return p.fail(a, n, "want a map {key: value, ...}, got %s", n.Raw)
	}
	out := make(map[string]string, len(n.Keys))
	for i, k := range n.Keys {
		v := n.Values[i]
		if v.Kind != NodeBare && v.Kind != NodeQuoted {
			p.errorf(v.Pos.Offset-p.base.Offset, "%s: the value of %s must be a string, not %s", a.Name, k.Raw, v.Kind)
			return nil
		}
		out[k.Text] = v.Text
	}
	return out
}

// convertStringList converts a list [item, ...] of strings, each listed
// once (and one of the argument's Enum, if it has one).
func (p *parser) convertStringList(a Arg, n Node) any {
	if n.Kind != NodeList {
		return p.fail(a, n, "want a list [item, ...], got %s", n.Raw)
	}
	if a.Positive && len(n.Items) == 0 {
		return p.fail(a, n, "must not be empty; leave %s= out instead", a.Name)
	}
	out := make([]string, 0, len(n.Items))
	for _, v := range n.Items {
		at := v.Pos.Offset - p.base.Offset
		if v.Kind != NodeBare && v.Kind != NodeQuoted {
			p.errorf(at, "%s: list items must be strings, not %s", a.Name, v.Kind)
			return nil
		}
		if len(a.Enum) > 0 && !slices.Contains(a.Enum, v.Text) {
			msg := fmt.Sprintf("%s: unknown item %q: want %s", a.Name, v.Text, strings.Join(a.Enum, ", "))
			if s := enumSuggestion(v.Text, a.Enum); s != "" {
				msg = fmt.Sprintf("%s: unknown item %q; did you mean %s?", a.Name, v.Text, s)
			}
			p.errorf(at, "%s", msg)
			return nil
		}
		if slices.Contains(out, v.Text) {
			p.errorf(at, "%s: %s is listed twice", a.Name, v.Text)
			return nil
		}
		out = append(out, v.Text)
	}
	return out
}

// convertResources converts one resource selector, or a list [r1, r2] of
// them, each listed once.
func (p *parser) convertResources(a Arg, n Node) any {
	items := []Node{n}
	switch n.Kind {
	case NodeList:
		if a.Positive && len(n.Items) == 0 {
			return p.fail(a, n, "must not be empty; leave %s= out instead", a.Name)
		}
		items = n.Items
	case NodeMap:
		return p.fail(a, n, "want a resource or a list [r1, r2], got a map")
	}
	out := make([]resources.Selector, 0, len(items))
	for _, v := range items {
		if v.Kind != NodeBare && v.Kind != NodeQuoted {
			return p.fail(a, v, "list items must be resources, not %s", v.Kind)
		}
		sel, err := ParseSelector(v.Text)
		if err != nil {
			return p.fail(a, v, "%v", err)
		}
		if slices.Contains(out, sel) {
			return p.fail(a, v, "%s is listed twice", v.Text)
		}
		out = append(out, sel)
	}
	return out
}

// convertScalar converts a bare or quoted value to the argument's scalar
// type.
func (p *parser) convertScalar(a Arg, n Node) any {
	s := n.Text
	switch a.Type {
	case TypeString:
		if a.Positive && s == "" {
			return p.fail(a, n, "must not be empty")
		}
		return s
	case TypeInt:
		v, err := strconv.ParseInt(s, 10, 0)
		if err != nil {
			return p.fail(a, n, "want an integer, got %q", s)
		}
		if a.Positive && v <= 0 {
			return p.fail(a, n, "must be positive, got %d", v)
		}
		return int(v)
	case TypeFloat:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return p.fail(a, n, "want a number, got %q", s)
		}
		if a.Positive && v <= 0 {
			return p.fail(a, n, "must be positive, got %s", s)
		}
		return v
	case TypeBool:
		switch s {
		case "true":
			return true
		case "false":
			return false
		}
		return p.fail(a, n, "want true or false, got %q", s)
	case TypeDuration:
		d, ok := parseDuration(s)
		if !ok && a.OrFunc && token.IsIdentifier(s) {
			return p.fail(a, n, "want a duration such as 90s, 1.5m, 1h30m or 90 (seconds), or a function fn:F, got %q; did you mean fn:%s?", s, s)
		}
		if !ok {
			return p.fail(a, n, "want a duration such as 90s, 1.5m, 1h30m or 90 (seconds), got %q", s)
		}
		if a.Positive && d <= 0 {
			return p.fail(a, n, "must be positive, got %s", s)
		}
		return d
	case TypeEnum:
		for _, e := range a.Enum {
			if s == e {
				return s
			}
		}
		if e := enumSuggestion(kopfEnumWord(s), a.Enum); e != "" {
			return p.fail(a, n, "want one of %s, got %q; did you mean %s=%s?", strings.Join(a.Enum, ", "), s, a.Name, e)
		}
		return p.fail(a, n, "want one of %s, got %q", strings.Join(a.Enum, ", "), s)
	case TypeResource:
		sel, err := ParseSelector(s)
		if err != nil {
			return p.fail(a, n, "%v", err)
		}
		return sel
	}
	return p.fail(a, n, "unsupported argument type %s", a.Type)
}

func describe(a Arg) string {
	switch a.Type {
	case TypeString:
		return "a string"
	case TypeInt:
		return "an integer"
	case TypeFloat:
		return "a number"
	case TypeBool:
		return "true or false"
	case TypeDuration:
		return "a duration"
	case TypeEnum:
		return "one of " + strings.Join(a.Enum, ", ")
	case TypeResource:
		return "a resource selector"
	case TypeFunc:
		return "a function name"
	default:
		return a.Type.String()
	}
}

// parseDuration accepts Go durations and plain numbers of seconds.
func parseDuration(s string) (time.Duration, bool) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		ns := math.Round(f * float64(time.Second))
		if math.IsNaN(ns) || ns >= math.MaxInt64 || ns < math.MinInt64 {
			return 0, false
		}
		return time.Duration(ns), true
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}

// kopfEnumWord returns the member's name of Kopf's spelling of an enum
// value (PERMANENT for kopf.ErrorsMode.PERMANENT), or s itself.
func kopfEnumWord(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// enumSuggestion returns the word of enum closest to s: the same word in
// another letter case (create for CREATE), or one within Suggest's
// distance; "" if none is close.
func enumSuggestion(s string, enum []string) string {
	for _, e := range enum {
		if strings.EqualFold(s, e) {
			return e
		}
	}
	return Suggest(s, enum)
}
