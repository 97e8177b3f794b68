// Package diffs computes and represents the difference between two JSON-like
// trees, the way Kopf does: a list of (op, path, old, new) items, where a nil
// value means "absent".
//
// The trees are what encoding/json produces when decoding into any:
// map[string]any, []any, string, bool, nil, and numbers as float64, int64 or
// json.Number (other integer and float types, named map types such as
// body.Body, and typed slices are accepted too). Numbers compare by value
// regardless of their Go type: int64(1), float64(1) and json.Number("1.0")
// are equal. Booleans are never equal to numbers (unlike Python, where
// True == 1).
//
// A nil value, a typed nil map or slice, and an absent key all mean the same:
// "absent", exactly as None does in Kopf.
package diffs

import "sort"

// Op is the kind of one change.
type Op string

// The operations of a diff item, spelled as Kopf spells them.
const (
	Add    Op = "add"
	Change Op = "change"
	Remove Op = "remove"
)

// Item is one change: at Path, Old became New (nil meaning absent).
type Item struct {
	Op   Op
	Path []string
	Old  any
	New  any
}

// Diff is an ordered list of changes. A nil or empty Diff means "no change".
type Diff []Item

// Compute returns the difference from old to new, as Kopf's
// kopf._cogs.structs.diffs.diff() does:
//
//   - equal values (deeply, see Equal) produce no items, including two
//     absent values;
//   - an absent old value and a present new one produce one Add item at the
//     current path (Old nil); the reverse produces one Remove item (New nil);
//   - two maps are compared key by key, recursively: keys present only in
//     new first, then keys present only in old, then the keys present in
//     both; within each group the keys are sorted (Kopf's order within a
//     group is unspecified). A key whose value is nil counts as absent, so
//     {"a": nil} and {} produce no items;
//   - anything else that differs (scalars, lists, a map versus a scalar)
//     produces one Change item at the current path. Lists are never
//     recursed into: a changed list item changes the whole list.
//
// The root has the empty path. The values in the items share structure with
// the inputs; they are not copies. The result is nil when there is no change.
func Compute(old, new any) Diff {
	var d Diff
	compute(&d, old, new, nil)
	return d
}

func compute(d *Diff, a, b any, path []string) {
	switch {
	case Equal(a, b):
		return
	case isNil(a):
		*d = append(*d, Item{Op: Add, Path: clonePath(path), Old: nil, New: b})
		return
	case isNil(b):
		*d = append(*d, Item{Op: Remove, Path: clonePath(path), Old: a, New: nil})
		return
	}
	am, aok := asMap(a)
	bm, bok := asMap(b)
	if !aok || !bok {
		*d = append(*d, Item{Op: Change, Path: clonePath(path), Old: a, New: b})
		return
	}
	var added, removed, common []string
	for k := range bm {
		if _, ok := am[k]; ok {
			common = append(common, k)
		} else {
			added = append(added, k)
		}
	}
	for k := range am {
		if _, ok := bm[k]; !ok {
			removed = append(removed, k)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	sort.Strings(common)
	for _, k := range added {
		compute(d, nil, bm[k], appendPath(path, k))
	}
	for _, k := range removed {
		compute(d, am[k], nil, appendPath(path, k))
	}
	for _, k := range common {
		compute(d, am[k], bm[k], appendPath(path, k))
	}
}

// Reduce returns the part of d that concerns the field at path, with the
// items' paths made relative to that field, as Kopf's reduce() does. For
// every item of d, in order:
//
//   - with an empty path, the item is kept as is (with its path copied);
//   - an item at the field or below it is kept, its path shortened by the
//     field's path (an item exactly at the field gets the empty path);
//   - an item above the field (e.g. all of "spec" was added while the field
//     is "spec.struct.field") is replaced by the diff, computed with
//     Compute, between the values that its Old and New hold at the rest of
//     the path (absent when they do not hold it);
//   - an item on an unrelated path is dropped.
//
// The result is nil when nothing concerns the field.
func Reduce(d Diff, path []string) Diff {
	var out Diff
	for _, item := range d {
		switch {
		case len(path) == 0:
			out = append(out, Item{Op: item.Op, Path: clonePath(item.Path), Old: item.Old, New: item.New})
		case hasPrefix(item.Path, path):
			out = append(out, Item{Op: item.Op, Path: clonePath(item.Path[len(path):]), Old: item.Old, New: item.New})
		case hasPrefix(path, item.Path):
			tail := path[len(item.Path):]
			oldTail, _ := Resolve(item.Old, tail)
			newTail, _ := Resolve(item.New, tail)
			out = append(out, Compute(oldTail, newTail)...)
		}
	}
	return out
}

// hasPrefix reports whether path starts with prefix.
func hasPrefix(path, prefix []string) bool {
	if len(path) < len(prefix) {
		return false
	}
	for i := range prefix {
		if path[i] != prefix[i] {
			return false
		}
	}
	return true
}

func clonePath(path []string) []string {
	out := make([]string, len(path))
	copy(out, path)
	return out
}

func appendPath(path []string, key string) []string {
	out := make([]string, len(path)+1)
	copy(out, path)
	out[len(path)] = key
	return out
}
