package port

// helpersSource is internal/handlers/pyport.go: the Python semantics that
// ported bodies call (truth, equality, ordering, dict access, len, in,
// iteration, arithmetic of JSON numbers, sleeps).
const helpersSource = `// Code written by kopf-gen port: Python's semantics for the ported handlers'
// bodies, on JSON values (map[string]any, []any, string, float64, int64,
// bool, nil). Edit freely: kopf-gen does not write it again.

package handlers

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"
)

// pyTruthy is Python's bool(v).
func pyTruthy(v any) bool {
	if v == nil {
		return false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool()
	case reflect.String, reflect.Map, reflect.Slice, reflect.Array:
		return rv.Len() > 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return rv.Uint() != 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0
	case reflect.Pointer, reflect.Interface:
		return !rv.IsNil()
	}
	return true
}

// pyNumber is v as a float64, if it is a number.
func pyNumber(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}

// pyEq is Python's a == b.
func pyEq(a, b any) bool {
	if x, ok := pyNumber(a); ok {
		y, ok := pyNumber(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

// pyLess is Python's a < b for numbers, strings and lists (tuples).
func pyLess(a, b any) bool {
	if x, ok := pyNumber(a); ok {
		y, _ := pyNumber(b)
		return x < y
	}
	if x, ok := a.([]any); ok {
		y, _ := b.([]any)
		for i := 0; i < len(x) && i < len(y); i++ {
			if !pyEq(x[i], y[i]) {
				return pyLess(x[i], y[i])
			}
		}
		return len(x) < len(y)
	}
	return fmt.Sprint(a) < fmt.Sprint(b)
}

// pyArith applies an operator to numbers, an int if both are ints.
func pyArith(a, b any, op func(x, y float64) float64) any {
	x, _ := pyNumber(a)
	y, _ := pyNumber(b)
	r := op(x, y)
	if _, fa := a.(float64); !fa {
		if _, fb := b.(float64); !fb {
			return int64(r)
		}
	}
	return r
}

// pyAdd is Python's a + b (numbers, strings, lists).
func pyAdd(a, b any) any {
	if s, ok := a.(string); ok {
		return s + fmt.Sprint(b)
	}
	if l, ok := a.([]any); ok {
		r, _ := b.([]any)
		return append(append([]any{}, l...), r...)
	}
	return pyArith(a, b, func(x, y float64) float64 { return x + y })
}

// pySub is Python's a - b.
func pySub(a, b any) any { return pyArith(a, b, func(x, y float64) float64 { return x - y }) }

// pyMul is Python's a * b.
func pyMul(a, b any) any { return pyArith(a, b, func(x, y float64) float64 { return x * y }) }

// pyAnd and pyOr are Python's and, or (all operands are evaluated).
func pyAnd(vs ...any) any {
	for _, v := range vs[:len(vs)-1] {
		if !pyTruthy(v) {
			return v
		}
	}
	return vs[len(vs)-1]
}

func pyOr(vs ...any) any {
	for _, v := range vs[:len(vs)-1] {
		if pyTruthy(v) {
			return v
		}
	}
	return vs[len(vs)-1]
}

// pyGet is Python's d.get(key, def) for maps (def when key is absent).
func pyGet(d, key, def any) any {
	rv := reflect.ValueOf(d)
	if rv.Kind() != reflect.Map || key == nil {
		return def
	}
	k := reflect.ValueOf(key)
	if !k.Type().AssignableTo(rv.Type().Key()) {
		if !k.Type().ConvertibleTo(rv.Type().Key()) {
			return def
		}
		k = k.Convert(rv.Type().Key())
	}
	v := rv.MapIndex(k)
	if !v.IsValid() {
		return def
	}
	return v.Interface()
}

// pyIndex is Python's v[key] for maps and lists (nil where Python raises).
func pyIndex(v, key any) any {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		return pyGet(v, key, nil)
	case reflect.Slice, reflect.Array, reflect.String:
		i, ok := pyNumber(key)
		n := rv.Len()
		if !ok {
			return nil
		}
		j := int(i)
		if j < 0 {
			j += n
		}
		if j < 0 || j >= n {
			return nil
		}
		return rv.Index(j).Interface()
	}
	return nil
}

// pyDict is v as a map to assign keys of (a new map when v is none).
func pyDict(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Map && rv.Type().Key().Kind() == reflect.String && rv.Type().Elem().Kind() == reflect.Interface {
		return rv.Convert(reflect.TypeOf(map[string]any{})).Interface().(map[string]any)
	}
	return map[string]any{}
}

// pyLen is Python's len(v).
func pyLen(v any) int {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String, reflect.Map, reflect.Slice, reflect.Array:
		return rv.Len()
	}
	return 0
}

// pyIn is Python's x in container.
func pyIn(x, container any) bool {
	rv := reflect.ValueOf(container)
	switch rv.Kind() {
	case reflect.Map:
		k := reflect.ValueOf(x)
		return k.IsValid() && k.Type().AssignableTo(rv.Type().Key()) && rv.MapIndex(k).IsValid()
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len(); i++ {
			if pyEq(rv.Index(i).Interface(), x) {
				return true
			}
		}
	case reflect.String:
		s, ok := x.(string)
		return ok && reflect.ValueOf(container).String() != "" && contains(rv.String(), s)
	}
	return false
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// pyIter is what Python's for iterates over: a list's items, a map's
// keys, a string's characters.
func pyIter(v any) []any {
	rv := reflect.ValueOf(v)
	var out []any
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len(); i++ {
			out = append(out, rv.Index(i).Interface())
		}
	case reflect.Map:
		for _, k := range pyKeys(rv) {
			out = append(out, k.Interface())
		}
	case reflect.String:
		for _, r := range rv.String() {
			out = append(out, string(r))
		}
	}
	return out
}

// pyKeys are a map's keys, sorted (Go's maps have no order: Python's
// dicts iterate in insertion order, which JSON objects do not keep).
func pyKeys(rv reflect.Value) []reflect.Value {
	keys := rv.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return pyLess(keys[i].Interface(), keys[j].Interface()) })
	return keys
}

// pyItems is Python's d.items(): the (key, value) pairs of a map.
func pyItems(v any) []any {
	rv := reflect.ValueOf(v)
	var out []any
	if rv.Kind() == reflect.Map {
		for _, k := range pyKeys(rv) {
			out = append(out, []any{k.Interface(), rv.MapIndex(k).Interface()})
		}
	}
	return out
}

// pyValues is Python's d.values(): the values of a map.
func pyValues(v any) []any {
	var out []any
	for _, kv := range pyItems(v) {
		out = append(out, kv.([]any)[1])
	}
	return out
}

// pySum is Python's sum(numbers).
func pySum(v any) any {
	var total any = int64(0)
	for _, x := range pyIter(v) {
		total = pyAdd(total, x)
	}
	return total
}

// pySorted is Python's sorted(values), of numbers or strings.
func pySorted(v any) []any {
	out := pyIter(v)
	sort.SliceStable(out, func(i, j int) bool { return pyLess(out[i], out[j]) })
	if out == nil {
		out = []any{}
	}
	return out
}

// pySetDefault is Python's d.setdefault(key, def): the key's value,
// def stored under it first if it is absent (d must be a map to store).
func pySetDefault(d any, key string, def any) any {
	m := pyDict(d)
	if v, ok := m[key]; ok {
		return v
	}
	m[key] = def
	return def
}

// pySeconds is a number of seconds as a duration.
func pySeconds(v any) time.Duration {
	f, _ := pyNumber(v)
	return time.Duration(f * float64(time.Second))
}

// pySleep is asyncio.sleep(seconds): the context's error if it ends first.
func pySleep(ctx context.Context, seconds any) error {
	t := time.NewTimer(pySeconds(seconds))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// pyWait is a daemon's stopped.wait(seconds): whether it was stopped.
func pyWait(ctx context.Context, stopped context.Context, seconds any) bool {
	if stopped == nil {
		stopped = ctx
	}
	t := time.NewTimer(pySeconds(seconds))
	defer t.Stop()
	select {
	case <-stopped.Done():
		return true
	case <-t.C:
		return false
	}
}

// pyStopped is a daemon's bool(stopped).
func pyStopped(stopped context.Context) bool { return stopped != nil && stopped.Err() != nil }

// pyTime is time.time().
func pyTime() any { return float64(time.Now().UnixNano()) / 1e9 }
`
