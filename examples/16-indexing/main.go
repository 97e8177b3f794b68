// Command indexing is the Go port of Kopf's 16-indexing example: two
// indices of pods, is_running and by_label, read by a timer of every
// KopfExample, which prints one index and stores the running pods of the
// default and kube-system namespaces in its status.
//
// Kopf's indices are dicts of tuples to lists; in Go, an index function
// returns a map, and the generated kwargs of every handler of the package
// hold the indices, typed by what the functions return:
// kw.IsRunning is a kopf.Index[[2]string, bool] and kw.ByLabel a
// kopf.Index[[2]string, string].
//
// Its two probes (pod_count, pod_names) read is_running too: the liveness
// endpoint (-L) serves their results.
//
// Run it against a cluster with the KopfExample CRD (../crd.yaml):
//
//	go run . run -A --standalone --verbose
package main

//go:generate go tool kopf-gen

import (
	"context"
	"fmt"
	"os"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/pyfmt"
)

// IsRunning indexes every pod by its namespace and name: whether it runs.
//
//kopf:index pods
func IsRunning(ctx context.Context, kw IsRunningKwargs) map[[2]string]bool {
	return map[[2]string]bool{{kw.Namespace, kw.Name}: kw.Object.Status.Phase == corev1.PodRunning}
	// {[kube-system traefik-...-...]: [true],
	//  [kube-system helm-install-traefik-...]: [false],
	//    ...}
}

// ByLabel indexes every pod's name by each of its labels and values.
//
//kopf:index pods
func ByLabel(ctx context.Context, kw ByLabelKwargs) map[[2]string]string {
	out := make(map[[2]string]string, len(kw.Labels))
	for label, value := range kw.Labels {
		out[[2]string{label, value}] = kw.Name
	}
	return out
	// {[app traefik]: [traefik-...-...],
	//  [job-name helm-install-traefik]: [helm-install-traefik-...],
	//  [helmcharts.helm.cattle.io/chart traefik]: [helm-install-traefik-...],
	//    ...}
}

// Intervalled prints the index by_label and stores the running pods of
// two namespaces in the object's status.running-pods.
//
//kopf:timer kex interval=5
func Intervalled(ctx context.Context, kw IntervalledKwargs) error {
	byLabel := map[[2]string][]string{} // pprint.pprint(dict(by_label))
	for key, store := range kw.ByLabel.All() {
		byLabel[key] = slices.Sorted(slices.Values(store.Values()))
	}
	fmt.Println(pyfmt.Pformat(byLabel))
	running := []string{}
	for key, store := range kw.IsRunning.All() {
		ns, name := key[0], key[1]
		if ns != "kube-system" && ns != "default" {
			continue
		}
		// Kopf's example tests the store itself, which is true when it
		// is not empty; the values say whether the pod runs.
		if slices.Contains(store.Values(), true) {
			running = append(running, ns+"::"+name)
		}
	}
	slices.Sort(running)
	kw.Patch.Status()["running-pods"] = running
	return nil
}

// PodCount returns the number of pods in sight.
//
//kopf:on.probe
func PodCount(ctx context.Context, kw PodCountKwargs) (any, error) { return kw.IsRunning.Len(), nil }

// PodNames returns the names of the pods in sight.
//
//kopf:on.probe
func PodNames(ctx context.Context, kw PodNamesKwargs) (any, error) {
	names := []string{}
	for key := range kw.IsRunning.Keys() {
		names = append(names, key[1])
	}
	slices.Sort(names)
	return names, nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
