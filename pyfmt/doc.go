// Package pyfmt formats Go values as Kopf's Python prints the same JSON
// values, so that a port of a Kopf operator keeps its printed and logged
// lines byte for byte:
//
//   - [Repr] is Python's repr() (f-strings' {x!r});
//   - [Str] is Python's str() (f-strings' {x!s} and {x}, which is
//     format(x, "") and the same as str(x) for JSON values);
//   - [Pformat] is pprint.pformat() with its defaults (width 80,
//     sort_dicts=True);
//   - [Float] is Python's repr() of a float.
//
// An f-string translates to fmt.Sprintf with %s and these functions:
//
//	f"field={spec['field']!r}, retry={retry}"
//	fmt.Sprintf("field=%s, retry=%s", pyfmt.Repr(kw.Spec["field"]), pyfmt.Str(kw.Retry))
//
// # The values
//
// A value is rendered as Python renders what json.loads makes of the JSON
// that encoding/json (and so the API server) writes of it:
//
//   - nil, a nil pointer, a nil map or slice: None; bool: True or False;
//   - strings (and types of string kind): str, with Python's quoting;
//   - integers of every Go type: int; a float64 or float32 with an integral
//     value below 1e21 in magnitude: int too (encoding/json writes it
//     without a fraction, so Python reads an int); other floats: float
//     ("0.1", "1e+21", "nan", "inf"); json.Number: int or float as Python
//     reads the literal ("1" is 1, "1.0" is 1.0, "1e16" is 1e+16);
//   - maps: dict; slices: list; []byte: the base64 str of its JSON;
//   - structs and types with a MarshalJSON or MarshalText method: what
//     their JSON decodes to;
//   - [Valuer]s: the repr of what their PyValue returns.
//
// Where Go and JSON part, pyfmt follows what Kopf's values are:
//
//   - Go arrays and [Tuple] are tuples ("('ns', 'name')", "(1,)"): Kopf's
//     tuples (an index's keys, a field's path) are arrays in kopf-go;
//   - map keys keep their own type (an int key is an int, an array key a
//     tuple), where JSON would write them as strings;
//   - the keys of every dict are sorted, by Python's ordering of the keys
//     (str by code point, numbers by value, tuples item by item). Python
//     prints a dict in insertion order, which a Go map does not keep;
//     pprint sorts them too.
//
// Strings are quoted as Python does: single quotes, or double quotes when
// the string has a single quote and no double quote; \\, the quote, \t,
// \n and \r escaped; the other characters that Python does not print
// (controls, format characters, separators, unassigned code points) as
// \xhh, \uhhhh or \Uhhhhhhhh; every other character as is. Widths of
// [Pformat] count characters, as Python's len() does.
//
// Values that JSON cannot hold (channels, functions, complex numbers) are
// rendered as "<T object>" with their Go type. A value that contains
// itself is rendered to a depth of 512 and then as "...". No value makes
// these functions panic.
package pyfmt
