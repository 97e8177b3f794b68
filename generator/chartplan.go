package generator

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kopf-go/kopf/generator/manifests"
	"github.com/kopf-go/kopf/generator/packaging"
)

// KustomizationFile is the kustomization that Options.Kustomize plans in
// the CRDs' directory, and DefaultDir the kustomization, under
// Options.Manifests, that Options.Chart renders.
const (
	KustomizationFile = packaging.KustomizationFile
	DefaultDir        = "default"
)

// withKustomization adds the CRDs' kustomization to the CRD files to plan
// when Options.Kustomize asks for it; without it, a generated one is
// planned for removal as any orphaned CRD file is.
func withKustomization(opts Options, crds map[string][]byte) map[string][]byte {
	if !opts.Kustomize {
		return crds
	}
	out := make(map[string][]byte, len(crds)+1)
	names := make([]string, 0, len(crds))
	for name, b := range crds {
		out[name] = b
		names = append(names, name)
	}
	out[KustomizationFile] = packaging.CRDKustomization(manifests.Header(Version()), names)
	return out
}

// planChart plans the Helm chart of Options.Chart: the kustomization
// Options.Manifests/default rendered over the files on disk with the
// planned ones in their place (so that the chart is current with what this
// run writes), made into a chart named after the operator (see
// packaging.Chart), and the removal of the chart's generated files that
// nothing produces any more.
func planChart(opts Options, name string, planned []File) ([]File, error) {
	dir, err := opts.resolve(opts.Manifests)
	if err != nil {
		return nil, err
	}
	chartDir, err := opts.resolve(opts.Chart)
	if err != nil {
		return nil, err
	}
	fsys, err := overlay(dir, planned)
	if err != nil {
		return nil, err
	}
	defaultDir := filepath.Join(dir, DefaultDir)
	if !fsys.Exists(filepath.Join(defaultDir, KustomizationFile)) {
		return nil, fmt.Errorf("--chart renders the kustomization %s, which does not exist (kopf-gen init writes it)", filepath.Join(defaultDir, KustomizationFile))
	}
	m, err := packaging.Build(fsys, defaultDir)
	if err != nil {
		return nil, err
	}
	chart, err := packaging.Chart(m, packaging.ChartOptions{Name: name, Header: manifests.Header(Version())})
	if err != nil {
		return nil, err
	}
	var p plans
	rels := make([]string, 0, len(chart))
	for rel := range chart {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		if err := p.keep(planGenerated(filepath.Join(chartDir, filepath.FromSlash(rel)), chart[rel], isGeneratedYAML)); err != nil {
			return nil, err
		}
	}
	if err := p.planChartOrphans(chartDir, chart); err != nil {
		return nil, err
	}
	return p.result()
}

// planChartOrphans plans the removal of the chart's generated YAML files
// that are not in chart.
func (p *plans) planChartOrphans(chartDir string, chart map[string][]byte) error {
	err := filepath.WalkDir(chartDir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		rel, err := filepath.Rel(chartDir, path)
		if err != nil || chart[filepath.ToSlash(rel)] != nil {
			return err
		}
		return p.keep(planOrphan(path, isGeneratedYAML))
	})
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("listing %s: %w", chartDir, err)
	}
	return nil
}

// overlay returns an in-memory copy of the files under dir, at the same
// absolute paths, with the planned files under dir written (or removed)
// as they will be.
func overlay(dir string, planned []File) (filesys.FileSystem, error) {
	fsys := filesys.MakeFsInMemory()
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return fsys.WriteFile(path, b)
	})
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, f := range planned {
		if !strings.HasPrefix(f.Path, dir+string(filepath.Separator)) {
			continue
		}
		if f.Want == nil {
			err = fsys.RemoveAll(f.Path)
		} else {
			err = fsys.WriteFile(f.Path, f.Want)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	return fsys, nil
}
