package markers

import (
	"bytes"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/resources"
)

// testTable is Kopf's table plus a marker with one argument of every type
// that Kopf's markers do not use yet.
func testTable(t testing.TB) *Table {
	t.Helper()
	defs := append(kopfDefinitions(), Definition{
		Name:    "test.values",
		Targets: TargetFunc | TargetType,
		Summary: "a marker for tests",
		Args: []Arg{
			{Name: "ratio", Type: TypeFloat, Positive: true, Doc: "a float"},
			{Name: "labels", Type: TypeStringMap, Doc: "a map"},
			{Name: "ops", Type: TypeStringList, Doc: "a list"},
			{Name: "word", Type: TypeString, Doc: "a string"},
		},
	})
	tbl, err := NewTable(defs...)
	if err == nil {
		tbl, err = tbl.WithPlanned(kopfPlanned()...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// testPos is where test markers pretend to be: line 10, starting at
// column 1 of a file.
var testPos = token.Position{Filename: "h.go", Offset: 200, Line: 10, Column: 1}

func TestParseValid(t *testing.T) {
	tbl := testTable(t)
	sel := func(g, v, n string) resources.Selector { return resources.Selector{Group: g, Version: v, Name: n} }
	core := func(v, n string) resources.Selector { return resources.Selector{Version: v, Name: n, Core: true} }
	eq := func(v any) Match { return Match{Kind: MatchEqual, Value: v} }
	present, absent := Match{Kind: MatchPresent}, Match{Kind: MatchAbsent}
	fn := func(name string) Match { return Match{Kind: MatchCallback, Func: name} }
	type args = map[string]any
	tests := []struct {
		text string
		name string
		pos  []any
		args args
	}{
		// Resource selectors, every form.
		{"//kopf:on.create kopfexamples", OnCreate, []any{sel("", "", "kopfexamples")}, nil},
		{"//kopf:on.create KopfExample", OnCreate, []any{sel("", "", "KopfExample")}, nil},
		{"//kopf:on.create kopfexamples.kopf.dev", OnCreate, []any{sel("kopf.dev", "", "kopfexamples")}, nil},
		{"//kopf:on.create kopfexamples.v1.kopf.dev", OnCreate, []any{sel("kopf.dev", "v1", "kopfexamples")}, nil},
		{"//kopf:on.create kopfexamples.v1beta2.kopf.dev", OnCreate, []any{sel("kopf.dev", "v1beta2", "kopfexamples")}, nil},
		{"//kopf:on.create kopf.dev/v1/kopfexamples", OnCreate, []any{sel("kopf.dev", "v1", "kopfexamples")}, nil},
		{"//kopf:on.create kopf.dev/kopfexamples", OnCreate, []any{sel("kopf.dev", "", "kopfexamples")}, nil},
		{"//kopf:on.create v1/pods", OnCreate, []any{core("v1", "pods")}, nil},
		{"//kopf:on.create pods.v1", OnCreate, []any{core("v1", "pods")}, nil},
		{"//kopf:on.event v1/*", OnEvent, []any{core("v1", "*")}, nil},
		{"//kopf:on.event *", OnEvent, []any{sel("", "", "*")}, nil},
		{"//kopf:on.event EVERYTHING", OnEvent, []any{sel("", "", "*")}, nil},
		{"//kopf:on.event kopf.dev/*", OnEvent, []any{sel("kopf.dev", "", "*")}, nil},
		{"//kopf:on.event kopf.dev/v1/EVERYTHING", OnEvent, []any{sel("kopf.dev", "v1", "*")}, nil},
		{"//kopf:on.create apps/v1/deployments", OnCreate, []any{sel("apps", "v1", "deployments")}, nil},
		{"//kopf:on.create vault.example.com/v2alpha1/secret-stores", OnCreate, []any{sel("vault.example.com", "v2alpha1", "secret-stores")}, nil},
		{`//kopf:on.create "kopf.dev/v1/kopfexamples"`, OnCreate, []any{sel("kopf.dev", "v1", "kopfexamples")}, nil},

		// Every marker and every argument.
		{"//kopf:on.update kopfexamples", OnUpdate, []any{sel("", "", "kopfexamples")}, nil},
		{"//kopf:on.resume kopfexamples deleted=true", OnResume, []any{sel("", "", "kopfexamples")}, args{"deleted": true}},
		{"//kopf:on.resume kopfexamples deleted=false", OnResume, []any{sel("", "", "kopfexamples")}, args{"deleted": false}},
		{"//kopf:on.delete kopfexamples optional=true", OnDelete, []any{sel("", "", "kopfexamples")}, args{"optional": true}},
		{"//kopf:on.create ex id=create-fn", OnCreate, []any{sel("", "", "ex")}, args{"id": "create-fn"}},
		{`//kopf:on.create ex id="two words"`, OnCreate, []any{sel("", "", "ex")}, args{"id": "two words"}},
		{"//kopf:on.create ex id=`C:\\raw`", OnCreate, []any{sel("", "", "ex")}, args{"id": `C:\raw`}},
		{`//kopf:on.create ex id="tab\there"`, OnCreate, []any{sel("", "", "ex")}, args{"id": "tab\there"}},
		{"//kopf:on.create ex param=first", OnCreate, []any{sel("", "", "ex")}, args{"param": "first"}},
		{`//kopf:on.create ex param=""`, OnCreate, []any{sel("", "", "ex")}, args{"param": ""}},
		{"//kopf:on.create ex errors=ignored", OnCreate, []any{sel("", "", "ex")}, args{"errors": "ignored"}},
		{"//kopf:on.create ex errors=temporary", OnCreate, []any{sel("", "", "ex")}, args{"errors": "temporary"}},
		{"//kopf:on.create ex errors=permanent", OnCreate, []any{sel("", "", "ex")}, args{"errors": "permanent"}},
		{"//kopf:on.create ex timeout=1.5s", OnCreate, []any{sel("", "", "ex")}, args{"timeout": 1500 * time.Millisecond}},
		{"//kopf:on.create ex timeout=90", OnCreate, []any{sel("", "", "ex")}, args{"timeout": 90 * time.Second}},
		{"//kopf:on.create ex timeout=0.25", OnCreate, []any{sel("", "", "ex")}, args{"timeout": 250 * time.Millisecond}},
		{"//kopf:on.create ex timeout=1h30m", OnCreate, []any{sel("", "", "ex")}, args{"timeout": 90 * time.Minute}},
		{"//kopf:on.create ex retries=3", OnCreate, []any{sel("", "", "ex")}, args{"retries": 3}},
		{`//kopf:on.create ex retries="3"`, OnCreate, []any{sel("", "", "ex")}, args{"retries": 3}},
		{"//kopf:on.create ex backoff=2", OnCreate, []any{sel("", "", "ex")}, args{"backoff": 2 * time.Second}},
		{"//kopf:on.create ex backoff=300ms", OnCreate, []any{sel("", "", "ex")}, args{"backoff": 300 * time.Millisecond}},
		{
			"//kopf:on.create ex id=a param=b errors=permanent timeout=1m retries=5 backoff=10s",
			OnCreate, []any{sel("", "", "ex")},
			args{"id": "a", "param": "b", "errors": "permanent", "timeout": time.Minute, "retries": 5, "backoff": 10 * time.Second},
		},

		// Filters: labels and annotations (literals are strings, quoted ones
		// always literals), when=, field=, value=, old=, new=.
		{`//kopf:on.create ex labels={app: web, "example.com/tier": "front end", canary: ABSENT, env: PRESENT, owner: fn:isOwner, word: "PRESENT", n: 3, b: true, f: "fn:x"}`,
			OnCreate, []any{sel("", "", "ex")}, args{"labels": []KeyMatch{
				{"app", eq("web")}, {"example.com/tier", eq("front end")}, {"canary", absent}, {"env", present},
				{"owner", fn("isOwner")}, {"word", eq("PRESENT")}, {"n", eq("3")}, {"b", eq("true")}, {"f", eq("fn:x")},
			}}},
		{"//kopf:on.resume ex annotations={}", OnResume, []any{sel("", "", "ex")}, args{"annotations": []KeyMatch{}}},
		{"//kopf:on.delete ex when=isReady", OnDelete, []any{sel("", "", "ex")}, args{"when": "isReady"}},
		{"//kopf:on.delete ex when=fn:isReady", OnDelete, []any{sel("", "", "ex")}, args{"when": "isReady"}},
		{`//kopf:on.delete ex when="isReady"`, OnDelete, []any{sel("", "", "ex")}, args{"when": "isReady"}},
		{"//kopf:on.create ex field=spec.a.b", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec", "a", "b"}}},
		{`//kopf:on.create ex field="spec.a"`, OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec", "a"}}},
		{`//kopf:on.create ex field=[metadata, annotations, "kopf.dev/x"]`, OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"metadata", "annotations", "kopf.dev/x"}}},
		{"//kopf:on.create ex field=spec value=word", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": eq("word")}},
		{`//kopf:on.create ex field=spec value="two words"`, OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": eq("two words")}},
		{`//kopf:on.create ex field=spec value="3"`, OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": eq("3")}},
		{"//kopf:on.create ex field=spec value=3", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": eq(int64(3))}},
		{"//kopf:on.create ex field=spec value=-0", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": eq(int64(0))}},
		{"//kopf:on.create ex field=spec value=1.5e3", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": eq(1500.0)}},
		{"//kopf:on.create ex field=spec value=99999999999999999999", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": eq(1e20)}},
		{"//kopf:on.create ex field=spec value=0x10", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": eq("0x10")}},
		{"//kopf:on.create ex field=spec value=false", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": eq(false)}},
		{"//kopf:on.create ex field=spec value=PRESENT", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": present}},
		{"//kopf:on.create ex field=spec value=ABSENT", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": absent}},
		{`//kopf:on.create ex field=spec value="ABSENT"`, OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": eq("ABSENT")}},
		{"//kopf:on.create ex field=spec value=fn:check", OnCreate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "value": fn("check")}},
		{"//kopf:on.update ex field=spec old=ABSENT new=fn:ok", OnUpdate, []any{sel("", "", "ex")}, args{"field": []string{"spec"}, "old": absent, "new": fn("ok")}},
		{"//kopf:on.field ex field=spec.a old=1 new=2", OnField, []any{sel("", "", "ex")}, args{"field": []string{"spec", "a"}, "old": eq(int64(1)), "new": eq(int64(2))}},
		{"//kopf:on.event ex id=e param=p labels={a: b} annotations={c: ABSENT} when=w field=a value=1", OnEvent, []any{sel("", "", "ex")},
			args{"id": "e", "param": "p", "labels": []KeyMatch{{"a", eq("b")}}, "annotations": []KeyMatch{{"c", absent}}, "when": "w", "field": []string{"a"}, "value": eq(int64(1))}},
		{"//kopf:daemon ex id=d param=p errors=ignored timeout=1m retries=3 backoff=3 initial_delay=2s cancellation_backoff=1.0 cancellation_timeout=0.5 cancellation_polling=5s labels={a: b} annotations={c: PRESENT} when=w field=spec.field value=value",
			Daemon, []any{sel("", "", "ex")},
			args{"id": "d", "param": "p", "errors": "ignored", "timeout": time.Minute, "retries": 3, "backoff": 3 * time.Second,
				"initial_delay": 2 * time.Second, "cancellation_backoff": time.Second, "cancellation_timeout": 500 * time.Millisecond, "cancellation_polling": 5 * time.Second,
				"labels": []KeyMatch{{"a", eq("b")}}, "annotations": []KeyMatch{{"c", present}}, "when": "w", "field": []string{"spec", "field"}, "value": eq("value")}},
		{"//kopf:timer ex id=t param=p errors=permanent timeout=1m retries=3 backoff=3 interval=2 idle=5 sharp=true initial_delay=1.5s labels={a: ABSENT} when=w field=spec value=fn:v",
			Timer, []any{sel("", "", "ex")},
			args{"id": "t", "param": "p", "errors": "permanent", "timeout": time.Minute, "retries": 3, "backoff": 3 * time.Second,
				"interval": 2 * time.Second, "idle": 5 * time.Second, "sharp": true, "initial_delay": 1500 * time.Millisecond,
				"labels": []KeyMatch{{"a", absent}}, "when": "w", "field": []string{"spec"}, "value": fn("v")}},
		{"//kopf:daemon ex initial_delay=fn:delayOf", Daemon, []any{sel("", "", "ex")}, args{"initial_delay": Func("delayOf")}},
		{"//kopf:timer ex initial_delay=fn:delayOf", Timer, []any{sel("", "", "ex")}, args{"initial_delay": Func("delayOf")}},
		{"//kopf:resource kopf.dev/v1/kopfexamples", Resource, []any{sel("kopf.dev", "v1", "kopfexamples")}, nil},

		// Layout: order, tabs, trailing space.
		{"//kopf:on.create id=x ex", OnCreate, []any{sel("", "", "ex")}, args{"id": "x"}},
		{"//kopf:on.create\tex\t\tid=x  ", OnCreate, []any{sel("", "", "ex")}, args{"id": "x"}},

		// on.reconcile: resources one or listed, durations, finalize.
		{"//kopf:on.reconcile memcacheds owns=deployments.apps", OnReconcile, []any{sel("", "", "memcacheds")},
			args{"owns": []resources.Selector{sel("apps", "", "deployments")}}},
		{"//kopf:on.reconcile memcacheds owns=[deployments.apps, v1/services] finalize=true resync=90", OnReconcile, []any{sel("", "", "memcacheds")},
			args{"owns": []resources.Selector{sel("apps", "", "deployments"), core("v1", "services")}, "finalize": true, "resync": 90 * time.Second}},
		{"//kopf:on.reconcile memcacheds watches=v1/configmaps map=byConfig backoff=1.5s", OnReconcile, []any{sel("", "", "memcacheds")},
			args{"watches": []resources.Selector{core("v1", "configmaps")}, "map": "byConfig", "backoff": 1500 * time.Millisecond}},

		// The types that Kopf's markers do not use yet.
		{"//kopf:test.values ratio=0.5", "test.values", nil, args{"ratio": 0.5}},
		{"//kopf:test.values ratio=1e3", "test.values", nil, args{"ratio": 1000.0}},
		{`//kopf:test.values labels={app: web, "example.com/tier": "front end", url: http://x:80}`, "test.values", nil,
			args{"labels": map[string]string{"app": "web", "example.com/tier": "front end", "url": "http://x:80"}}},
		{"//kopf:test.values labels={}", "test.values", nil, args{"labels": map[string]string{}}},
		{"//kopf:test.values labels={ a : b , }", "test.values", nil, args{"labels": map[string]string{"a": "b"}}},
		{"//kopf:test.values ops=[CREATE, UPDATE]", "test.values", nil, args{"ops": []string{"CREATE", "UPDATE"}}},
		{`//kopf:test.values ops=[a,"b c",]`, "test.values", nil, args{"ops": []string{"a", "b c"}}},
		{"//kopf:test.values ops=[]", "test.values", nil, args{"ops": []string{}}},
		{"//kopf:test.values word=a=b", "test.values", nil, args{"word": "a=b"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			m, err := tbl.Parse(tt.text, testPos)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if m.Name != tt.name || m.Def == nil || m.Def.Name != tt.name {
				t.Errorf("name = %q, def %v; want %q", m.Name, m.Def, tt.name)
			}
			if m.Pos != testPos {
				t.Errorf("Pos = %v, want %v", m.Pos, testPos)
			}
			var pos []any
			for _, v := range m.Positional {
				pos = append(pos, v.Go)
			}
			if !reflect.DeepEqual(pos, tt.pos) {
				t.Errorf("positional = %#v, want %#v", pos, tt.pos)
			}
			got := map[string]any{}
			for _, a := range m.Args {
				got[a.Name] = a.Go
				if want := strings.Index(tt.text, " "+a.Name+"=") + 2; a.NamePos.Column != want && !strings.Contains(tt.text, "\t"+a.Name) {
					t.Errorf("%s at column %d, want %d", a.Name, a.NamePos.Column, want)
				}
			}
			if tt.args == nil {
				tt.args = args{}
			}
			if !reflect.DeepEqual(got, tt.args) {
				t.Errorf("args = %#v, want %#v", got, tt.args)
			}
			// The canonical rendering parses to the same values.
			again, err := tbl.Parse(m.String(), testPos)
			if err != nil {
				t.Fatalf("Parse(%q): %v", m.String(), err)
			}
			if !reflect.DeepEqual(values(again), values(m)) {
				t.Errorf("String() %q parses to %v, want %v", m.String(), values(again), values(m))
			}
		})
	}
}

func values(m *Marker) []any {
	var out []any
	for _, v := range m.Positional {
		out = append(out, v.Go)
	}
	for _, a := range m.Args {
		out = append(out, a.Name, a.Go)
	}
	return out
}

// An error expectation: the message, and where it points in the text (the
// first occurrence of at, or column col when at is empty).
type wantErr struct {
	at  string
	col int
	msg string
}

func TestParseErrors(t *testing.T) {
	tbl := testTable(t)
	const resourceHelp = "one positional argument, <resource> (the resource: plural, kind, plural.group, plural.version.group, group/version/plural, group/plural, v1/plural (core) or * (everything))"
	const knownArgs = "id, param, errors, timeout, retries, backoff, labels, annotations, when, field, value"
	tests := []struct {
		text string
		errs []wantErr
	}{
		// Marker names.
		{"//kopf:timer ex initial_delay=fn:a.b", []wantErr{{at: "fn:a.b", msg: `initial_delay: want the name of a function of the package after fn:, got "fn:a.b"`}}},
		{"//kopf:timer ex initial_delay=delayOf", []wantErr{{at: "delayOf", msg: `initial_delay: want a duration such as 90s, 1.5m, 1h30m or 90 (seconds), or a function fn:F, got "delayOf"; did you mean fn:delayOf?`}}},
		{"// kopf:on.create ex", []wantErr{{col: 1, msg: "not a marker: a marker comment starts with //kopf:"}}},
		{"//kopf:", []wantErr{{col: 8, msg: "missing marker name after //kopf: (no space is allowed after the colon)"}}},
		{"//kopf: on.create ex", []wantErr{{col: 8, msg: "missing marker name after //kopf:; did you mean //kopf:on.create? markers have no space after the colon"}}},
		{"//kopf: on.craete ex", []wantErr{{col: 8, msg: "missing marker name after //kopf:; did you mean //kopf:on.create? markers have no space after the colon"}}},
		{"//kopf: this is great", []wantErr{{col: 8, msg: "missing marker name after //kopf: (no space is allowed after the colon)"}}},
		{"//kopf:on.create ex\nid=x", []wantErr{{col: 20, msg: "a marker must fit on one line"}}},
		{"//kopf:on.craete ex", []wantErr{{col: 8, msg: "unknown marker //kopf:on.craete; did you mean //kopf:on.create?"}}},
		{"//kopf:frobnicate", []wantErr{{at: "frobnicate", msg: "unknown marker //kopf:frobnicate; known markers: on.resume, on.create, on.update, on.delete, on.field, on.event, daemon, timer, on.startup, on.cleanup, on.login, on.probe, on.validate, on.mutate, index, on.reconcile, rbac, resource, conversion, test.values"}}},

		// rbac: controller-gen's arguments, as lists.
		{"//kopf:rbac groups=[apps] resources=[deployments]", []wantErr{{col: 8, msg: "missing verbs=[a, ...]: //kopf:rbac requires it (the verbs: get, list, watch, create, update, patch, delete, deletecollection, ... or *)"}}},
		{"//kopf:rbac groups=apps resources=[deployments] verbs=[get]", []wantErr{{at: "apps", msg: "groups: want a list [item, ...], got apps"}}},
		{"//kopf:rbac groups=[apps] resources=[deployments] verbs=[]", []wantErr{{at: "[]", msg: "verbs: must not be empty; leave verbs= out instead"}}},
		{"//kopf:rbac groups=[apps] resources=[deployments] verbs=[get, get]", []wantErr{{at: "get]", msg: "verbs: get is listed twice"}}},
		{"//kopf:rbac groups=[apps] resources=[deployments] verbs=get;list", []wantErr{{at: "get;", msg: "verbs: want a list [item, ...], got get;list"}}},
		{"//kopf:rbac groups=[apps] resource_names=[x] verbs=[get]", []wantErr{{at: "resource_names", msg: "unknown argument resource_names of //kopf:rbac; did you mean resourceNames?"}}},
		{"//kopf:rbac groups=[apps] resources=[x] verbs=[get] namespace=\"\"", []wantErr{{at: "\"\"", msg: "namespace: must not be empty"}}},
		{"//kopf:rbac kopfexamples verbs=[get]", []wantErr{{at: "kopfexamples", msg: "unexpected positional argument kopfexamples: //kopf:rbac takes no positional arguments"}}},

		// on.reconcile's resources.
		{"//kopf:on.reconcile ex owns=[]", []wantErr{{at: "[]", msg: "owns: must not be empty; leave owns= out instead"}}},
		{"//kopf:on.reconcile ex owns=[pods, pods]", []wantErr{{at: "pods]", msg: "owns: pods is listed twice"}}},
		{"//kopf:on.reconcile ex owns=[a/b/c/d]", []wantErr{{at: "a/b/c/d", msg: `owns: invalid resource selector "a/b/c/d": want group/version/plural, group/plural or version/plural`}}},
		{"//kopf:on.reconcile ex watches={a: b}", []wantErr{{at: "{a: b}", msg: "watches: want a resource or a list [r1, r2], got a map"}}},
		{"//kopf:on.reconcile ex resync=0", []wantErr{{at: "0", msg: "resync: must be positive, got 0"}}},

		// Activities serve no resource.
		{"//kopf:on.startup kopfexamples", []wantErr{{at: "kopfexamples", msg: "unexpected positional argument kopfexamples: //kopf:on.startup takes no positional arguments"}}},
		{"//kopf:on.probe field=spec", []wantErr{{at: "field", msg: "unknown argument field of //kopf:on.probe; it is an argument of //kopf:on.resume, //kopf:on.create, //kopf:on.update, //kopf:on.delete, //kopf:on.field, //kopf:on.event, //kopf:daemon, //kopf:timer, //kopf:on.validate, //kopf:on.mutate, //kopf:index"}}},

		// Admission webhooks: operations= is a list of Kopf's operations.
		{"//kopf:on.validate ex operations=[CREATE, UPDTAE]", []wantErr{{at: "UPDTAE", msg: "operations: unknown item \"UPDTAE\"; did you mean UPDATE?"}}},
		{"//kopf:on.mutate ex operations=[create]", []wantErr{{at: "create]", msg: "operations: unknown item \"create\"; did you mean CREATE?"}}},
		{"//kopf:on.mutate ex operations=[PATCH]", []wantErr{{at: "PATCH", msg: "operations: unknown item \"PATCH\": want CREATE, UPDATE, DELETE, CONNECT"}}},
		{"//kopf:on.validate ex operations=[CREATE, CREATE]", []wantErr{{at: "CREATE]", msg: "operations: CREATE is listed twice"}}},
		{"//kopf:on.validate ex operations=[]", []wantErr{{at: "[]", msg: "operations: must not be empty; leave operations= out instead"}}},
		{"//kopf:on.validate ex operations=CREATE", []wantErr{{at: "CREATE", msg: "operations: want a list [item, ...], got CREATE"}}},
		{"//kopf:on.validate ex operation=CREATE", []wantErr{{at: "operation=", msg: "unknown argument operation of //kopf:on.validate; did you mean operations?"}}},
		{"//kopf:on.validate ex subresource=\"\"", []wantErr{{at: "\"\"", msg: "subresource: must not be empty"}}},
		{"//kopf:on.mutate ex retries=3", []wantErr{{at: "retries", msg: "unknown argument retries of //kopf:on.mutate; it is an argument of //kopf:on.resume, //kopf:on.create, //kopf:on.update, //kopf:on.delete, //kopf:on.field, //kopf:daemon, //kopf:timer, //kopf:on.startup, //kopf:on.cleanup, //kopf:on.login, //kopf:on.probe, //kopf:index"}}},
		{"//kopf:on.validate ex old=1", []wantErr{{at: "old", msg: "unknown argument old of //kopf:on.validate; it is an argument of //kopf:on.update, //kopf:on.field"}}},

		// Kopf's decorators that have no marker.
		{"//kopf:subhandler", []wantErr{{col: 8, msg: "//kopf:subhandler is not a marker (Kopf's @kopf.subhandler): call kopf.Subhandler(ctx, handler) inside a changing handler to register sub-handlers at run time"}}},
		{"//kopf:deamon ex", []wantErr{{col: 8, msg: "unknown marker //kopf:deamon; did you mean //kopf:daemon?"}}},
		{"//kopf:on.daemon ex", []wantErr{{col: 8, msg: "unknown marker //kopf:on.daemon; did you mean //kopf:daemon?"}}},
		{"//kopf:on.timer ex", []wantErr{{col: 8, msg: "unknown marker //kopf:on.timer; did you mean //kopf:timer?"}}},
		{"//kopf:create ex", []wantErr{{col: 8, msg: "unknown marker //kopf:create; did you mean //kopf:on.create?"}}},
		{"//kopf:on.index ex", []wantErr{{col: 8, msg: "unknown marker //kopf:on.index; did you mean //kopf:index?"}}},
		{"//kopf:on.valdiate ex", []wantErr{{col: 8, msg: "unknown marker //kopf:on.valdiate; did you mean //kopf:on.validate?"}}},
		{"//kopf:mutate ex", []wantErr{{col: 8, msg: "unknown marker //kopf:mutate; did you mean //kopf:on.mutate?"}}},
		{"//kopf:on.resmue ex", []wantErr{{col: 8, msg: "unknown marker //kopf:on.resmue; did you mean //kopf:on.resume?"}}},

		// Positional arguments.
		{"//kopf:on.create", []wantErr{{col: 8, msg: "missing <resource>: //kopf:on.create takes " + resourceHelp}}},
		{"//kopf:on.create id=x", []wantErr{{col: 8, msg: "missing <resource>: //kopf:on.create takes " + resourceHelp}}},
		{"//kopf:on.create ex extra", []wantErr{{at: "extra", msg: "unexpected positional argument extra: //kopf:on.create takes " + resourceHelp}}},
		{"//kopf:test.values x", []wantErr{{at: "x", msg: "unexpected positional argument x: //kopf:test.values takes no positional arguments"}}},

		// Argument names.
		{"//kopf:on.create ex tiemout=1s", []wantErr{{at: "tiemout", msg: "unknown argument tiemout of //kopf:on.create; did you mean timeout?"}}},
		{"//kopf:on.create ex zzzzzz=1", []wantErr{{at: "zzzzzz", msg: "unknown argument zzzzzz of //kopf:on.create; known arguments: " + knownArgs}}},
		{"//kopf:on.create ex optional=true", []wantErr{{at: "optional", msg: "unknown argument optional of //kopf:on.create; it is an argument of //kopf:on.delete"}}},
		{"//kopf:on.delete ex deleted=true", []wantErr{{at: "deleted", msg: "unknown argument deleted of //kopf:on.delete; it is an argument of //kopf:on.resume"}}},
		{"//kopf:on.create ex id=a id=b", []wantErr{{at: "id=b", msg: "duplicate argument id (first at column 21)"}}},

		// Value syntax.
		{"//kopf:on.create ex id=", []wantErr{{col: 24, msg: "missing value after id="}}},
		{"//kopf:on.create ex id= retries=1", []wantErr{{col: 24, msg: "missing value after id="}}},
		{`//kopf:on.create ex id="abc`, []wantErr{{at: `"`, msg: "unterminated quoted string"}}},
		{"//kopf:on.create ex id=`abc", []wantErr{{at: "`", msg: "unterminated quoted string"}}},
		{`//kopf:on.create ex id="\q"`, []wantErr{{at: `"`, msg: `invalid quoted string "\q": want a Go string literal`}}},
		{`//kopf:on.create ex id="a"b`, []wantErr{{at: `b`, msg: `unexpected 'b' after "a"; separate arguments with spaces`}}},
		{`//kopf:test.values labels={a: b`, []wantErr{{at: "{", msg: `unterminated map: missing '}'`}}},
		{`//kopf:test.values labels={a: b,`, []wantErr{{at: "{", msg: `unterminated map: missing '}'`}}},
		{`//kopf:test.values labels={a b}`, []wantErr{{at: "b}", msg: `missing ':' after map key a`}}},
		{`//kopf:test.values labels={: b}`, []wantErr{{at: ": b}", msg: `missing map key before ':'`}}},
		{`//kopf:test.values labels={a: }`, []wantErr{{at: "}", msg: `missing map value before '}'`}}},
		{`//kopf:test.values labels={a: b, a: c}`, []wantErr{{at: "a: c", msg: `duplicate map key a`}}},
		{`//kopf:test.values labels={[a]: b}`, []wantErr{{at: "[", msg: `a map key must be a string, not a list`}}},
		{`//kopf:test.values labels={a: b c}`, []wantErr{{at: "c}", msg: `unexpected 'c' in map: want ',' or '}'`}}},
		{`//kopf:test.values labels={a: "b}`, []wantErr{{at: `"`, msg: `unterminated quoted string`}}},
		{`//kopf:test.values ops=[a b]`, []wantErr{{at: "b]", msg: `unexpected 'b' in list: want ',' or ']'`}}},
		{`//kopf:test.values ops=[a,,b]`, []wantErr{{at: ",b", msg: `missing list item before ','`}}},
		{`//kopf:test.values ops=[a`, []wantErr{{at: "[", msg: `unterminated list: missing ']'`}}},
		{`//kopf:test.values ops=[a]x`, []wantErr{{at: "x", msg: `unexpected 'x' after [a]; separate arguments with spaces`}}},

		// Value types.
		{"//kopf:on.create ex id={a: b}", []wantErr{{at: "{", msg: "id: want a string, got a map"}}},
		{"//kopf:on.create ex id=[a]", []wantErr{{at: "[", msg: "id: want a string, got a list"}}},
		{`//kopf:on.create ex id=""`, []wantErr{{at: `""`, msg: "id: must not be empty"}}},
		{"//kopf:on.create ex errors=fatal", []wantErr{{at: "fatal", msg: `errors: want one of ignored, temporary, permanent, got "fatal"`}}},
		{"//kopf:on.create ex errors=IGNORED", []wantErr{{at: "IGNORED", msg: `errors: want one of ignored, temporary, permanent, got "IGNORED"; did you mean errors=ignored?`}}},
		{"//kopf:on.create ex errors=kopf.ErrorsMode.PERMANENT", []wantErr{{at: "kopf.", msg: `errors: want one of ignored, temporary, permanent, got "kopf.ErrorsMode.PERMANENT"; did you mean errors=permanent?`}}},
		{"//kopf:on.create ex errors=ErrorsMode.TEMPORARY", []wantErr{{at: "Errors", msg: `errors: want one of ignored, temporary, permanent, got "ErrorsMode.TEMPORARY"; did you mean errors=temporary?`}}},
		{"//kopf:on.create ex timeout=soon", []wantErr{{at: "soon", msg: `timeout: want a duration such as 90s, 1.5m, 1h30m or 90 (seconds), got "soon"`}}},
		{"//kopf:on.create ex timeout=-1", []wantErr{{at: "-1", msg: "timeout: must be positive, got -1"}}},
		{"//kopf:on.create ex timeout=0s", []wantErr{{at: "0s", msg: "timeout: must be positive, got 0s"}}},
		{"//kopf:on.create ex timeout=1e400", []wantErr{{at: "1e400", msg: `timeout: want a duration such as 90s, 1.5m, 1h30m or 90 (seconds), got "1e400"`}}},
		{"//kopf:on.create ex timeout=NaN", []wantErr{{at: "NaN", msg: `timeout: want a duration such as 90s, 1.5m, 1h30m or 90 (seconds), got "NaN"`}}},
		{"//kopf:on.create ex backoff=0", []wantErr{{at: "0", msg: "backoff: must be positive, got 0"}}},
		{"//kopf:on.create ex backoff={}", []wantErr{{at: "{", msg: "backoff: want a duration, got a map"}}},
		{"//kopf:on.create ex retries=many", []wantErr{{at: "many", msg: `retries: want an integer, got "many"`}}},
		{"//kopf:on.create ex retries=1.5", []wantErr{{at: "1.5", msg: `retries: want an integer, got "1.5"`}}},
		{"//kopf:on.create ex retries=0", []wantErr{{at: "0", msg: "retries: must be positive, got 0"}}},
		{"//kopf:on.create ex retries=99999999999999999999", []wantErr{{at: "999", msg: `retries: want an integer, got "99999999999999999999"`}}},
		{"//kopf:on.delete ex optional=yes", []wantErr{{at: "yes", msg: `optional: want true or false, got "yes"`}}},
		{"//kopf:on.resume ex deleted=1", []wantErr{{at: "1", msg: `deleted: want true or false, got "1"`}}},
		{"//kopf:test.values ratio=x", []wantErr{{at: "x", msg: `ratio: want a number, got "x"`}}},
		{"//kopf:test.values ratio=Inf", []wantErr{{at: "Inf", msg: `ratio: want a number, got "Inf"`}}},
		{"//kopf:test.values ratio=-0.5", []wantErr{{at: "-0.5", msg: `ratio: must be positive, got -0.5`}}},
		{"//kopf:test.values ratio=[1]", []wantErr{{at: "[", msg: `ratio: want a number, got a list`}}},
		{"//kopf:test.values labels=x", []wantErr{{at: "x", msg: `labels: want a map {key: value, ...}, got x`}}},
		{"//kopf:test.values labels={a: [b]}", []wantErr{{at: "[", msg: `labels: the value of a must be a string, not a list`}}},
		{"//kopf:test.values ops=x", []wantErr{{at: "x", msg: `ops: want a list [item, ...], got x`}}},
		{"//kopf:test.values ops=[{a: b}]", []wantErr{{at: "{", msg: `ops: list items must be strings, not a map`}}},

		// Resource selectors.
		{"//kopf:on.create a/b/c/d", []wantErr{{at: "a/", msg: `resource: invalid resource selector "a/b/c/d": want group/version/plural, group/plural or version/plural`}}},
		{"//kopf:on.create /pods", []wantErr{{at: " /pods", col: 1, msg: `resource: invalid resource selector "/pods": empty part between slashes`}}},
		{"//kopf:on.create pods.", []wantErr{{at: "pods", msg: `resource: invalid resource selector "pods.": empty group after the dot`}}},
		{"//kopf:on.create pods.v1.", []wantErr{{at: "pods", msg: `resource: invalid resource selector "pods.v1.": empty group after the version`}}},
		{"//kopf:on.create Kopf_Example", []wantErr{{at: "Kopf", msg: `resource: invalid resource selector "Kopf_Example": "Kopf_Example" is not a resource name (plural, singular, kind or short name)`}}},
		{"//kopf:on.create kopf.dev/V1/ex", []wantErr{{at: "kopf.dev/V1", msg: `resource: invalid resource selector "kopf.dev/V1/ex": "V1" is not an API version`}}},
		{"//kopf:on.create KOPF.dev/ex", []wantErr{{at: "KOPF", msg: `resource: invalid resource selector "KOPF.dev/ex": "KOPF.dev" is not an API group`}}},
		{`//kopf:on.create ""`, []wantErr{{at: `""`, msg: `resource: empty resource selector`}}},
		{"//kopf:on.create {a: b}", []wantErr{{at: "{", msg: `resource: want a resource selector, got a map`}}},

		{"//kopf:on.create *.kopf.dev", []wantErr{{at: "*", msg: `resource: invalid resource selector "*.kopf.dev": the everything selector is written *, group/* or group/version/*`}}},
		{"//kopf:on.create pods.*", []wantErr{{at: "pods", msg: `resource: invalid resource selector "pods.*": "*" is not an API group`}}},
		{"//kopf:on.create */pods", []wantErr{{at: "*", msg: `resource: invalid resource selector "*/pods": "*" is not an API group`}}},

		// Filters.
		{"//kopf:on.field ex", []wantErr{{col: 8, msg: `missing field=a.b.c|[a, b, c]: //kopf:on.field requires it (the field to watch, dotted (spec.a.b) or a list ([spec, "a.b"]): the handler runs when it changes, with old, new and diff reduced to it)`}}},
		{"//kopf:on.field ex field=", []wantErr{{col: 26, msg: "missing value after field="}}},
		{"//kopf:on.create ex old=1", []wantErr{{at: "old", msg: "unknown argument old of //kopf:on.create; it is an argument of //kopf:on.update, //kopf:on.field"}}},
		{"//kopf:on.event ex errors=ignored", []wantErr{{at: "errors", msg: "unknown argument errors of //kopf:on.event; it is an argument of //kopf:on.resume, //kopf:on.create, //kopf:on.update, //kopf:on.delete, //kopf:on.field, //kopf:daemon, //kopf:timer, //kopf:on.startup, //kopf:on.cleanup, //kopf:on.login, //kopf:on.probe, //kopf:index"}}},
		{"//kopf:daemon ex old=1", []wantErr{{at: "old", msg: "unknown argument old of //kopf:daemon; it is an argument of //kopf:on.update, //kopf:on.field"}}},
		{"//kopf:timer ex cancellation_timeout=1", []wantErr{{at: "cancellation_timeout", msg: "unknown argument cancellation_timeout of //kopf:timer; it is an argument of //kopf:daemon"}}},
		{"//kopf:daemon ex interval=1", []wantErr{{at: "interval", msg: "unknown argument interval of //kopf:daemon; it is an argument of //kopf:timer"}}},
		{"//kopf:timer ex interval=0", []wantErr{{at: "0", msg: "interval: must be positive, got 0"}}},
		{"//kopf:timer ex idle=-1s", []wantErr{{at: "-1s", msg: "idle: must be positive, got -1s"}}},
		{"//kopf:daemon ex cancellation_backoff=soon", []wantErr{{at: "soon", msg: `cancellation_backoff: want a duration such as 90s, 1.5m, 1h30m or 90 (seconds), got "soon"`}}},
		{"//kopf:timer ex sharp=yes", []wantErr{{at: "yes", msg: `sharp: want true or false, got "yes"`}}},
		{"//kopf:on.create ex labels=x", []wantErr{{at: "=x", col: 1, msg: "labels: want a map {key: value, ...}, got x"}}},
		{"//kopf:on.create ex labels={a: [b]}", []wantErr{{at: "[", msg: "labels: want a filter value (a literal, PRESENT, ABSENT or fn:NAME), got a list"}}},
		{`//kopf:on.create ex labels={"": b}`, []wantErr{{at: `""`, msg: "labels: empty key"}}},
		{"//kopf:on.create ex labels={a: fn:, b: fn:x.y, c: fn:func}", []wantErr{
			{at: "fn:,", msg: "labels: fn: is not a callback reference: want fn: followed by the name of a function of the package; quote the value for a literal string"},
			{at: "fn:x", msg: "labels: fn:x.y is not a callback reference: want fn: followed by the name of a function of the package; quote the value for a literal string"},
			{at: "fn:func", msg: "labels: fn:func is not a callback reference: want fn: followed by the name of a function of the package; quote the value for a literal string"},
		}},
		{"//kopf:on.create ex labels={a: kopf.ABSENT}", []wantErr{{at: "kopf.", msg: "labels: write ABSENT without kopf., or quote it for a literal string"}}},
		{"//kopf:on.create ex field=a value=null", []wantErr{{at: "null", msg: `value: null is not a filter value: omit value= to check nothing, write ABSENT for a missing field, or quote "null" for the string`}}},
		{"//kopf:on.create ex field=a value=1e999", []wantErr{{at: "1e999", msg: "value: number 1e999 is out of range"}}},
		{"//kopf:on.create ex field=a value={}", []wantErr{{at: "{", msg: "value: want a filter value (a literal, PRESENT, ABSENT or fn:NAME), got a map"}}},
		{"//kopf:on.create ex when=1x", []wantErr{{at: "1x", msg: `when: want the name of a function of the package (NAME or fn:NAME), got "1x"`}}},
		{"//kopf:on.create ex when=[a]", []wantErr{{at: "[", msg: "when: want a function name, got a list"}}},
		{`//kopf:on.create ex field=""`, []wantErr{{at: `""`, msg: "field: empty field"}}},
		{"//kopf:on.create ex field=[]", []wantErr{{at: "[", msg: "field: empty field"}}},
		{"//kopf:on.create ex field=.a", []wantErr{{at: ".a", msg: `field: empty part in field ".a": want a.b.c, or a list [a, "b.c"] for keys with dots`}}},
		{`//kopf:on.create ex field=[a, ""]`, []wantErr{{at: `""`, msg: "field: empty part in field"}}},
		{"//kopf:on.create ex field=[a, [b]]", []wantErr{{at: "[b", msg: "field: the parts of a field must be strings, not a list"}}},
		{"//kopf:on.create ex field={a: b}", []wantErr{{at: "{", msg: "field: want a field a.b.c or [a, b, c], got a map"}}},

		// Several errors at once, in order.
		{"//kopf:on.create ex timeout=abc retries=0 bogus=1", []wantErr{
			{at: "abc", msg: `timeout: want a duration such as 90s, 1.5m, 1h30m or 90 (seconds), got "abc"`},
			{at: "0", msg: "retries: must be positive, got 0"},
			{at: "bogus", msg: "unknown argument bogus of //kopf:on.create; known arguments: " + knownArgs},
		}},
		{"//kopf:on.create x.y/v1/ex extra errors=x", []wantErr{
			{at: "extra", msg: "unexpected positional argument extra: //kopf:on.create takes " + resourceHelp},
			{at: "=x", col: 1, msg: `errors: want one of ignored, temporary, permanent, got "x"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			m, err := tbl.Parse(tt.text, testPos)
			if err == nil {
				t.Fatalf("Parse succeeded with %v, want errors", m)
			}
			if m != nil {
				t.Errorf("Parse returned a marker with errors")
			}
			var list scanner.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error %T is not a scanner.ErrorList", err)
			}
			var want []string
			for _, w := range tt.errs {
				col := w.col
				if w.at != "" {
					// col shifts the anchor, e.g. past the '=' of "=x".
					col = strings.Index(tt.text, w.at) + 1 + w.col
				}
				want = append(want, fmt.Sprintf("h.go:10:%d: %s", col, w.msg))
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestParsePositions pins the arithmetic: columns and offsets count bytes
// from the comment's position.
func TestParsePositions(t *testing.T) {
	tbl := Kopf()
	pos := token.Position{Filename: "x.go", Offset: 1000, Line: 42, Column: 9}
	_, err := tbl.Parse("//kopf:on.create ex retries=0", pos)
	var list scanner.ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("err = %v", err)
	}
	e := list[0]
	if e.Pos.Line != 42 || e.Pos.Column != 9+28 || e.Pos.Offset != 1000+28 || e.Pos.Filename != "x.go" {
		t.Errorf("pos = %#v", e.Pos)
	}
	if got, want := e.Error(), "x.go:42:37: retries: must be positive, got 0"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestKopfTableIsValid(t *testing.T) {
	tbl := Kopf()
	for _, name := range []string{OnCreate, OnUpdate, OnDelete, OnResume, OnField, OnEvent, Resource} {
		d := tbl.Lookup(name)
		if d == nil {
			t.Fatalf("%s is not defined", name)
		}
		want := TargetFunc
		if name == Resource {
			want = TargetType
		}
		if d.Targets != want || len(d.Positional) != 1 || d.Positional[0].Type != TypeResource {
			t.Errorf("%s: unexpected shape %+v", name, d)
		}
		if name != Resource {
			for _, filter := range []string{"id", "param", "labels", "annotations", "when", "field", "value"} {
				if d.Arg(filter) == nil {
					t.Errorf("%s lacks %s=", name, filter)
				}
			}
		}
		if hasOldNew := d.Arg("old") != nil && d.Arg("new") != nil; hasOldNew != (name == OnUpdate || name == OnField) {
			t.Errorf("%s: old= and new= are for on.update and on.field only", name)
		}
		if required := d.Arg("field") != nil && d.Arg("field").Required; required != (name == OnField) {
			t.Errorf("%s: field= is required by on.field only", name)
		}
		for _, a := range append(d.Positional, d.Args...) {
			if a.Doc == "" || strings.Contains(a.Doc, "\n") {
				t.Errorf("%s: argument %s needs a one-line description", name, a.Name)
			}
		}
		for _, a := range d.Args {
			if a.Default == "" {
				t.Errorf("%s: argument %s needs a default", name, a.Name)
			}
		}
	}
	if Kopf() == tbl || Kopf().Lookup(OnCreate) == tbl.Lookup(OnCreate) {
		t.Error("Kopf() must build a new table on every call")
	}
	defs := tbl.Definitions()
	defs[0].Args[0].Name = "changed"
	if tbl.Lookup(defs[0].Name).Args[0].Name == "changed" {
		t.Error("Definitions() must return copies")
	}
}

func TestKopfPlanned(t *testing.T) {
	tbl := Kopf()
	var names []string
	for _, p := range tbl.Planned() {
		names = append(names, p.Name)
		if tbl.Lookup(p.Name) != nil {
			t.Errorf("%s is both defined and planned", p.Name)
		}
		if got := tbl.LookupPlanned(p.Name); got == nil || *got != p {
			t.Errorf("LookupPlanned(%s) = %v", p.Name, got)
		}
	}
	// Every decorator of Kopf 1.44.6 (kopf/on.py) is defined or planned.
	for _, kopf := range []string{
		"on.startup", "on.cleanup", "on.login", "on.probe", "on.validate", "on.mutate",
		"on.resume", "on.create", "on.update", "on.delete", "on.field", "on.event",
		"index", "daemon", "timer", "subhandler",
	} {
		if tbl.Lookup(kopf) == nil && tbl.LookupPlanned(kopf) == nil {
			t.Errorf("Kopf's decorator %s is neither defined nor planned", kopf)
		}
	}
	if tbl.LookupPlanned(OnCreate) != nil || tbl.LookupPlanned("frobnicate") != nil {
		t.Error("LookupPlanned finds what is not planned")
	}
	if len(names) == 0 {
		t.Fatal("nothing is planned")
	}
}

func TestWithPlannedRejects(t *testing.T) {
	base, err := NewTable(Definition{Name: "a", Targets: TargetFunc})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		planned []Planned
		want    string
	}{
		{[]Planned{{Name: "a", Kopf: "@kopf.a"}}, "marker a is both defined and planned"},
		{[]Planned{{Name: "b", Kopf: "@kopf.b"}, {Name: "b", Kopf: "@kopf.b"}}, "marker b is planned twice"},
		{[]Planned{{Name: "b c", Kopf: "@kopf.b"}}, `planned marker: invalid name "b c"`},
		{[]Planned{{Name: "b"}}, "planned marker b: missing Kopf's decorator"},
	}
	for _, tt := range tests {
		if _, err := base.WithPlanned(tt.planned...); err == nil || err.Error() != tt.want {
			t.Errorf("WithPlanned(%+v) = %v, want %q", tt.planned, err, tt.want)
		}
	}
	with, err := base.WithPlanned(Planned{Name: "b", Kopf: "@kopf.b"})
	if err != nil {
		t.Fatal(err)
	}
	if base.LookupPlanned("b") != nil || with.LookupPlanned("b") == nil || with.Lookup("a") == nil {
		t.Error("WithPlanned must return a new table and leave the old one alone")
	}
}

func TestNewTableRejects(t *testing.T) {
	fn := TargetFunc
	tests := []struct {
		defs []Definition
		want string
	}{
		{[]Definition{{Name: "", Targets: fn}}, `marker definition 0: invalid name ""`},
		{[]Definition{{Name: "a b", Targets: fn}}, `marker definition 0: invalid name "a b"`},
		{[]Definition{{Name: "a", Targets: fn}, {Name: "a", Targets: fn}}, "marker a is defined twice"},
		{[]Definition{{Name: "a"}}, "marker a applies to nothing"},
		{[]Definition{{Name: "a", Targets: fn, Args: []Arg{{Name: "x-y", Type: TypeInt}}}}, `marker a: invalid argument name "x-y"`},
		{[]Definition{{Name: "a", Targets: fn, Args: []Arg{{Name: "x", Type: TypeInt}, {Name: "x", Type: TypeInt}}}}, "marker a: argument x is defined twice"},
		{[]Definition{{Name: "a", Targets: fn, Args: []Arg{{Name: "x"}}}}, "marker a: argument x has no valid type"},
		{[]Definition{{Name: "a", Targets: fn, Args: []Arg{{Name: "x", Type: TypeEnum}}}}, "marker a: argument x: enum values go with TypeEnum (required) and TypeStringList only"},
		{[]Definition{{Name: "a", Targets: fn, Args: []Arg{{Name: "x", Type: TypeInt, Enum: []string{"a"}}}}}, "marker a: argument x: enum values go with TypeEnum (required) and TypeStringList only"},
		{[]Definition{{Name: "a", Targets: fn, Positional: []Arg{{Name: "x", Type: TypeInt, Required: true}}}}, "marker a: positional argument x is always required; Required is for named arguments"},
		{[]Definition{{Name: "a", Targets: fn, Args: []Arg{{Name: "x", Type: lastType + 1}}}}, "marker a: argument x has no valid type"},
	}
	for _, tt := range tests {
		_, err := NewTable(tt.defs...)
		if err == nil || err.Error() != tt.want {
			t.Errorf("NewTable(%+v) = %v, want %q", tt.defs, err, tt.want)
		}
	}
}

func TestHelpCoversTheTable(t *testing.T) {
	tbl := Kopf()
	var buf bytes.Buffer
	if err := WriteHelp(&buf, tbl); err != nil {
		t.Fatal(err)
	}
	help := buf.String()
	for _, d := range tbl.Definitions() {
		if !strings.Contains(help, d.Usage()+"\n") {
			t.Errorf("help lacks the usage of %s: %s", d.Name, d.Usage())
		}
		for _, a := range append(d.Positional, d.Args...) {
			if !strings.Contains(help, a.Doc) || !strings.Contains(help, a.Default) {
				t.Errorf("help lacks argument %s of %s", a.Name, d.Name)
			}
		}
	}
	for _, want := range []string{
		"//kopf:on.delete <resource> [id=string] [param=string] [errors=ignored|temporary|permanent] [timeout=duration] [retries=int] [backoff=duration] [optional=bool] [labels={k: v|\"v\"|PRESENT|ABSENT|fn:F, ...}] [annotations={k: v|\"v\"|PRESENT|ABSENT|fn:F, ...}] [when=F] [field=a.b.c|[a, b, c]] [value=value|\"string\"|PRESENT|ABSENT|fn:F]\n",
		"//kopf:on.field <resource> [id=string] [param=string] [errors=ignored|temporary|permanent] [timeout=duration] [retries=int] [backoff=duration] [labels={k: v|\"v\"|PRESENT|ABSENT|fn:F, ...}] [annotations={k: v|\"v\"|PRESENT|ABSENT|fn:F, ...}] [when=F] field=a.b.c|[a, b, c] [value=value|\"string\"|PRESENT|ABSENT|fn:F] [old=value|\"string\"|PRESENT|ABSENT|fn:F] [new=value|\"string\"|PRESENT|ABSENT|fn:F]\n",
		"//kopf:on.event <resource> [id=string] [param=string] [labels=",
		"//kopf:resource <resource>\n",
		"//kopf:daemon <resource> [id=string] [param=string] [errors=ignored|temporary|permanent] [timeout=duration] [retries=int] [backoff=duration] [initial_delay=duration|fn:F] [cancellation_backoff=duration] [cancellation_timeout=duration] [cancellation_polling=duration] [labels=",
		"//kopf:timer <resource> [id=string] [param=string] [errors=ignored|temporary|permanent] [timeout=duration] [retries=int] [backoff=duration] [interval=duration] [idle=duration] [sharp=bool] [initial_delay=duration|fn:F] [labels=",
		"//kopf:index <resource> [id=string] [param=string] [errors=ignored|temporary|permanent] [timeout=duration] [retries=int] [backoff=duration] [labels=",
		"//kopf:on.validate <resource> [id=string] [param=string] [operations=[CREATE|UPDATE|DELETE|CONNECT, ...]] [subresource=string] [persistent=bool] [side_effects=bool] [ignore_failures=bool] [labels=",
		"//kopf:on.mutate <resource> [id=string] [param=string] [operations=[CREATE|UPDATE|DELETE|CONNECT, ...]] [subresource=string] [persistent=bool] [side_effects=bool] [ignore_failures=bool] [labels=",
		"\n//kopf:subhandler  not a marker: call kopf.Subhandler(ctx, handler) inside a changing handler to register sub-handlers at run time\n",
		"\tv1 (core): pods services",
		"\tapps/v1: deployments",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
}

func TestIsVersion(t *testing.T) {
	for s, want := range map[string]bool{
		"v1": true, "v2": true, "v10": true, "v1beta1": true, "v2alpha3": true,
		"v": false, "v0": false, "v01": false, "v1beta": false, "v1beta0": false, "v1gamma1": false,
		"kopf": false, "1": false, "vv1": false, "v1beta1x": false,
	} {
		if got := isVersion(s); got != want {
			t.Errorf("isVersion(%q) = %v, want %v", s, got, want)
		}
	}
}
