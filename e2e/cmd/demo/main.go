// Command demo shows kopf-go end to end on a local control plane: it starts
// etcd and kube-apiserver, installs the KopfExample CRD, runs an operator
// binary (by default examples/01-minimal, built by `make demo`), creates
// Kopf's example object, waits for the handler's result, prints the
// object's status, and stops everything. It exits 0 only if the handler's
// result arrived.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
)

func main() {
	operatorBin := flag.String("operator", "bin/examples/01-minimal", "the operator binary to run")
	crdPath := flag.String("crd", "examples/crd.yaml", "the CRD manifest")
	objPath := flag.String("object", "examples/obj.yaml", "the object manifest")
	flag.Parse()
	if err := run(*operatorBin, *crdPath, *objPath); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run(operatorBin, crdPath, objPath string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	crd, err := os.ReadFile(crdPath)
	if err != nil {
		return err
	}
	obj, err := os.ReadFile(objPath)
	if err != nil {
		return err
	}

	step("Starting etcd and kube-apiserver")
	c, err := cluster.StartDetached()
	if err != nil {
		return err
	}
	defer func() {
		step("Stopping etcd and kube-apiserver")
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "demo: stopping the control plane: %v\n", err)
		}
	}()
	dir, err := os.MkdirTemp("", "kopf-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := c.WriteKubeconfig(kubeconfig); err != nil {
		return err
	}

	step("Installing the KopfExample CRD")
	if _, err := envtest.Apply(ctx, c.Config, crd); err != nil {
		return err
	}

	step("Running the operator: " + operatorBin + " run -A --standalone --verbose")
	op := exec.Command(operatorBin, "run", "-A", "--standalone", "--verbose", "--kubeconfig", kubeconfig)
	op.Stdout, op.Stderr = os.Stdout, os.Stdout
	op.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := op.Start(); err != nil {
		return fmt.Errorf("starting the operator: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- op.Wait() }()
	defer func() {
		step("Stopping the operator")
		_ = op.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = op.Process.Kill()
			<-exited
		}
	}()

	step("Creating the object default/kopf-example-1")
	if _, err := envtest.Apply(ctx, c.Config, obj); err != nil {
		return err
	}

	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	var got *unstructured.Unstructured
	err = cluster.WaitFor(ctx, 60*time.Second, func(ctx context.Context) (bool, error) {
		select {
		case err := <-exited:
			return false, fmt.Errorf("the operator exited: %v", err)
		default:
		}
		got, err = dyn.Resource(gvr).Namespace("default").Get(ctx, "kopf-example-1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		status, _, _ := unstructured.NestedMap(got.Object, "status")
		return len(status) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the handler's result in the object's status: %w", err)
	}
	time.Sleep(500 * time.Millisecond) // let the operator log the end of its cycle
	status, _ := json.MarshalIndent(got.Object["status"], "", "  ")
	step("The object's status, written by the handler:")
	fmt.Println(string(status))
	return nil
}

func step(msg string) { fmt.Printf("\n==> %s\n", msg) }
