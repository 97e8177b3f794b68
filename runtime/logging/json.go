package logging

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kopf-go/kopf/pyfmt"
)

// Reference is the identity of the object a record is about, as Kopf's
// object loggers carry it (k8s_ref): the JSON format writes it under
// Options.RefKey as {"apiVersion", "kind", "name", "uid", "namespace"},
// with null for what is unknown (the namespace of a cluster-scoped
// object).
type Reference struct {
	APIVersion string
	Kind       string
	Name       string
	UID        string
	Namespace  string
}

// Referencer is implemented by the values of ObjectKey attributes that
// carry an object's full reference (package posting's ObjectRef). A plain
// string value ("namespace/name") gives the name and namespace only.
type Referencer interface {
	ObjectReference() Reference
}

// referenceOf returns the reference of an ObjectKey attribute's value.
func referenceOf(v slog.Value) Reference {
	if r, ok := v.Any().(Referencer); ok {
		return r.ObjectReference()
	}
	s := v.Resolve().String()
	if ns, name, ok := strings.Cut(s, "/"); ok {
		return Reference{Namespace: ns, Name: name}
	}
	return Reference{Name: s}
}

// jsonHandler writes Kopf's JSON format: what python-json-logger's
// JsonFormatter writes with Kopf's ObjectJsonFormatter on top. Each record
// is one line of Python's json.dumps (", " and ": " separators, every
// character outside printable ASCII escaped), with the fields in Kopf's
// order:
//
//	{"message": "...", "exc_info": "...", <attributes>, "timestamp": "2026-06-03T12:00:01.123456+00:00", "object": {...}, "severity": "info"}
//
// exc_info is the attribute "stack" (a panic's stack, where Kopf logs a
// traceback); the object reference is only there for records about an
// object; severity is debug, info, warn, error or fatal.
type jsonHandler struct {
	out    *lockedWriter
	level  slog.Level
	prefix bool   // "[namespace/name] " before the messages about an object
	refKey string // the field of the object reference
	object *slog.Value
	attrs  []groupedAttr
	groups []string
}

// groupedAttr is an attribute given to WithAttrs, under the groups open then.
type groupedAttr struct {
	groups []string
	attr   slog.Attr
}

func (h *jsonHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *jsonHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]groupedAttr(nil), h.attrs...)
	for _, a := range attrs {
		if a.Key == ObjectKey && len(h.groups) == 0 {
			v := a.Value
			c.object = &v
			continue
		}
		c.attrs = append(c.attrs, groupedAttr{groups: h.groups, attr: a})
	}
	return &c
}

func (h *jsonHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = append(append([]string(nil), h.groups...), name)
	return &c
}

func (h *jsonHandler) Handle(_ context.Context, r slog.Record) error {
	object := h.object
	var stack *slog.Value
	var extras []groupedAttr
	r.Attrs(func(a slog.Attr) bool {
		switch {
		case a.Key == ObjectKey && len(h.groups) == 0:
			if object == nil { // the logger's object wins, as in the text formats
				v := a.Value
				object = &v
			}
		case a.Key == "stack" && len(h.groups) == 0:
			v := a.Value
			stack = &v
		default:
			extras = append(extras, groupedAttr{groups: h.groups, attr: a})
		}
		return true
	})

	message := r.Message
	var ref Reference
	if object != nil {
		ref = referenceOf(*object)
		if h.prefix {
			if ref.Namespace != "" {
				message = "[" + ref.Namespace + "/" + ref.Name + "] " + message
			} else {
				message = "[" + ref.Name + "] " + message
			}
		}
	}
	rec := &jsonObject{}
	rec.set("message", message)
	if stack != nil {
		rec.set("exc_info", strings.TrimRight(stack.String(), "\n"))
	}
	for _, a := range h.attrs {
		rec.add(a.groups, a.attr)
	}
	for _, a := range extras {
		rec.add(a.groups, a.attr)
	}
	ts := r.Time
	if ts.IsZero() {
		ts = time.Now()
	}
	rec.set("timestamp", pyISOTime(ts))
	if object != nil {
		rec.set(h.refKey, &jsonObject{fields: []jsonField{
			{"apiVersion", nullable(ref.APIVersion)},
			{"kind", nullable(ref.Kind)},
			{"name", nullable(ref.Name)},
			{"uid", nullable(ref.UID)},
			{"namespace", nullable(ref.Namespace)},
		}})
	}
	if !rec.has("severity") {
		rec.set("severity", severity(r.Level))
	}
	buf := appendPyJSON(nil, rec)
	buf = append(buf, '\n')
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	_, err := h.out.w.Write(buf)
	return err
}

// severity is Kopf's "severity" field for a level.
func severity(l slog.Level) string {
	switch {
	case l <= slog.LevelDebug:
		return "debug"
	case l <= slog.LevelInfo:
		return "info"
	case l <= slog.LevelWarn:
		return "warn"
	case l <= slog.LevelError:
		return "error"
	default:
		return "fatal"
	}
}

