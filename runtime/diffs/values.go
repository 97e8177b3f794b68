package diffs

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strconv"
)

// Resolve returns the value at path inside obj, walking maps only (as
// Kopf's dicts.resolve does; list indices are not supported).
//
// The boolean is true when every key of the path exists, even if the final
// value is nil (a JSON null); it is false when a key is missing or when an
// intermediate value is not a map (including nil). An empty path resolves
// to obj itself, found. The returned value is not copied.
func Resolve(obj any, path []string) (any, bool) {
	cur := obj
	for _, key := range path {
		m, ok := asMap(cur)
		if !ok {
			return nil, false
		}
		v, ok := m[key]
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, true
}

// Equal reports whether two JSON-like values are deeply equal, as Python's
// == is for decoded JSON: maps must have the same keys with equal values
// (a nil-valued key is not the same as an absent one here), lists must have
// the same length and equal items in order, numbers compare by value
// whatever their Go type (see the package doc), and nil equals only nil
// (or a typed nil map or slice). Values of other types are compared with
// reflect.DeepEqual.
func Equal(a, b any) bool {
	an, bn := isNil(a), isNil(b)
	if an || bn {
		return an && bn
	}
	switch av := a.(type) {
	case string:
		if bv, ok := b.(string); ok {
			return av == bv
		}
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case float64:
		if bv, ok := b.(float64); ok {
			return av == bv
		}
	case int64:
		if bv, ok := b.(int64); ok {
			return av == bv
		}
	}
	if eq, ok := numbersEqual(a, b); ok {
		return eq
	}
	if am, ok := asMap(a); ok {
		bm, ok := asMap(b)
		if !ok || len(am) != len(bm) {
			return false
		}
		for k, av := range am {
			bv, ok := bm[k]
			if !ok || !Equal(av, bv) {
				return false
			}
		}
		return true
	}
	if al, ok := asList(a); ok {
		bl, ok := asList(b)
		if !ok || len(al) != len(bl) {
			return false
		}
		for i := range al {
			if !Equal(al[i], bl[i]) {
				return false
			}
		}
		return true
	}
	if as, ok := asString(a); ok {
		bs, ok := asString(b)
		return ok && as == bs
	}
	return reflect.DeepEqual(a, b)
}

var mapType = reflect.TypeOf(map[string]any{})

// isNil reports whether v is absent: nil, or a typed nil map, slice or
// pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// asMap returns v as a map[string]any if it is a map with string keys. For
// map[string]any and named types of it (body.Body, patches.Patch, ...), the
// result shares storage with v; other maps (e.g. map[string]string) are
// converted into a new map.
func asMap(v any) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	if v == nil {
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		return nil, false
	}
	if rv.Type().ConvertibleTo(mapType) {
		return rv.Convert(mapType).Interface().(map[string]any), true
	}
	out := make(map[string]any, rv.Len())
	iter := rv.MapRange()
	for iter.Next() {
		out[iter.Key().String()] = iter.Value().Interface()
	}
	return out, true
}

// asList returns v as a []any if it is a slice or an array (but not a
// []byte); typed slices are converted into a new []any.
func asList(v any) ([]any, bool) {
	if l, ok := v.([]any); ok {
		return l, true
	}
	if v == nil {
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, false
	}
	if rv.Type().Elem().Kind() == reflect.Uint8 {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// asString returns v as a string if its kind is string (named string types
// included). json.Number is a number, not a string.
func asString(v any) (string, bool) {
	if _, ok := v.(json.Number); ok {
		return "", false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.String {
		return rv.String(), true
	}
	return "", false
}

// number is a numeric value normalised for exact comparison: either a
// finite rational, or a special float (NaN or ±Inf).
type number struct {
	rat     *big.Rat
	special float64
	finite  bool
}

// toNumber converts any Go integer, float, or json.Number into a number.
// Booleans are not numbers.
func toNumber(v any) (number, bool) {
	switch n := v.(type) {
	case int:
		return number{rat: new(big.Rat).SetInt64(int64(n)), finite: true}, true
	case int8:
		return number{rat: new(big.Rat).SetInt64(int64(n)), finite: true}, true
	case int16:
		return number{rat: new(big.Rat).SetInt64(int64(n)), finite: true}, true
	case int32:
		return number{rat: new(big.Rat).SetInt64(int64(n)), finite: true}, true
	case int64:
		return number{rat: new(big.Rat).SetInt64(n), finite: true}, true
	case uint:
		return fromUint(uint64(n)), true
	case uint8:
		return fromUint(uint64(n)), true
	case uint16:
		return fromUint(uint64(n)), true
	case uint32:
		return fromUint(uint64(n)), true
	case uint64:
		return fromUint(n), true
	case float32:
		return fromFloat(float64(n)), true
	case float64:
		return fromFloat(n), true
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(n)); ok {
			return number{rat: r, finite: true}, true
		}
		if f, err := strconv.ParseFloat(string(n), 64); err == nil || math.IsInf(f, 0) {
			return fromFloat(f), true
		}
		return number{}, false
	}
	return number{}, false
}

func fromUint(u uint64) number {
	return number{rat: new(big.Rat).SetInt(new(big.Int).SetUint64(u)), finite: true}
}

func fromFloat(f float64) number {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return number{special: f}
	}
	return number{rat: new(big.Rat).SetFloat64(f), finite: true}
}

// numbersEqual compares two values if both are numbers; ok is false when
// either is not a number.
func numbersEqual(a, b any) (eq, ok bool) {
	an, aok := toNumber(a)
	if !aok {
		return false, false
	}
	bn, bok := toNumber(b)
	if !bok {
		return false, false
	}
	if an.finite && bn.finite {
		return an.rat.Cmp(bn.rat) == 0, true
	}
	if !an.finite && !bn.finite {
		return an.special == bn.special, true // NaN != NaN, as in Python
	}
	return false, true
}
