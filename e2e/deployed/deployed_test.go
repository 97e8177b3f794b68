package deployed

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/kopftest"
)

// forbidden finds the lines of an operator's log that tell of a refusal:
// "forbidden" (client-go's errors, Kopf's wording) or a status 403 standing
// alone after a space, a parenthesis, "=" or ":" (not the milliseconds of a
// timestamp, which follow a comma, nor hex digits of a uid such as
// "…-b403-…" in a logged object, nor a quoted value).
var forbidden = regexp.MustCompile(`(?im)^.*(forbidden|(^|[\s(=:])403\b).*$`)

// cannot finds the permission in the API server's message of a refusal
// (`User "u" cannot create resource "r" in API group "g"`). A server-side
// apply that creates an object is authorized as a patch and then as a
// create: the audit log shows only the patch, allowed, and the refused
// create is known from this message.
var cannot = regexp.MustCompile(`cannot (\w+) resource "([^"]+)" in API group "([^"]*)"`)

// TestDeployed runs each example's operator as deployed, with only its
// generated RBAC, through its scenario; a refused request fails it with
// the permission that was missing. It logs the permissions that each
// operator used and those it was granted but did not use.
func TestDeployed(t *testing.T) {
	var summary []string
	for _, ex := range examples {
		t.Run(ex.dir, func(t *testing.T) {
			t.Cleanup(func() { clean(t) })
			d := deploy(t, ex)
			r := &run{t: t, ex: ex, d: d, objs: kopftest.NewObjects(t, shared.Config, kopfexamples, namespace)}
			// After the scenario, even a failed one, and after its
			// operators are killed (the cleanups run in reverse order).
			t.Cleanup(func() {
				u := r.check(t)
				if u != nil {
					summary = append(summary, fmt.Sprintf("%-22s used %2d of %2d; unused: %s", ex.dir, len(u.used), len(u.granted), strings.Join(u.unused(), ", ")))
				}
			})
			ex.scenario(r)
		})
	}
	sort.Strings(summary)
	t.Logf("the permissions of the generated roles, by example:\n%s", strings.Join(summary, "\n"))
}

// check fails the test for each refused request of the operator's
// ServiceAccount (named by the permission it lacked) and each log line of
// its operators that tells of a refusal, and logs which granted
// permissions the requests used.
func (r *run) check(t *testing.T) *usage {
	t.Helper()
	events := r.d.audited(t)
	for what, req := range refusals(events) {
		t.Errorf("the operator's ServiceAccount %s lacks the permission to %s (refused: %s)", r.d.name, what, req)
	}
	for _, op := range r.ops {
		for _, line := range forbidden.FindAllString(op.Logs(), 5) {
			if m := cannot.FindStringSubmatch(line); m != nil {
				p := permission{verb: m[1], resource: m[2], group: m[3]}
				t.Errorf("the operator's ServiceAccount %s lacks the permission to %s (%s logs: %s)", r.d.name, p, op.Name, line)
			} else {
				t.Errorf("%s logs a refusal: %s", op.Name, line)
			}
		}
	}
	u := r.d.use(t, events)
	t.Log(u.report(r.d.name))
	return u
}

// TestForbiddenPattern checks which log lines count as a refusal: stop 33's
// CI failed on a logged object whose uid held "b403".
func TestForbiddenPattern(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`pods is forbidden: User "system:serviceaccount:x:y" cannot list resource "pods"`, true},
		{`APIForbiddenError: (403) Forbidden`, true},
		{`the server responded with status 403`, true},
		{`code=403 reason=Forbidden`, true},
		{`[2026-11-28 09:09:17,403] kopf.objects [DEBUG] Handler succeeded.`, false},
		{`"uid":"10d4026e-f039-4e9a-b403-1a1779aff1f5"`, false},
		{`"resourceVersion":"403"`, false},
	} {
		if got := forbidden.MatchString(tc.line); got != tc.want {
			t.Errorf("forbidden.MatchString(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
