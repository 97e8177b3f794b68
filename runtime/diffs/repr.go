package diffs

import "github.com/kopf-go/kopf/pyfmt"

// String renders the diff the way Kopf logs it (the Python repr() of its
// tuple of items), so that "{Title} diff: {diff}" log lines look the same:
//
//	(('add', ('spec', 'field'), None, 'value'), ('remove', ('spec', 'x'), 1, None))
//
// The diff and every path are Python tuples (a single element gets a
// trailing comma, the empty tuple is "()"); the values are rendered by
// pyfmt.Repr, as Kopf's Python prints the same JSON values (strings with
// Python's quoting, None, True/False, dicts with their keys sorted, floats
// as Python's repr, integral floats below 1e21 as the ints that Python
// reads from the API server's JSON of them). An empty diff is "()". The
// rendering is for humans and logs; it is not meant to be parsed.
func (d Diff) String() string { return pyfmt.Repr(d) }

// PyValue makes a Diff a pyfmt.Valuer: Kopf's Diff prints as the tuple of
// its items.
func (d Diff) PyValue() any {
	items := make(pyfmt.Tuple, len(d))
	for i, item := range d {
		items[i] = item
	}
	return items
}

// String renders one item as Kopf does: ('op', ('path', ...), old, new).
// See Diff.String for the rendering rules.
func (it Item) String() string { return pyfmt.Repr(it) }

// PyValue makes an Item a pyfmt.Valuer: Kopf's DiffItem prints as the
// tuple (operation, path, old, new), the path a tuple too.
func (it Item) PyValue() any {
	path := make(pyfmt.Tuple, len(it.Path))
	for i, key := range it.Path {
		path[i] = key
	}
	return pyfmt.Tuple{string(it.Op), path, it.Old, it.New}
}
