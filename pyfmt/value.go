package pyfmt

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Tuple is a Python tuple: "()", "(1,)", "('a', 'b')".
type Tuple []any

// Valuer is a Go type that stands for a Python object of a type of its
// own whose repr() is the repr() of another value, the one PyValue returns
// (a [Tuple], a map, a string, ...). As Python's pprint does with such
// objects, [Pformat] writes their repr on one line, unwrapped; [Str] is
// their repr. kopf-go's diffs and diff items are Valuers: Kopf's Diff and
// DiffItem print as the tuples they hold.
type Valuer interface {
	PyValue() any
}

// maxDepth bounds the nesting that is rendered: a map or slice that
// contains itself would recurse forever (Python would print "{...}").
const maxDepth = 512

// kind is the Python type of a node.
type kind uint8

const (
	kNone kind = iota
	kBool
	kInt
	kFloat
	kStr
	kList
	kTuple
	kDict
	kOther // rendered as its text, as Python's repr of an object
)

// node is a Python value: what a Go value stands for.
type node struct {
	kind  kind
	b     bool
	s     string // str; int's decimal digits; kOther's text
	f     float64
	items []node // list and tuple items; dict values
	keys  []node // dict keys, sorted
}

var (
	valuerType    = reflect.TypeFor[Valuer]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
)

// toNode converts v to the Python value it stands for.
func toNode(v any, depth int) node {
	if depth > maxDepth {
		return node{kind: kOther, s: "..."}
	}
	switch x := v.(type) {
	case nil:
		return node{kind: kNone}
	case string:
		return node{kind: kStr, s: x}
	case bool:
		return node{kind: kBool, b: x}
	case json.Number:
		return numberNode(string(x))
	case float64:
		return floatNode(x)
	case Tuple:
		return seqNode(kTuple, reflect.ValueOf([]any(x)), depth)
	}
	return reflectNode(reflect.ValueOf(v), depth)
}

// reflectNode converts any other value by its kind.
func reflectNode(rv reflect.Value, depth int) node {
	if !rv.IsValid() {
		return node{kind: kNone}
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return node{kind: kNone}
		}
	}
	if rv.CanInterface() {
		t := rv.Type()
		switch {
		case t.Implements(valuerType): // before nil: a nil Diff is "()"
			return node{kind: kOther, s: reprOf(toNode(rv.Interface().(Valuer).PyValue(), depth+1))}
		case (rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice) && rv.IsNil():
			return node{kind: kNone}
		case t.Implements(marshalerType), t.Implements(textType):
			return jsonNode(rv.Interface(), depth)
		}
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		return reflectNode(rv.Elem(), depth+1)
	case reflect.String:
		return node{kind: kStr, s: rv.String()}
	case reflect.Bool:
		return node{kind: kBool, b: rv.Bool()}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return node{kind: kInt, s: strconv.FormatInt(rv.Int(), 10)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return node{kind: kInt, s: strconv.FormatUint(rv.Uint(), 10)}
	case reflect.Float64:
		return floatNode(rv.Float())
	case reflect.Float32:
		// encoding/json writes a float32 in its own shortest digits.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(rv.Float(), 'g', -1, 32), 64)
		return floatNode(f)
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return jsonNode(rv.Interface(), depth)
		}
		return seqNode(kList, rv, depth)
	case reflect.Array:
		return seqNode(kTuple, rv, depth)
	case reflect.Map:
		return mapNode(rv, depth)
	case reflect.Struct:
		if rv.CanInterface() {
			return jsonNode(rv.Interface(), depth)
		}
	}
	return node{kind: kOther, s: "<" + rv.Type().String() + " object>"}
}

// elemNode converts an item of a container, by its dynamic type.
func elemNode(rv reflect.Value, depth int) node {
	if rv.CanInterface() {
		return toNode(rv.Interface(), depth)
	}
	return reflectNode(rv, depth)
}

func seqNode(k kind, rv reflect.Value, depth int) node {
	n := node{kind: k, items: make([]node, rv.Len())}
	for i := range n.items {
		n.items[i] = elemNode(rv.Index(i), depth+1)
	}
	return n
}

func mapNode(rv reflect.Value, depth int) node {
	type entry struct{ key, value node }
	entries := make([]entry, 0, rv.Len())
	for it := rv.MapRange(); it.Next(); {
		entries = append(entries, entry{elemNode(it.Key(), depth+1), elemNode(it.Value(), depth+1)})
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return compare(a.key, b.key) })
	n := node{kind: kDict, keys: make([]node, len(entries)), items: make([]node, len(entries))}
	for i, e := range entries {
		n.keys[i], n.items[i] = e.key, e.value
	}
	return n
}

// jsonNode converts v through its JSON, as Python would read it.
func jsonNode(v any, depth int) node {
	data, err := json.Marshal(v)
	if err != nil {
		return node{kind: kOther, s: fmt.Sprintf("<%T object>", v)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var decoded any
	if err := dec.Decode(&decoded); err != nil {
		return node{kind: kOther, s: fmt.Sprintf("<%T object>", v)}
	}
	return toNode(decoded, depth+1)
}

// numberNode reads a JSON number literal as Python's json.loads does: an
// int of any size without a fraction or an exponent, else a float (inf
// when it overflows).
func numberNode(lit string) node {
	if !strings.ContainsAny(lit, ".eE") {
		if i, ok := new(big.Int).SetString(lit, 10); ok {
			return node{kind: kInt, s: i.String()}
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return node{kind: kOther, s: lit} // not a number: its text
	}
	return node{kind: kFloat, f: f}
}

// floatNode is a float64 as Python reads encoding/json's text of it: an
// integral value below 1e21 is written without a fraction, an int.
func floatNode(f float64) node {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		if f == 0 {
			return node{kind: kInt, s: "0"} // "-0" is the int 0
		}
		return node{kind: kInt, s: strconv.FormatFloat(f, 'f', 0, 64)}
	}
	return node{kind: kFloat, f: f}
}
