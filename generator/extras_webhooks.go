package generator

import (
	"path/filepath"

	"github.com/kopf-go/kopf/generator/manifests"
	"github.com/kopf-go/kopf/generator/model"
)

// plannedFile is a file planned by planExtra or planOrphan, with their
// results.
type plannedFile struct {
	File
	ok  bool
	err error
}

// planWebhooks plans the manifests of admission webhooks (the Service and
// the Role of the certificate Secret, see package manifests) when the
// packages have webhook handlers, and the removal of generated ones when
// they have none.
func planWebhooks(dir, name string, models []*model.Package) ([]plannedFile, error) {
	paths := []string{
		filepath.Join(dir, filepath.FromSlash(manifests.WebhookServiceFile)),
		filepath.Join(dir, filepath.FromSlash(manifests.WebhookRoleFile)),
	}
	var out []plannedFile
	if validating, mutating := manifests.WebhookKinds(models); !validating && !mutating {
		for _, path := range paths {
			f, ok, err := planOrphan(path, isGeneratedYAML)
			out = append(out, plannedFile{f, ok, err})
		}
		return out, nil
	}
	opts := manifests.WebhookOptions{Name: name, Version: Version}
	for i, render := range []func(manifests.WebhookOptions) ([]byte, error){manifests.WebhookService, manifests.WebhookRole} {
		want, err := render(opts)
		if err != nil {
			return nil, err
		}
		f, ok, err := planExtra(paths[i], want, isGeneratedYAML)
		out = append(out, plannedFile{f, ok, err})
	}
	return out, nil
}
