package builtins

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestTableMatchesTheAPI checks every entry against the real k8s.io/api
// types: the type exists, and has spec and status fields of the named types
// exactly when the table says so.
func TestTableMatchesTheAPI(t *testing.T) {
	types := map[string]reflect.Type{}
	for _, v := range []any{
		corev1.Pod{}, corev1.Service{}, corev1.ConfigMap{}, corev1.Secret{}, corev1.Namespace{}, corev1.Node{},
		corev1.PersistentVolumeClaim{}, corev1.PersistentVolume{}, corev1.ServiceAccount{},
		appsv1.Deployment{}, appsv1.StatefulSet{}, appsv1.DaemonSet{}, appsv1.ReplicaSet{},
		batchv1.Job{}, batchv1.CronJob{},
	} {
		rt := reflect.TypeOf(v)
		types[rt.PkgPath()+"."+rt.Name()] = rt
	}
	seen := map[string]bool{}
	aliases := map[string]string{}
	for _, r := range Table() {
		rt, ok := types[r.Package+"."+r.Kind]
		if !ok {
			t.Errorf("%s: no type %s.%s", r.Plural, r.Package, r.Kind)
			continue
		}
		if a, ok := aliases[r.Package]; ok && a != r.Alias {
			t.Errorf("%s: alias %s, and %s elsewhere", r.Package, r.Alias, a)
		}
		aliases[r.Package] = r.Alias
		for _, part := range []struct{ json, want string }{{"spec", r.Spec}, {"status", r.Status}} {
			got := ""
			for i := range rt.NumField() {
				f := rt.Field(i)
				if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == part.json {
					got = f.Type.Name()
					if f.Type.PkgPath() != r.Package {
						t.Errorf("%s.%s is in %s", r.Kind, part.json, f.Type.PkgPath())
					}
				}
			}
			if got != part.want {
				t.Errorf("%s: %s is %q in the API, %q in the table", r.Kind, part.json, got, part.want)
			}
		}
		for _, name := range r.Names() {
			key := name
			if seen[key] {
				t.Errorf("name %s is used twice", key)
			}
			seen[key] = true
		}
	}
}
