package generator

import (
	"path/filepath"

	"github.com/kopf-go/kopf/generator/manifests"
	"github.com/kopf-go/kopf/generator/model"
)

// planWebhooks plans the manifests of admission webhooks (the Service and
// the Role of the certificate Secret, see package manifests) when the
// packages have webhook handlers or conversions (served on the same
// server), and the removal of generated ones when
// they have none.
func (p *plans) planWebhooks(dir, name string, models []*model.Package) error {
	paths := []string{
		filepath.Join(dir, filepath.FromSlash(manifests.WebhookServiceFile)),
		filepath.Join(dir, filepath.FromSlash(manifests.WebhookRoleFile)),
	}
	if validating, mutating := manifests.WebhookKinds(models); !validating && !mutating && !manifests.HasConversions(models) {
		for _, path := range paths {
			if err := p.keep(planOrphan(path, isGeneratedYAML)); err != nil {
				return err
			}
		}
		return nil
	}
	opts := manifests.WebhookOptions{Name: name, Version: Version()}
	for i, render := range []func(manifests.WebhookOptions) ([]byte, error){manifests.WebhookService, manifests.WebhookRole} {
		want, err := render(opts)
		if err != nil {
			return err
		}
		if err := p.keep(planGenerated(paths[i], want, isGeneratedYAML)); err != nil {
			return err
		}
	}
	return nil
}
