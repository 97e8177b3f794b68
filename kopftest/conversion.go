package kopftest

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/runtime/diffs"
)

// RoundTripOption changes how RoundTrip fuzzes.
type RoundTripOption func(*roundTrip)

type roundTrip struct {
	iterations int
	seed       int64
	funcs      []any
}

// WithIterations sets how many objects of each version RoundTrip fuzzes
// (100 by default).
func WithIterations(n int) RoundTripOption { return func(r *roundTrip) { r.iterations = n } }

// WithSeed sets the fuzzer's seed (the default is fixed: a run is
// repeatable; a failure names its seed).
func WithSeed(seed int64) RoundTripOption { return func(r *roundTrip) { r.seed = seed } }

// WithFillFuncs adds fill functions of sigs.k8s.io/randfill (each a
// func(*T, randfill.Continue)): values of a field that the conversions
// accept, when not every value is valid.
func WithFillFuncs(fns ...any) RoundTripOption {
	return func(r *roundTrip) { r.funcs = append(r.funcs, fns...) }
}

// RoundTrip checks that a spoke's conversions to and from its hub lose
// nothing: objects of the spoke S, filled at random (sigs.k8s.io/randfill,
// the fuzzer that apimachinery uses), converted to the hub H and back
// must come back equal, and objects of the hub converted to the spoke and
// back too. The conversions run as the operator serves them
// (kopf.TypedConversionFunc: JSON in and out, the metadata copied), and
// equality is of the objects' JSON: a field that a conversion drops, an
// error or a panic fails the test with the object and the diff.
//
// The metadata is filled with a name, a namespace, labels and
// annotations (the runtime copies it: a conversion may change only the
// labels and annotations); apiVersion and kind are left empty (the
// runtime sets them). Fields of type any (e.g. a map[string]any status)
// are filled with strings, integers and booleans.
func RoundTrip[S, H any](t testing.TB, toHub func(src *S, dst *H) error, fromHub func(src *H, dst *S) error, opts ...RoundTripOption) {
	t.Helper()
	cfg := roundTrip{iterations: 100, seed: 1}
	for _, o := range opts {
		o(&cfg)
	}
	to, from := kopf.TypedConversionFunc(toHub), kopf.TypedConversionFunc(fromHub)
	filler := randfill.New().NilChance(0.2).NumElements(0, 3).MaxDepth(12).
		RandSource(rand.NewSource(cfg.seed)).Funcs(append(defaultFillFuncs(), cfg.funcs...)...)
	for i := range cfg.iterations {
		var spoke S
		filler.Fill(&spoke)
		if !checkRoundTrip(t, &spoke, to, from, fmt.Sprintf("%T → %T → %T (seed %d, object #%d)", &spoke, new(H), &spoke, cfg.seed, i)) {
			return
		}
		var hub H
		filler.Fill(&hub)
		if !checkRoundTrip(t, &hub, from, to, fmt.Sprintf("%T → %T → %T (seed %d, object #%d)", &hub, new(S), &hub, cfg.seed, i)) {
			return
		}
	}
}

// checkRoundTrip converts obj with there and back, and reports a
// difference; it returns false if the test failed.
func checkRoundTrip(t testing.TB, obj any, there, back kopf.ConversionFn, what string) bool {
	t.Helper()
	orig, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatalf("%s: encoding the fuzzed object: %v", what, err)
	}
	ctx := context.Background()
	mid, err := guarded(ctx, there, runtime.DeepCopyJSON(orig))
	if err == nil {
		var got map[string]any
		if got, err = guarded(ctx, back, mid); err == nil {
			if d := diffs.Compute(orig, got); len(d) > 0 || !reflect.DeepEqual(orig, got) {
				t.Errorf("%s: the object comes back different: %s\nthe object: %v\nthe other version: %v", what, d, orig, mid)
				return false
			}
			return true
		}
	}
	t.Errorf("%s: %v\nthe object: %v", what, err, orig)
	return false
}

// guarded calls a conversion; a panic is its error.
func guarded(ctx context.Context, fn kopf.ConversionFn, obj map[string]any) (out map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the conversion panicked: %v", p)
		}
	}()
	return fn(ctx, obj)
}

// defaultFillFuncs fill what a conversion does not own (metadata and
// types: the runtime's) and what randfill cannot fill (values of type
// any).
func defaultFillFuncs() []any {
	return []any{
		func(m *metav1.TypeMeta, _ randfill.Continue) { *m = metav1.TypeMeta{} },
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			*m = metav1.ObjectMeta{Name: "obj" + fmt.Sprint(c.Intn(1000)), Namespace: "ns", UID: "uid-1", Generation: c.Int63n(10) + 1}
			if c.Bool() {
				m.Labels = map[string]string{"label": fmt.Sprint(c.Intn(1000))}
			}
			if c.Bool() {
				m.Annotations = map[string]string{"example.com/note": c.String(10)}
			}
		},
		func(v *any, c randfill.Continue) {
			switch c.Intn(3) {
			case 0:
				*v = c.String(10)
			case 1:
				*v = c.Int63()
			default:
				*v = c.Bool()
			}
		},
	}
}
