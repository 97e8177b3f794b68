package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kopf-go/kopf/generator/packaging"
)

// newKustomizeCmd is `kopf-gen kustomize DIR`: kubebuilder's
// `make build-installer` (kustomize edit set image, kustomize build) with
// kustomize's library, so that neither the operator's go.mod nor its
// machine needs kustomize.
func newKustomizeCmd() *cobra.Command {
	var images []string
	var output string
	cmd := &cobra.Command{
		Use:   "kustomize DIR",
		Short: "Render a kustomization (kustomize build) into one YAML stream, e.g. dist/install.yaml",
		Long: `kustomize renders the kustomization in DIR as "kustomize build DIR" does, with
kustomize's own library (sigs.k8s.io/kustomize/api), and prints the objects, or
writes them to the file of --output (its directory is created). --image
NAME=IMAGE replaces the image NAME of every container, as "kustomize edit set
image NAME=IMAGE" would before the build, without changing the kustomization.

A scaffolded operator's "make build-installer IMG=..." runs
  kopf-gen kustomize config/default --image <operator>=$(IMG) -o dist/install.yaml
which gives one file to install the operator with: kubectl apply -f dist/install.yaml.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := packaging.BuildDir(args[0])
			if err != nil {
				return err
			}
			for _, img := range images {
				if err := packaging.SetImage(m, img); err != nil {
					return err
				}
			}
			out, err := m.AsYaml()
			if err != nil {
				return fmt.Errorf("kustomize build %s: %w", args[0], err)
			}
			if output == "" {
				_, err = cmd.OutOrStdout().Write(out)
				return err
			}
			if err := os.MkdirAll(filepath.Dir(output), 0o755); err != nil {
				return err
			}
			return os.WriteFile(output, out, 0o644)
		},
	}
	cmd.Flags().StringArrayVar(&images, "image", nil, "replace the image `NAME=IMAGE` of the containers (repeatable), as kustomize edit set image does")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the objects to `FILE` instead of standard output")
	return cmd
}
