// Command kube-apiserver is the upstream Kubernetes API server, built from the
// Go module proxy so that tests can run against a real control plane on a
// machine where prebuilt binaries cannot be downloaded. It dies with its
// parent process (see internal/lifeline).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"

	"github.com/kopf-go/kopf/tools/controlplane/internal/lifeline"
)

func main() {
	lifeline.Tie()
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
