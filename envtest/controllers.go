package envtest

import (
	"context"
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ErrNoControllers is wrapped by the error of Start and StartDetached when
// WithControllers is given and its binaries are missing.
var ErrNoControllers = errors.New("the binaries of WithControllers (kube-controller-manager, kube-scheduler, kwok) are not found")

// controllerBinaries are the binaries that WithControllers starts, from the
// same directory as etcd and kube-apiserver.
var controllerBinaries = []string{"kube-controller-manager", "kube-scheduler", "kwok"}

// controllerNames are kube-controller-manager's controllers that
// WithControllers runs: those that objects' lifecycles depend on (garbage
// collection, namespace deletion, service accounts and their tokens), those
// of the workloads whose pods kwok runs, and the node lifecycle controller,
// which lifts the not-ready taint that a new Node gets once kwok reports it
// Ready (kwok renews its Lease, so it stays Ready). The taint eviction
// controller is not one of them: no pod is evicted.
var controllerNames = []string{
	"garbage-collector-controller", "namespace-controller", "node-lifecycle-controller",
	"serviceaccount-controller", "serviceaccount-token-controller", "root-ca-certificate-publisher-controller",
	"deployment-controller", "replicaset-controller", "replicationcontroller-controller",
	"statefulset-controller", "daemonset-controller", "job-controller", "cronjob-controller",
	"ttl-after-finished-controller", "pod-garbage-collector-controller",
	"endpoints-controller", "endpointslice-controller", "disruption-controller",
}

// NodeName is the name of the Node that WithControllers creates, which kwok
// runs pods on; NodeAnnotation marks it as kwok's (kwok manages the Nodes
// with this annotation and no others).
const (
	NodeName       = "kwok-node-0"
	NodeAnnotation = "kwok.x-k8s.io/node"
)

// kwokStages configures kwok's simulation: see the file's header.
//
//go:embed kwok-stages.yaml
var kwokStages []byte

// WithControllers starts what a cluster has besides its API server, once
// kube-apiserver is up and the CRDs of WithCRDs are served:
//
//   - kube-controller-manager with the controllers that objects'
//     lifecycles depend on: owner references are garbage-collected,
//     namespaces are deleted with their objects, namespaces get their
//     default ServiceAccount and kube-root-ca.crt, Deployments get
//     ReplicaSets and ReplicaSets pods, StatefulSets, DaemonSets, Jobs and
//     CronJobs run, Endpoints and EndpointSlices follow Services, and the
//     node lifecycle controller lifts the not-ready taint of a new Node
//     (not the taint eviction controller: no pod is evicted);
//   - kube-scheduler, which binds pods to nodes;
//   - kwok, which simulates one Node (NodeName): pods scheduled there
//     become Running and Ready (a Job's pods then Succeeded), and are
//     deleted once their deletionTimestamp is set and their finalizers are
//     gone, as a kubelet does; no container runs.
//
// Start returns once the Node is Ready and untainted (pods can be scheduled
// there), the default ServiceAccount exists in the namespace "default" and
// the scheduler is ready. Their binaries are taken from the same directory
// as etcd's and kube-apiserver's; `kopf-gen envtest --controllers` builds
// them. Their logs are in the error when they
// do not start; they stop on Stop, before the API server, and with this
// process. The garbage collector learns of resources (CRDs) installed after
// Start within 30 seconds. The ServiceAccount admission plugin stays off
// (as in envtest without controllers), so pods need no ServiceAccount.
//
// It costs under a second more at start, and about 210 MB of memory and
// little CPU while running: use it in the tests whose behaviour depends on
// it (docs/testing.md).
func WithControllers() Option {
	return func(o *options) { o.controllers = true }
}

// checkControllers fails unless dir holds the binaries of WithControllers.
func checkControllers(dir string) error {
	for _, name := range controllerBinaries {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("%w: %s is missing in %s. Build them there with `kopf-gen envtest --controllers` (with --bin-dir if the directory is not kopf-gen's cache), or leave WithControllers out", ErrNoControllers, name, dir)
		}
	}
	return nil
}

// controllers are the running processes of WithControllers.
type controllers struct {
	dir   string // kubeconfig, CA, kwok's configuration, logs
	procs []*process
}

