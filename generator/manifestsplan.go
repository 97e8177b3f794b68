package generator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kopf-go/kopf/generator/load"
	"github.com/kopf-go/kopf/generator/manifests"
	"github.com/kopf-go/kopf/generator/model"
)

// RoleFile and CRDDir are where manifests go, under Options.Manifests.
const (
	RoleFile = "rbac/role.yaml"
	CRDDir   = "crd"
)

// planManifests plans what Options.Manifests and Options.DeepCopy ask for
// (see the package doc): under the manifests directory, the Role, the
// webhooks' manifests and the CRDs; in the packages whose markers ask for
// them, the DeepCopy files; and the removal of the generated ones that
// nothing produces any more. The CRDs and the DeepCopy methods come from
// one run of controller-tools (manifests.Code), after the Role and the
// DeepCopy markers are checked.
func planManifests(ctx context.Context, opts Options, pkgs []*load.Package, models []*model.Package) ([]File, error) {
	var (
		p   plans
		dir string
		req = manifests.CodeRequest{Dir: opts.Dir, Version: Version()}
	)
	if opts.Manifests != "" {
		var err error
		if dir, err = opts.resolve(opts.Manifests); err != nil {
			return nil, err
		}
		if err := p.planRBAC(dir, roleName(opts, pkgs), opts.Peering, models); err != nil {
			return nil, err
		}
		for _, m := range models {
			req.Resources = append(req.Resources, m.Resources...)
			req.Conversions = append(req.Conversions, m.Conversions...)
		}
	}
	if opts.DeepCopy {
		req.DeepCopy = p.deepCopyPackages(pkgs)
	}
	code, err := manifests.Code(ctx, req)
	if err := p.keep(File{}, false, err); err != nil {
		return nil, err
	}
	if len(p.errs) > 0 {
		return p.result()
	}
	if opts.Manifests != "" {
		if err := p.planCRDs(filepath.Join(dir, CRDDir), withKustomization(opts, code.CRDs)); err != nil {
			return nil, err
		}
	}
	if opts.DeepCopy {
		if err := p.planDeepCopy(pkgs, code.DeepCopy); err != nil {
			return nil, err
		}
	}
	return p.result()
}

// roleName is Options.RoleName, or the default name derived from the
// module of the matched packages.
func roleName(opts Options, pkgs []*load.Package) string {
	if opts.RoleName != "" {
		return opts.RoleName
	}
	module := ""
	for _, p := range pkgs {
		if p.Module != "" {
			module = p.Module
			break
		}
	}
	return manifests.DefaultRoleName(module)
}

// planRBAC plans the ClusterRole of the handlers under dir and the
// webhooks' manifests, which are named after it.
func (p *plans) planRBAC(dir, name string, peering bool, models []*model.Package) error {
	role, err := manifests.Role(models, manifests.RoleOptions{Name: name, Peering: peering, Version: Version()})
	if err := p.keep(File{}, false, err); err != nil {
		return err
	}
	if role != nil {
		if err := p.keep(planGenerated(filepath.Join(dir, filepath.FromSlash(RoleFile)), role, isGeneratedYAML)); err != nil {
			return err
		}
	}
	return p.planWebhooks(dir, name, models)
}

// planCRDs plans the CRD files in crdDir, by file name, and the removal of
// the generated ones that nothing produces any more.
func (p *plans) planCRDs(crdDir string, crds map[string][]byte) error {
	names := make([]string, 0, len(crds))
	for name := range crds {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := p.keep(planGenerated(filepath.Join(crdDir, name), crds[name], isGeneratedYAML)); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(crdDir)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("listing %s: %w", crdDir, err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") || crds[e.Name()] != nil {
			continue
		}
		if err := p.keep(planOrphan(filepath.Join(crdDir, e.Name()), isGeneratedYAML)); err != nil {
			return err
		}
	}
	return nil
}
