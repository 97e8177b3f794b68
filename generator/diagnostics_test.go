package generator

import (
	"context"
	"errors"
	"fmt"
	"go/scanner"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// diag is an expected diagnostic: at is a text that occurs once in the
// file and starts where the diagnostic points.
type diag struct {
	at, msg string
}

// diagCase is one package of the diagnostics module.
type diagCase struct {
	name   string
	files  map[string]string // path in the package: content
	errors []diag            // in file, then position order
	warns  []diag
}

// where renders a diagnostic as Generate reports it, relative to the
// module: the position of the first byte of d.at in path.
func (d diag) where(t *testing.T, path, content string) string {
	t.Helper()
	if n := strings.Count(content, d.at); n != 1 {
		t.Fatalf("%s: %q occurs %d times; make the anchor unique", path, d.at, n)
	}
	i := strings.Index(content, d.at)
	line := strings.Count(content[:i], "\n") + 1
	col := i - strings.LastIndexByte(content[:i], '\n')
	return fmt.Sprintf("%s:%d:%d: %s", path, line, col, d.msg)
}

const notRead = "+kubebuilder:rbac here is not read: controller-gen and kopf-gen read it at package level only: in the package's doc comment or in a comment group of its own outside declarations (above a function's doc comment, with a blank line between them), not in a doc comment; or write //kopf:rbac in the doc comment of the handler"

const sameName = "; `kopf-gen markers` lists the markers this kopf-gen supports"

var diagCases = []diagCase{
	{
		name: "nearmiss",
		files: map[string]string{"p.go": header + `// F has markers that are not markers.
//
// kopf:on.create kopfexamples
//+kopf:on.create kopfexamples
//Kopf:on.craete kopfexamples
//kopf:on.create kopfexamples id=real
func F(ctx context.Context, kw FKwargs) error {
	// kopf : on.update kopfexamples
	return nil
}

// kopf: this is great, and Kopf's on.create handlers are too.
// //kopf:on.delete kopfexamples (disabled on purpose)
// The marker //kopf:on.create is quoted in prose.
/* kopf:on.create kopfexamples */
`},
		warns: []diag{
			{"// kopf:on.create kopfexamples\n", "not a marker: did you mean //kopf:on.create? markers have no space after //"},
			{"//+kopf:on.create", "not a marker: did you mean //kopf:on.create? markers have no '+' (that is kubebuilder's style)"},
			{"//Kopf:on.craete", "not a marker: did you mean //kopf:on.create? markers are lower case"},
			{"// kopf : on.update", "not a marker: did you mean //kopf:on.update? markers have no space after //; markers have no space around the colon"},
		},
	},
	{
		name: "rbac",
		files: map[string]string{
			"doc.go": "// Package p makes calls of its own.\n//\n//kopf:rbac groups=[\"\"] resources=[pods] verbs=[lisst]\n//kopf:on.create kopfexamples\npackage p\n",
			"p.go": header + `// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get,list
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list
// +kubebuilder:rbca:groups=apps,resources=deployments,verbs=get
// kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get
// +kubebuilder:rbac:resources=pods,verbs=get
// +kubebuilder:scaffold:imports

// H makes calls of its own.
//
//kopf:on.create kopfexamples
//kopf:rbac groups=[apps] resources=[Deployment] verbs=[get]
//kopf:rbac urls=[/metrics] verbs=[get] namespace=ops
func H(ctx context.Context, kw HKwargs) error {
	// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get
	return nil
}

// Helper is no handler: its rules are enough.
//
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get
//kopf:rbac groups=[batch] resources=[jobs] verbs=[create]
func Helper() {}

// T is a type.
//
//kopf:rbac groups=[apps] resources=[x] verbs=[get]
type T struct{}

//kopf:rbac groups=[apps] resources=[y] verbs=[get]
var V = 1

//kopf:rbac groups=[apps] resources=[z] verbs=[gett]

// M is a method.
//
//kopf:rbac groups=[apps] resources=[m] verbs=[get]
func (T) M() {}
`},
		errors: []diag{
			{"//kopf:rbac groups=[\"\"]", "//kopf:rbac: verbs: lisst is not a Kubernetes verb; did you mean list?"},
			{"//kopf:on.create kopfexamples\npackage", "//kopf:on.create applies to func declarations, not the package clause"},
			{"// +kubebuilder:rbac:resources=pods", "+kubebuilder:rbac: missing groups=: resources need their API groups (\"\" or core for the core group: pods, secrets, configmaps)"},
			{"//kopf:rbac groups=[apps] resources=[Deployment]", "//kopf:rbac: resources: Deployment looks like a kind: RBAC names resources by their plural in lower case"},
			{"//kopf:rbac urls=[/metrics]", "//kopf:rbac: urls= cannot go with namespace=: non-resource URLs are cluster-wide, and a namespaced Role cannot grant them"},
			{"//kopf:rbac groups=[apps] resources=[x]", "//kopf:rbac applies to func, package declarations, not types"},
			{"//kopf:rbac groups=[apps] resources=[y]", "//kopf:rbac cannot be attached to a var declaration; it applies to: func, package"},
			{"//kopf:rbac groups=[apps] resources=[z]", "misplaced marker //kopf:rbac groups=[apps] resources=[z] verbs=[gett]: //kopf:rbac goes in the doc comment of a package-level function (the handler that makes the calls) or of the package clause, directly above it with no blank line"},
			{"//kopf:rbac groups=[apps] resources=[m]", "//kopf:rbac applies to package-level functions and the package clause, not methods: M is a method"},
		},
		warns: []diag{
			// The end of the line, where controller-tools' scanner stops.
			{"\n// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list", `cannot parse +kubebuilder:rbac: expected equals, got ""; kopf-gen skips the marker (controller-gen would fail)`},
			{"// +kubebuilder:rbca", "kopf-gen does not read +kubebuilder:rbca:groups: no generator that kopf-gen runs (controller-tools' CRD, object and RBAC generators) defines it; did you mean +kubebuilder:rbac?"},
			{"// kubebuilder:rbac", "not a marker: did you mean //+kubebuilder:rbac:groups...? controller-gen's markers start with '+'"},
			{"// +kubebuilder:rbac:groups=apps,resources=daemonsets", notRead},
			{"// +kubebuilder:rbac:groups=batch", notRead},
		},
	},
	{
		name: "planned",
		files: map[string]string{"p.go": header + `//kopf:subhandler
func H(ctx context.Context, kw HKwargs) error { return nil }
`},
		errors: []diag{
			{"subhandler", "//kopf:subhandler is not a marker (Kopf's @kopf.subhandler): call kopf.Subhandler(ctx, handler) inside a changing handler to register sub-handlers at run time"},
		},
	},
	{
		name: "admission",
		files: map[string]string{"p.go": header + `//kopf:on.validate kopfexamples
func Result(ctx context.Context, kw ResultKwargs) (any, error) { return nil, nil }

//kopf:on.mutate kopfexamples
func Pointer(ctx context.Context, kw *PointerKwargs) error { return nil }

//kopf:on.mutate kopfexamples operations=[CREATE, DELETE, UPDATE] id=m1
//kopf:on.mutate kopfexamples operations=[DELETE] id=m2
//kopf:on.validate kopfexamples subresource=status/x id=v1
//kopf:on.validate kopfexamples subresource=Status id=v2
//kopf:on.validate kopfexamples operations=[CREAT] id=v3
//kopf:on.validate kopfexamples value=x id=v4
func Options(ctx context.Context, kw OptionsKwargs) error { return nil }

//kopf:on.validate kopfexamples id=same
//kopf:on.validate pods id=same
func Same(ctx context.Context, kw SameKwargs) error { return nil }

//kopf:on.validate kopfexamples id=same field=spec
func Other(ctx context.Context, kw OtherKwargs) error { return nil }

//kopf:on.mutate widgets id=same
func Third(ctx context.Context, kw ThirdKwargs) error { return nil }

//kopf:on.validate kopfexamples
//kopf:on.event kopfexamples
func Mixed(ctx context.Context, kw MixedKwargs) error { return nil }

//kopf:on.validate kopfexamples when=isOK id=w
func When(ctx context.Context, kw WhenKwargs) error { return nil }

func isOK(kw *WhenKwargs) bool { return true }
`},
		errors: []diag{
			{"(any, error)", "handler Result has the wrong signature: it returns (any, error); want func Result(ctx context.Context, kw ResultKwargs) error (admission handlers return no result: an error refuses the request)"},
			{"*PointerKwargs", "handler Pointer has the wrong signature: the second parameter is *PointerKwargs, not PointerKwargs; want func Pointer(ctx context.Context, kw PointerKwargs) error (admission handlers return no result: an error refuses the request)"},
			{"DELETE, UPDATE]", "//kopf:on.mutate is called for DELETE only when DELETE is its only operation (as in Kopf): here DELETE would never be mutated; use a marker of its own with operations=[DELETE]"},
			{"status/x", "subresource=status/x is not a subresource: want its name (status, scale, ...) or * for the object and every subresource"},
			{"Status id=v2", "subresource=Status is not a subresource: want its name (status, scale, ...) or * for the object and every subresource"},
			{"CREAT]", `operations: unknown item "CREAT"; did you mean CREATE?`},
			{"value=x id=v4", "value= needs field=: it checks the value at that field"},
			{"//kopf:on.validate pods id=same", `handler id "same" is already used by the //kopf:on.validate handler of kopfexamples (this function) at line 19: the id is the webhook's path, unique among the admission handlers; set a distinct id=`},
			{"//kopf:on.mutate widgets id=same", `handler id "same" is already used by the //kopf:on.validate handler of kopfexamples (Same) at line 19: the id is the webhook's path, unique among the admission handlers; set a distinct id=`},
			{"//kopf:on.event kopfexamples\nfunc Mixed", "//kopf:on.event cannot share a function with admission-handler markers: each kind of handler takes kwargs of its own; use a separate function"},
			{"isOK id=w", "when: isOK takes kw by pointer; callbacks take kwargs by value, as handlers: func(kw WhenKwargs) bool"},
		},
	},
	{
		name: "indices",
		files: map[string]string{"p.go": header + `type M map[string]int

//kopf:index kopfexamples
func NoResult(ctx context.Context, kw NoResultKwargs) error { return nil }

//kopf:index kopfexamples
func Defined(ctx context.Context, kw DefinedKwargs) M { return nil }

//kopf:index kopfexamples
func Unnamed(ctx context.Context, kw UnnamedKwargs) map[struct{ A string }]int { return nil }

//kopf:index kopfexamples
func Params(ctx context.Context) map[string]int { return nil }

//kopf:index kopfexamples
func Name(ctx context.Context, kw NameKwargs) map[string]int { return nil }

//kopf:index kopfexamples id=a
//kopf:index pods id=b
func Twice(ctx context.Context, kw TwiceKwargs) (int, bool) { return 0, false }

//kopf:index kopfexamples
//kopf:on.create kopfexamples
func Mixed(ctx context.Context, kw MixedKwargs) map[string]int { return nil }
`},
		errors: []diag{
			{"error { return nil }", "index function NoResult has the wrong signature: it returns error; want func NoResult(ctx context.Context, kw NoResultKwargs) map[K]V, (map[K]V, error), or V or (V, bool) for a single value"},
			{"M { return nil }", "index function Defined has the wrong signature: it returns M, a defined map type; return a map[K]V; want func Defined(ctx context.Context, kw DefinedKwargs) map[K]V, (map[K]V, error), or V or (V, bool) for a single value"},
			{"map[struct{ A string }]int", "index function Unnamed: the index's key type struct{A string} cannot be spelt by generated code: kopf-gen does not render unnamed struct types; use a named type"},
			{"(ctx context.Context) map", "index function Params has the wrong signature: it has 1 parameter; want func Params(ctx context.Context, kw ParamsKwargs) map[K]V, (map[K]V, error), or V or (V, bool) for a single value"},
			{"Name(ctx", "index function Name would hide kw.Name of the handlers' kwargs, where the index is kw.Name; rename the function"},
			{"//kopf:index pods id=b", "//kopf:index is repeated on Twice (first at line 22): an index is filled from one resource; use one function per index"},
			{"//kopf:on.create kopfexamples\nfunc Mixed", "//kopf:on.create cannot share a function with //kopf:index markers: each kind of handler takes kwargs of its own; use a separate function"},
		},
	},
	{
		name: "resources",
		files: map[string]string{
			"p.go": typedHeader + `//kopf:resource kopf.dev/v1/kopfexamples
type KopfExample struct {
	Spec struct{} ` + "`json:\"spec\"`" + `
}

//kopf:on.create kopfexmaples id=a
//kopf:on.create kopf.dev/v1/kopfexampels id=b
//kopf:on.create kopfexamles.v1.kopf.dev id=c
//kopf:on.create deploymnets id=d
//kopf:on.create v1/pdos id=e
//kopf:on.create Deploymnet id=f
//kopf:on.create apps/v1/statefullsets id=g
//kopf:on.create kopfexmaples.other.dev id=ok1
//kopf:on.create kopf.dev/v2/kopfexamples id=ok2
//kopf:on.create widgets id=ok3
//kopf:on.create roles id=ok4
//kopf:on.create events id=ok5
//kopf:on.create ingresses id=ok6
//kopf:on.create notes.example.com id=ok7
//kopf:on.create * id=ok8
//kopf:on.create po id=ok9
//kopf:on.create kopfexample id=ok10
//kopf:on.create gadgets id=ok11
func Create(ctx context.Context, kw CreateKwargs) error { return nil }

var _ metav1.Time
`,
			// A typed resource of a direct import counts too.
			"api/api.go": "package api\n\n//kopf:resource gadgets.dev/v1/gizmos\ntype Gizmo struct{}\n",
			"q/q.go": header + `import _ "example.com/m/resources/api"

//kopf:on.create gizmso
func G(ctx context.Context, kw GKwargs) error { return nil }
`,
		},
		errors: []diag{
			{"kopfexmaples id=a", "resource: kopfexmaples is not a resource that kopf-gen knows; did you mean kopfexamples? (for a resource that kopf-gen does not know, give its group: kopfexmaples.GROUP)"},
			{"kopfexampels id=b", "resource: kopfexampels is not a resource that kopf-gen knows; did you mean kopf.dev/v1/kopfexamples?"},
			{"kopfexamles.v1", "resource: kopfexamles is not a resource that kopf-gen knows; did you mean kopfexamples.v1.kopf.dev?"},
			{"deploymnets", "resource: deploymnets is not a resource that kopf-gen knows; did you mean deployments? (for a resource that kopf-gen does not know, give its group: deploymnets.GROUP)"},
			{"pdos", "resource: pdos is not a resource that kopf-gen knows; did you mean v1/pods?"},
			{"Deploymnet", "resource: Deploymnet is not a resource that kopf-gen knows; did you mean Deployment? (for a resource that kopf-gen does not know, give its group: Deploymnet.GROUP)"},
			{"statefullsets", "resource: statefullsets is not a resource that kopf-gen knows; did you mean apps/v1/statefulsets?"},
			{"gizmso", "resource: gizmso is not a resource that kopf-gen knows; did you mean gizmos? (for a resource that kopf-gen does not know, give its group: gizmso.GROUP)"},
		},
	},
	{
		name: "callbacks",
		files: map[string]string{"p.go": header + `//kopf:on.create ex when=isReddy
//kopf:on.create ex labels={a: fn:isOwnr} id=b
//kopf:on.create ex field=spec.a value=fn:isBigg id=c
func F(ctx context.Context, kw FKwargs) error { return nil }

//kopf:on.event ex when=fn:isReday
func E(ctx context.Context, kw EKwargs) error { return nil }

func isReady(kw FKwargs) bool { return true }

func isOwner(value string) bool { return true }

func isBig(value any) bool { return true }
`},
		errors: []diag{
			{"isReddy", "when: no function isReddy in package p; did you mean isReady?"},
			{"fn:isOwnr", `labels["a"]: no function isOwnr in package p; did you mean isOwner?`},
			{"fn:isBigg", "value: no function isBigg in package p; did you mean isBig?"},
			{"fn:isReday", "when: no function isReday in package p; did you mean isReady?"},
		},
	},
	{
		name: "fieldoldnew",
		files: map[string]string{"p.go": typedHeader + `//kopf:resource kopf.dev/v1/kopfexamples
type KopfExample struct {
	metav1.ObjectMeta ` + "`json:\"metadata\"`" + `
	Spec map[string]any ` + "`json:\"spec\"`" + `
}

//kopf:on.field kopfexamples field=spec.size
func Size(ctx context.Context, kw SizeKwargs) error {
	if kw.Old != nil {
		return nil
	}
	return check(kw.New)
}

// Both reads the field's values too: it tells them apart.
//
//kopf:on.field kopfexamples field=spec.both
func Both(ctx context.Context, kw BothKwargs) error {
	_ = kw.Changing.New
	return check(kw.Old)
}

//kopf:on.update kopfexamples field=spec.mode
func Mode(ctx context.Context, kw ModeKwargs) error {
	_ = func(kw struct{ Old any }) any { return kw.Old }
	_ = kw.Old
	return nil
}

// Whole objects are meant: no field= here.
//
//kopf:on.update kopfexamples
func Whole(ctx context.Context, kw WholeKwargs) error {
	_ = kw.Old
	return nil
}

func check(*KopfExample) error { return nil }
`},
		warns: []diag{
			{"kw.Old != nil", "kw.Old in field handler Size is the whole old object decoded as *KopfExample, not the value of spec.size as Kopf's old is: use kw.Changing.Old for the field's value"},
			{"kw.New)", "kw.New in field handler Size is the whole new object decoded as *KopfExample, not the value of spec.size as Kopf's new is: use kw.Changing.New for the field's value"},
			{"kw.Old\n\treturn nil\n}\n\n// Whole", "kw.Old in field handler Mode is the whole old object decoded as *KopfExample, not the value of spec.mode as Kopf's old is: use kw.Changing.Old for the field's value"},
		},
	},
	{
		name: "values",
		files: map[string]string{"p.go": typedHeader + `//kopf:resource kopf.dev/v1/kopfexamples
type KopfExample struct {
	metav1.ObjectMeta ` + "`json:\"metadata\"`" + `
	Spec Spec ` + "`json:\"spec\"`" + `
}

type Phase string

type Spec struct {
	Replicas int32       ` + "`json:\"replicas\"`" + `
	Name     string      ` + "`json:\"name\"`" + `
	Enabled  bool        ` + "`json:\"enabled\"`" + `
	Ratio    float64     ` + "`json:\"ratio\"`" + `
	Items    []string    ` + "`json:\"items\"`" + `
	Phase    Phase       ` + "`json:\"phase\"`" + `
	Since    metav1.Time ` + "`json:\"since\"`" + `
	Max      *int64      ` + "`json:\"max\"`" + `
	Data     []byte      ` + "`json:\"data\"`" + `
	Any      any         ` + "`json:\"any\"`" + `
}

//kopf:on.update kopfexamples field=spec.replicas value=abc id=v1
//kopf:on.update kopfexamples field=spec.replicas value=1.5 id=v2
//kopf:on.update kopfexamples field=spec.replicas value="3" id=v3
//kopf:on.update kopfexamples field=spec.name value=3 id=v4
//kopf:on.update kopfexamples field=spec.name value=true id=v5
//kopf:on.update kopfexamples field=spec.enabled value=yes id=v6
//kopf:on.update kopfexamples field=spec.ratio value=x id=v7
//kopf:on.update kopfexamples field=spec.items value=x id=v8
//kopf:on.update kopfexamples field=spec value=1 id=v9
//kopf:on.update kopfexamples field=spec.phase value=1 id=v10
//kopf:on.update kopfexamples field=spec.max value=many id=v11
//kopf:on.update kopfexamples field=metadata.labels.app value=1 id=v12
//kopf:on.update kopfexamples field=spec.replicas old=abc new=2 id=v13
//kopf:on.update v1/pods field=spec.nodeName value=3 id=v14
//kopf:on.update kopfexamples field=spec.data value=3 id=v15
//kopf:on.update kopfexamples field=spec.replicas value=3 id=ok1
//kopf:on.update kopfexamples field=spec.replicas value=1e3 id=ok2
//kopf:on.update kopfexamples field=spec.replicas old=ABSENT new=fn:isAny id=ok3
//kopf:on.update kopfexamples field=spec.name value="3" id=ok4
//kopf:on.update kopfexamples field=spec.enabled value=false id=ok5
//kopf:on.update kopfexamples field=spec.ratio value=2 id=ok6
//kopf:on.update kopfexamples field=spec.phase value=Running id=ok7
//kopf:on.update kopfexamples field=spec.since value=2020 id=ok8
//kopf:on.update kopfexamples field=spec.any value=2020 id=ok9
//kopf:on.update kopfexamples field=metadata.labels.app value=web id=ok10
//kopf:on.update v1/pods field=spec.priority value=1 id=ok11
//kopf:on.update widgets field=spec.replicas value=abc id=ok12
func Update(ctx context.Context, kw UpdateKwargs) error { return nil }

func isAny(value any) bool { return true }
`},
		errors: []diag{
			{"abc id=v1", `value: want an integer for spec.replicas of KopfExample (int32), got the string "abc"`},
			{"1.5 id=v2", "value: want an integer for spec.replicas of KopfExample (int32), got the number 1.5"},
			{`"3" id=v3`, `value: want an integer for spec.replicas of KopfExample (int32), got the string "3"`},
			{"3 id=v4", `value: want a string for spec.name of KopfExample (string), got the number 3; quote it ("3") for the string`},
			{"true id=v5", `value: want a string for spec.name of KopfExample (string), got the boolean true; quote it ("true") for the string`},
			{"yes id=v6", `value: want a boolean for spec.enabled of KopfExample (bool), got the string "yes"`},
			{"x id=v7", `value: want a number for spec.ratio of KopfExample (float64), got the string "x"`},
			{"x id=v8", `value: spec.items of KopfExample ([]string) is a list, which never equals the string "x"; use PRESENT, ABSENT or fn:NAME`},
			{"1 id=v9", "value: spec of KopfExample (Spec) is an object, which never equals the number 1; use PRESENT, ABSENT or fn:NAME"},
			{"1 id=v10", `value: want a string for spec.phase of KopfExample (Phase), got the number 1; quote it ("1") for the string`},
			{"many id=v11", `value: want an integer for spec.max of KopfExample (int64), got the string "many"`},
			{"1 id=v12", `value: want a string for metadata.labels.app of KopfExample (string), got the number 1; quote it ("1") for the string`},
			{"abc new=2", `old: want an integer for spec.replicas of KopfExample (int32), got the string "abc"`},
			{"3 id=v14", `value: want a string for spec.nodeName of corev1.Pod (string), got the number 3; quote it ("3") for the string`},
			{"3 id=v15", `value: want a string for spec.data of KopfExample ([]byte), got the number 3; quote it ("3") for the string`},
		},
	},
}

// TestDiagnostics checks the diagnostics that point at likely mistakes
// (near-miss markers, planned markers, typos of resources and callbacks,
// values of the wrong type), each with its exact position, over one module
// whose packages are the cases.
func TestDiagnostics(t *testing.T) {
	files := map[string]string{}
	for _, c := range diagCases {
		for name, content := range c.files {
			files[c.name+"/"+name] = content
		}
	}
	dir := module(t, files)
	// Typed packages import apimachinery, which the module does not require yet.
	t.Setenv("GOFLAGS", "-mod=mod "+os.Getenv("GOFLAGS"))
	_, warnings, err := Generate(context.Background(), Options{Dir: dir})
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Generate: %v, want a scanner.ErrorList", err)
	}
	byCase := func(l scanner.ErrorList) map[string][]string {
		out := map[string][]string{}
		for _, e := range l {
			rel := strings.TrimPrefix(e.Error(), dir+string(filepath.Separator))
			c, _, _ := strings.Cut(rel, "/")
			out[c] = append(out[c], rel)
		}
		return out
	}
	gotErrs, gotWarns := byCase(list), byCase(warnings)
	for _, c := range diagCases {
		t.Run(c.name, func(t *testing.T) {
			render := func(ds []diag) []string {
				var out []string
				for _, d := range ds {
					found := false
					for name, content := range c.files {
						if strings.Contains(content, d.at) {
							out = append(out, d.where(t, c.name+"/"+name, content))
							found = true
							break
						}
					}
					if !found {
						t.Fatalf("%q is in no file of the case", d.at)
					}
				}
				return out
			}
			if want := render(c.errors); !reflect.DeepEqual(gotErrs[c.name], want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(gotErrs[c.name], "\n"), strings.Join(want, "\n"))
			}
			if want := render(c.warns); !reflect.DeepEqual(gotWarns[c.name], want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(gotWarns[c.name], "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestWarningsDoNotFail checks that a package with warnings only is
// generated as if they were not there.
func TestWarningsDoNotFail(t *testing.T) {
	src := header + "// kopf:on.create kopfexamples\n//kopf:on.create kopfexamples\nfunc F(ctx context.Context, kw FKwargs) error { return nil }\n"
	dir := module(t, map[string]string{"p/p.go": src})
	files, warnings, err := Generate(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(files) != 1 || files[0].Want == nil || !strings.Contains(string(files[0].Want), `"f"`) {
		t.Fatalf("files = %+v, want p/zz_generated.kopf.go registering F", files)
	}
	want := filepath.Join(dir, "p", "p.go") + ":5:1: not a marker: did you mean //kopf:on.create? markers have no space after //"
	if len(warnings) != 1 || warnings[0].Error() != want {
		t.Errorf("warnings = %v, want %q", warnings, want)
	}
	again, _, err := Generate(context.Background(), Options{Dir: module(t, map[string]string{"p/p.go": strings.Replace(src, "// kopf:on.create kopfexamples\n", "// F is a handler.\n", 1)})})
	if err != nil || len(again) != 1 || string(again[0].Want) != string(files[0].Want) {
		t.Errorf("without the near miss: %v; the generated file differs: %v", err, len(again) == 1 && string(again[0].Want) != string(files[0].Want))
	}
}
