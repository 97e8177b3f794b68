// Command etcd is the upstream etcd server, built from the Go module proxy at
// the version that kube-apiserver itself depends on. It dies with its parent
// process (see internal/lifeline).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"

	"github.com/kopf-go/kopf/tools/controlplane/internal/lifeline"
)

func main() {
	lifeline.Tie()
	etcdmain.Main(os.Args)
}
