package hierarchies

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kopf-go/kopf/runtime/body"
)

// ErrUnsupported is wrapped by the errors about children that are not
// objects (Kopf's TypeError "K8s object class is not supported").
var ErrUnsupported = errors.New("K8s object class is not supported")

// child is one object to change: either a JSON tree (m) or a typed object
// or apply configuration (typed); nested if it was found at a nested path
// of another.
type child struct {
	m      map[string]any
	typed  objectMeta
	nested bool
}

// roots returns the children that are not nested ones.
func roots(children []child) []child {
	out := make([]child, 0, len(children))
	for _, c := range children {
		if !c.nested {
			out = append(out, c)
		}
	}
	return out
}

// collect flattens objs into the children to change, with the objects at
// the nested paths of each after it, and checks that every untyped one has
// the structure the functions write into, so that nothing is changed when
// any child is wrong.
func collect(objs any, nested []string) ([]child, error) {
	paths := make([][]string, len(nested))
	for i, p := range nested {
		if p == "" {
			return nil, errors.New("an empty nested path")
		}
		paths[i] = strings.Split(p, ".")
	}
	var out []child
	if err := walk(objs, paths, &out); err != nil {
		return nil, err
	}
	for _, c := range out {
		if c.m != nil {
			if err := checkTree(c.m); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

var (
	metaObjectType = reflect.TypeFor[metav1.Object]()
	treeType       = reflect.TypeFor[map[string]any]()
)

func walk(objs any, paths [][]string, out *[]child) error {
	switch o := objs.(type) {
	case nil:
		return nil
	case map[string]any:
		if o == nil {
			return nil
		}
		return addTree(o, paths, out)
	case body.Body:
		if o == nil {
			return nil
		}
		return addTree(o, paths, out)
	case *unstructured.Unstructured:
		if o == nil {
			return nil
		}
		if o.Object == nil {
			o.Object = map[string]any{}
		}
		return addTree(o.Object, paths, out)
	case *unstructured.UnstructuredList:
		if o == nil {
			return nil
		}
		for i := range o.Items {
			if err := walk(&o.Items[i], paths, out); err != nil {
				return err
			}
		}
		return nil
	case metav1.Object:
		if v := reflect.ValueOf(o); v.Kind() == reflect.Pointer && v.IsNil() {
			return nil
		}
		return addTyped(o, reflect.ValueOf(o), paths, out)
	case runtime.Object:
		if meta.IsListType(o) {
			return meta.EachListItem(o, func(item runtime.Object) error { return walk(item, paths, out) })
		}
	}
	if ac, ok := applyConfiguration(reflect.ValueOf(objs)); ok {
		return addTyped(ac, reflect.ValueOf(objs), paths, out)
	}
	return walkValue(reflect.ValueOf(objs), paths, out)
}

// walkValue walks what the type switch of walk does not know: slices,
// arrays, pointers to them, iterators.
func walkValue(v reflect.Value, paths [][]string, out *[]child) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if e := v.Elem(); e.Kind() == reflect.Slice || e.Kind() == reflect.Array || e.Kind() == reflect.Interface {
			return walkValue(e, paths, out)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := walk(item(v.Index(i)), paths, out); err != nil {
				return err
			}
		}
		return nil
	case reflect.Func:
		if isSeq(v.Type()) && !v.IsNil() {
			var err error
			yield := reflect.MakeFunc(v.Type().In(0), func(args []reflect.Value) []reflect.Value {
				err = walk(args[0].Interface(), paths, out)
				return []reflect.Value{reflect.ValueOf(err == nil)}
			})
			v.Call([]reflect.Value{yield})
			return err
		}
	}
	if !v.IsValid() {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnsupported, v.Type())
}

// item returns an element of a slice or an array: the address of a struct
// when the element is addressable, so that the change is made in place.
func item(v reflect.Value) any {
	if v.Kind() == reflect.Struct && v.CanAddr() {
		return v.Addr().Interface()
	}
	return v.Interface()
}

// isSeq reports whether t is an iterator of one value: func(func(T) bool).
func isSeq(t reflect.Type) bool {
	if t.NumIn() != 1 || t.NumOut() != 0 {
		return false
	}
	y := t.In(0)
	return y.Kind() == reflect.Func && y.NumIn() == 1 && y.NumOut() == 1 && y.Out(0).Kind() == reflect.Bool
}

func addTree(m map[string]any, paths [][]string, out *[]child) error {
	*out = append(*out, child{m: m})
	for _, path := range paths {
		var cur any = m
		for i, key := range path {
			tree, ok := cur.(map[string]any)
			if !ok {
				return fmt.Errorf("the nested field %s: %s is not an object but %T", strings.Join(path, "."), strings.Join(path[:i], "."), cur)
			}
			if cur, ok = tree[key]; !ok || cur == nil {
				break // absent: skipped, never created
			}
		}
		if cur == nil {
			continue
		}
		tree, ok := cur.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: the nested field %s is %T", ErrUnsupported, strings.Join(path, "."), cur)
		}
		*out = append(*out, child{m: tree, nested: true})
	}
	return nil
}

