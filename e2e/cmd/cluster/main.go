// Command cluster runs a local control plane (etcd and kube-apiserver) until
// it receives SIGINT or SIGTERM, for manual use with kubectl and operators:
// `make cluster` starts it in the background and `make cluster-down` stops
// it. It writes an admin kubeconfig to the path given by -kubeconfig and
// removes it on exit. With -controllers, it also runs kube-controller-manager,
// kube-scheduler and kwok (envtest.WithControllers): `make cluster
// CLUSTER_FLAGS=-controllers`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
)

func main() {
	// A flag set of its own: controller-runtime (imported by envtest)
	// registers a global -kubeconfig flag of its own at init.
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", ".cache/cluster/kubeconfig", "where to write the admin kubeconfig")
	controllers := fs.Bool("controllers", false, "also run kube-controller-manager, kube-scheduler and kwok (a simulated node)")
	_ = fs.Parse(os.Args[1:]) // ExitOnError: never returns an error
	var opts []envtest.Option
	if *controllers {
		opts = append(opts, envtest.WithControllers())
	}
	if err := run(*kubeconfig, opts...); err != nil {
		fmt.Fprintf(os.Stderr, "cluster: %v\n", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, opts ...envtest.Option) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cluster.StartDetached(opts...)
	if err != nil {
		return err
	}
	defer c.Stop()
	defer os.Remove(kubeconfig)
	if err := c.WriteKubeconfig(kubeconfig); err != nil {
		return err
	}
	fmt.Printf("The control plane is up at %s; kubeconfig: %s\n", c.Config.Host, kubeconfig)
	<-ctx.Done()
	fmt.Println("Stopping the control plane.")
	return nil
}