// startControllers starts kube-controller-manager, kube-scheduler and kwok
// against env's API server, creates kwok's Node, and waits until they
// serve; on failure it stops what it started and returns an error with
// their logs.
func startControllers(ctx context.Context, env *crenvtest.Environment, cfg *rest.Config, assets string) (*controllers, error) {
	dir, err := os.MkdirTemp("", "kopf-envtest-controllers-")
	if err != nil {
		return nil, err
	}
	c := &controllers{dir: dir}
	fail := func(err error) (*controllers, error) {
		logs := c.logs()
		c.stop()
		return nil, fmt.Errorf("WithControllers: %w%s", err, logs)
	}
	files, err := c.writeFiles(env, cfg)
	if err != nil {
		return fail(err)
	}
	schedulerPort, err := freePort()
	if err != nil {
		return fail(err)
	}
	for _, p := range []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{
			"--kubeconfig=" + files.kubeconfig,
			"--leader-elect=false",
			"--controllers=" + strings.Join(controllerNames, ","),
			"--service-account-private-key-file=" + files.saKey,
			"--root-ca-file=" + files.ca,
			"--secure-port=0",
			"--concurrent-gc-syncs=5", "--concurrent-namespace-syncs=5",
		}},
		{"kube-scheduler", []string{
			"--kubeconfig=" + files.kubeconfig,
			"--leader-elect=false",
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(schedulerPort),
			"--cert-dir=" + filepath.Join(dir, "kube-scheduler-certs"),
		}},
		{"kwok", []string{
			"--kubeconfig=" + files.kubeconfig,
			"--config=" + files.kwok,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + NodeAnnotation + "=fake",
			"--node-ip=10.244.0.1", "--cidr=10.244.0.0/16",
		}},
	} {
		proc, err := startProcess(filepath.Join(assets, p.name), p.args, filepath.Join(dir, p.name+".log"))
		if err != nil {
			return fail(err)
		}
		c.procs = append(c.procs, proc)
	}
	if err := c.waitReady(ctx, cfg, schedulerPort); err != nil {
		return fail(err)
	}
	return c, nil
}

// controllerFiles are the files that the processes read.
type controllerFiles struct {
	kubeconfig, ca, saKey, kwok string
}

// writeFiles writes an admin's kubeconfig, the API server's CA (the root CA
// that service accounts' tokens and kube-root-ca.crt carry) and kwok's
// stages; the key that signs service accounts' tokens is the one that
// controller-runtime's envtest gave kube-apiserver (in its CertDir).
func (c *controllers) writeFiles(env *crenvtest.Environment, cfg *rest.Config) (controllerFiles, error) {
	f := controllerFiles{
		kubeconfig: filepath.Join(c.dir, "kubeconfig"),
		ca:         filepath.Join(c.dir, "ca.crt"),
		saKey:      filepath.Join(env.ControlPlane.GetAPIServer().CertDir, "sa-signer.key"),
		kwok:       filepath.Join(c.dir, "kwok.yaml"),
	}
	if _, err := os.Stat(f.saKey); err != nil {
		return f, fmt.Errorf("the API server's service-account signing key: %w", err)
	}
	user, err := env.AddUser(crenvtest.User{Name: "kopf-controllers", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		return f, fmt.Errorf("adding the controllers' user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return f, err
	}
	for path, data := range map[string][]byte{f.kubeconfig: kubeconfig, f.ca: cfg.CAData, f.kwok: kwokStages} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return f, err
		}
	}
	return f, nil
}

// waitReady creates kwok's Node and waits until kwok has made it Ready,
// kube-controller-manager has created the default ServiceAccount, and
// kube-scheduler reports itself ready; it fails at once when a process
// exits.
func (c *controllers) waitReady(ctx context.Context, cfg *rest.Config, schedulerPort int) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, kwokNode(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the Node %s: %w", NodeName, err)
	}
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	readyz := fmt.Sprintf("https://127.0.0.1:%d/readyz", schedulerPort)
	checks := []struct {
		what string
		ok   func() bool
	}{
		{"kwok's Node " + NodeName + " Ready and untainted", func() bool {
			node, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
			return err == nil && nodeReady(node) && len(node.Spec.Taints) == 0
		}},
		{"kube-controller-manager's ServiceAccount default/default", func() bool {
			_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err == nil
		}},
		{"kube-scheduler's " + readyz, func() bool {
			resp, err := insecure.Get(readyz)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}},
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, check := range checks {
		for !check.ok() {
			for _, p := range c.procs {
				if p.exited() {
					return fmt.Errorf("%s exited: %v", p.name, p.err)
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("waiting 60s for %s: not yet", check.what)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// kwokNode is the Node that kwok simulates, as kwok's documentation
// describes one (without its taint: no other node is there to run the
// pods that do not tolerate it).
func kwokNode() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        NodeName,
		Annotations: map[string]string{NodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
		Labels: map[string]string{
			"kubernetes.io/hostname": NodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"kubernetes.io/role": "agent", "node-role.kubernetes.io/agent": "", "type": "kwok",
		},
	}}
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// stop stops the processes, the last started first, and removes the
// directory (with the logs).
func (c *controllers) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(10 * time.Second)
	}
	c.procs = nil
	_ = os.RemoveAll(c.dir)
}

// logs returns the end of each process's log, for an error.
func (c *controllers) logs() string {
	var b strings.Builder
	for _, p := range c.procs {
		data, _ := os.ReadFile(p.log)
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		fmt.Fprintf(&b, "\n--- the last lines of %s's log:\n%s", p.name, strings.Join(lines, "\n"))
	}
	return b.String()
}

// freePort returns a TCP port that is free on the loopback interface now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