// addTyped adds a typed object or an apply configuration (obj, whose Go
// value is root) and the objects at its nested paths.
func addTyped(obj objectMeta, root reflect.Value, paths [][]string, out *[]child) error {
	*out = append(*out, child{typed: obj})
	for _, path := range paths {
		v, err := resolve(root, path)
		if err != nil {
			return err
		}
		if !v.IsValid() {
			continue
		}
		ac, isAC := applyConfiguration(addr(v))
		switch {
		case isAC:
			*out = append(*out, child{typed: ac, nested: true})
		case v.Type() == treeType:
			*out = append(*out, child{m: v.Interface().(map[string]any), nested: true})
		case v.CanAddr() && v.Addr().Type().Implements(metaObjectType):
			*out = append(*out, child{typed: v.Addr().Interface().(metav1.Object), nested: true})
		case !v.CanAddr() && v.Kind() == reflect.Struct:
			return fmt.Errorf("%w: the nested field %s is a %s in a map, which cannot be changed in place", ErrUnsupported, strings.Join(path, "."), v.Type())
		default:
			return fmt.Errorf("%w: the nested field %s is a %s, which has no metadata", ErrUnsupported, strings.Join(path, "."), v.Type())
		}
	}
	return nil
}

// addr returns the address of v, or an invalid value if it has none.
func addr(v reflect.Value) reflect.Value {
	if !v.CanAddr() {
		return reflect.Value{}
	}
	return v.Addr()
}

// resolve follows a nested path through Go values by the JSON names of
// struct fields; an invalid value means that something on the path is
// absent.
func resolve(v reflect.Value, path []string) (reflect.Value, error) {
	for i, key := range path {
		v = indirect(v)
		if !v.IsValid() {
			return v, nil
		}
		switch v.Kind() {
		case reflect.Struct:
			v = fieldByJSONName(v, key)
		case reflect.Map:
			if v.Type().Key().Kind() != reflect.String {
				return reflect.Value{}, fmt.Errorf("the nested field %s: %s is a %s", strings.Join(path, "."), strings.Join(path[:i], "."), v.Type())
			}
			v = v.MapIndex(reflect.ValueOf(key).Convert(v.Type().Key()))
		default:
			return reflect.Value{}, fmt.Errorf("the nested field %s: %s is not an object but a %s", strings.Join(path, "."), strings.Join(path[:i], "."), v.Type())
		}
		if !v.IsValid() {
			return v, nil
		}
	}
	return indirect(v), nil
}

// indirect goes through pointers and interfaces; nil ones are absent.
func indirect(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

// fieldByJSONName returns the field of a struct that encoding/json names
// key, looking into embedded structs without a name (`json:",inline"`).
func fieldByJSONName(v reflect.Value, key string) reflect.Value {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if name == "" && f.Anonymous {
			if e := indirect(v.Field(i)); e.IsValid() && e.Kind() == reflect.Struct {
				if found := fieldByJSONName(e, key); found.IsValid() {
					return found
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

// checkTree checks that an untyped child's metadata, labels and owner
// references are objects and a list where present.
func checkTree(m map[string]any) error {
	md, ok := m["metadata"]
	if !ok || md == nil {
		return nil
	}
	tree, ok := md.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: its metadata is %T", ErrUnsupported, md)
	}
	if l, ok := tree["labels"]; ok && l != nil {
		if _, ok := l.(map[string]any); !ok {
			return fmt.Errorf("%w: its metadata.labels is %T", ErrUnsupported, l)
		}
	}
	if r, ok := tree["ownerReferences"]; ok && r != nil {
		if _, ok := r.([]any); !ok {
			return fmt.Errorf("%w: its metadata.ownerReferences is %T", ErrUnsupported, r)
		}
	}
	return nil
}