// pyISOTime is Python's datetime.isoformat() of the time in UTC, as
// python-json-logger writes its timestamp: microseconds, omitted when zero.
func pyISOTime(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonObject is a JSON object whose fields keep the order of their first
// setting, as Python's dicts do.
type jsonObject struct{ fields []jsonField }

type jsonField struct {
	key   string
	value any // nil, string, bool, int64, uint64, float64, json.RawMessage, *jsonObject
}

func (o *jsonObject) set(key string, value any) {
	for i := range o.fields {
		if o.fields[i].key == key {
			o.fields[i].value = value
			return
		}
	}
	o.fields = append(o.fields, jsonField{key, value})
}

func (o *jsonObject) has(key string) bool {
	for _, f := range o.fields {
		if f.key == key {
			return true
		}
	}
	return false
}

// add sets an attribute under its groups (nested objects); empty groups
// and attributes are left out, as slog's handlers do.
func (o *jsonObject) add(groups []string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	target := o
	for _, g := range groups {
		target = target.child(g)
	}
	if a.Value.Kind() == slog.KindGroup {
		attrs := a.Value.Group()
		if len(attrs) == 0 {
			return
		}
		if a.Key != "" {
			target = target.child(a.Key)
		}
		for _, ga := range attrs {
			target.add(nil, ga)
		}
		return
	}
	target.set(a.Key, jsonValue(a.Value))
}

func (o *jsonObject) child(key string) *jsonObject {
	for _, f := range o.fields {
		if f.key == key {
			if c, ok := f.value.(*jsonObject); ok {
				return c
			}
		}
	}
	c := &jsonObject{}
	o.set(key, c)
	return c
}

func jsonValue(v slog.Value) any {
	switch v.Kind() {
	case slog.KindString:
		return v.String()
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindFloat64:
		return v.Float64()
	case slog.KindBool:
		return v.Bool()
	case slog.KindDuration:
		return v.Duration().String()
	case slog.KindTime:
		return pyISOTime(v.Time())
	}
	switch x := v.Any().(type) {
	case nil:
		return nil
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	case json.Marshaler, []any, map[string]any:
		if raw, err := json.Marshal(x); err == nil {
			return json.RawMessage(raw)
		}
	}
	return fmt.Sprint(v.Any())
}

// appendPyJSON appends v as Python's json.dumps(v) writes it: ", " and
// ": " separators, ensure_ascii.
func appendPyJSON(buf []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...)
	case string:
		return appendPyString(buf, x)
	case bool:
		return strconv.AppendBool(buf, x)
	case int64:
		return strconv.AppendInt(buf, x, 10)
	case uint64:
		return strconv.AppendUint(buf, x, 10)
	case float64:
		return appendPyFloat(buf, x)
	case json.RawMessage:
		return appendASCII(buf, x)
	case *jsonObject:
		buf = append(buf, '{')
		for i, f := range x.fields {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = appendPyString(buf, f.key)
			buf = append(buf, ": "...)
			buf = appendPyJSON(buf, f.value)
		}
		return append(buf, '}')
	}
	return appendPyString(buf, fmt.Sprint(v))
}

// appendPyFloat writes a float as Python's json.dumps does: its repr
// (pyfmt.Float: 1.0, 0.5, 1e-05, 1e+16), NaN and Infinity as such.
func appendPyFloat(buf []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	}
	return append(buf, pyfmt.Float(f)...)
}

// appendPyString writes a JSON string as Python's json.dumps does with
// ensure_ascii: every character outside printable ASCII as \uXXXX
// (lower-case hex, surrogate pairs beyond the BMP), except \n, \r, \t, \b
// and \f.
func appendPyString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for _, r := range s {
		switch r {
		case '"':
			buf = append(buf, `\"`...)
		case '\\':
			buf = append(buf, `\\`...)
		case '\n':
			buf = append(buf, `\n`...)
		case '\r':
			buf = append(buf, `\r`...)
		case '\t':
			buf = append(buf, `\t`...)
		case '\b':
			buf = append(buf, `\b`...)
		case '\f':
			buf = append(buf, `\f`...)
		default:
			buf = appendRune(buf, r)
		}
	}
	return append(buf, '"')
}

// appendASCII copies JSON text, escaping its non-ASCII characters (which
// can only be inside its strings) as \uXXXX.
func appendASCII(buf []byte, raw []byte) []byte {
	for len(raw) > 0 {
		r, size := utf8.DecodeRune(raw)
		if r < utf8.RuneSelf {
			buf = append(buf, raw[0])
		} else {
			buf = appendRune(buf, r)
		}
		raw = raw[size:]
	}
	return buf
}

func appendRune(buf []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	u4 := func(buf []byte, c rune) []byte {
		return append(buf, '\\', 'u', hex[c>>12&0xf], hex[c>>8&0xf], hex[c>>4&0xf], hex[c&0xf])
	}
	switch {
	case r >= 0x20 && r < 0x7f:
		return append(buf, byte(r))
	case r > 0xffff:
		r -= 0x10000
		buf = u4(buf, 0xd800+(r>>10))
		return u4(buf, 0xdc00+(r&0x3ff))
	default:
		return u4(buf, r)
	}
}
