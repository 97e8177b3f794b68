// Package packaging renders an operator's manifests as its users install
// them, from the kustomization that `kopf-gen init` scaffolds (config/default,
// as kubebuilder's config/ composes crd, rbac, manager and webhook):
//
//   - Build renders a kustomization with kustomize's own library (krusty,
//     as `kustomize build` does), and SetImage sets the operator's image
//     as `kustomize edit set image` would: together they make the one
//     install.yaml of kubebuilder's `make build-installer`;
//   - Chart turns the rendered objects into a Helm chart whose values
//     choose the image, the replicas, the resources, the namespace, and
//     whether the CRDs, the webhooks' objects and the metrics endpoint are
//     installed (see ChartOptions and Chart);
//   - CRDKustomization lists the generated CRDs for config/crd.
//
// Everything is computed in memory: the caller gives the file system that
// Build reads (kopf-gen gives the manifests it is about to write over those
// on disk, so that the chart is current with them) and writes the results.
package packaging

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/filters/imagetag"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/pkg/util"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// KustomizationFile is the name of a kustomization, as kustomize reads it.
const KustomizationFile = "kustomization.yaml"

// Build renders the kustomization in dir of fsys, as `kustomize build dir`
// does with its defaults (load restrictions to the root, no plugins, no
// Helm): the objects in kustomize's legacy order (namespaces, CRDs, RBAC,
// then the rest), which is the order in which `kubectl apply` can create
// them.
func Build(fsys filesys.FileSystem, dir string) (resmap.ResMap, error) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	return m, nil
}

// SetImage replaces the image NAME of the containers of every object with
// IMAGE, given as NAME=IMAGE, IMAGE being [registry/]repository[:tag][@digest],
// as `kustomize edit set image NAME=IMAGE` followed by a build would.
func SetImage(m resmap.ResMap, spec string) error {
	name, img, ok := strings.Cut(spec, "=")
	if !ok || name == "" || img == "" {
		return fmt.Errorf("image %q: want NAME=IMAGE, as kustomize edit set image takes it (e.g. widget-operator=registry.example.com/widget-operator:v1)", spec)
	}
	newName, tag, digest := util.SplitImageName(img)
	f := imagetag.LegacyFilter{ImageTag: types.Image{Name: name, NewName: newName, NewTag: tag, Digest: digest}}
	if err := m.ApplyFilter(f); err != nil {
		return fmt.Errorf("setting image %s: %w", spec, err)
	}
	return nil
}

// CRDKustomization renders config/crd's kustomization: the CRD files by
// name, sorted, under a header of the given kopf-gen version.
func CRDKustomization(header string, crds []string) []byte {
	names := append([]string(nil), crds...)
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("#\n# The CRDs that kopf-gen writes next to this file, for kustomize (config/default\n" +
		"# composes this directory). This file is rewritten by kopf-gen.\n" +
		"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
	if len(names) == 0 {
		b.WriteString("resources: []\n")
		return []byte(b.String())
	}
	b.WriteString("resources:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  - %s\n", n)
	}
	return []byte(b.String())
}

// BuildDir is Build of a directory on the disk.
func BuildDir(dir string) (resmap.ResMap, error) { return Build(filesys.MakeFsOnDisk(), dir) }
