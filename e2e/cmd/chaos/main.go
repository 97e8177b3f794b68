// Command chaos is the chaos campaign of `make chaos`: it starts a local
// control plane (etcd and kube-apiserver, with an audit log of every write
// to kopf.dev objects), creates KopfExample objects (status subresource)
// and KopfPlain objects (no subresource) at a steady pace, and runs the
// campaign's operator (e2e/cmd/chaos/operator: three creation handlers per
// object, one slow, one retried once) while SIGKILLing it at random moments
// and restarting it at once, killing and restarting kube-apiserver, and
// pausing kube-apiserver (SIGSTOP, then SIGCONT) for longer than the
// operator's watch inactivity timeout. Then it lets the last operator
// finish and checks:
//
//   - every object is fully handled: the three results in status, a
//     diff-base stored, no progress left;
//   - every handler succeeded at least once (the ledger says so);
//   - no handler ran again after the object itself recorded its success
//     ("outside" re-runs, chaos.Classify), which would be a bug;
//   - no operator process died of a panic or a fatal error, or reported a
//     data race (when built with -race);
//   - every pause of kube-apiserver made the running operator give up a
//     silent watch (its log says so) and the operator went on after it.
//
// Re-runs in the documented crash window (the status patch stored, the
// object patch not) and re-runs of successes never stored are counted and
// reported, and are not failures. The exit code is 0 if every check
// passes, 1 if one fails, 2 if the campaign could not run.
//
// The RNG seed is printed; -seed repeats a campaign's schedule (the
// timing of the machine still varies). Files go to -work: the ledger, the
// audit log, each operator process's log, reruns.txt and summary.txt.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/e2e/chaos"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
)

// plainCRD is KopfExample's twin without the status subresource, so that
// the status and the progress are written in one patch: no crash window.
//
//go:embed plaincrd.yaml
var plainCRD []byte

// handlers are the campaign operator's handler ids.
var handlers = []string{"fast_fn", "slow_fn", "retry_fn"}

const namespace = "default"

type config struct {
	examples, plains  int
	kills, restarts   int
	pauses            int
	seed              uint64
	operator, work    string
	operatorFlags     string
	minUp, maxUp      time.Duration
	minDown, maxDown  time.Duration
	minPause          time.Duration
	maxPause          time.Duration
	inactivity        time.Duration
	createConcurrency int
	createOver        time.Duration
	settle            time.Duration
	finalUp           time.Duration
}

func main() {
	var c config
	flag.IntVar(&c.examples, "n", 1000, "KopfExample objects (status subresource) to create")
	flag.IntVar(&c.plains, "plain", 200, "KopfPlain objects (no status subresource) to create")
	flag.IntVar(&c.kills, "kills", 50, "times to SIGKILL the operator (it is restarted at once)")
	flag.IntVar(&c.restarts, "restarts", 5, "times to restart kube-apiserver")
	flag.IntVar(&c.pauses, "pauses", 5, "times to pause kube-apiserver (SIGSTOP, then SIGCONT) for longer than -inactivity")
	flag.DurationVar(&c.inactivity, "inactivity", 5*time.Second, "the operator's watch inactivity timeout (settings.Watching.InactivityTimeout, default 70 s in operators)")
	flag.DurationVar(&c.minPause, "min-pause", 8*time.Second, "least time kube-apiserver stays paused (more than -inactivity)")
	flag.DurationVar(&c.maxPause, "max-pause", 12*time.Second, "most time kube-apiserver stays paused")
	flag.Uint64Var(&c.seed, "seed", 0, "seed of the schedule's RNG (0: from the clock; printed)")
	flag.StringVar(&c.operator, "operator", "", "the campaign operator's binary (default: built from ./cmd/chaos/operator into -work)")
	flag.StringVar(&c.operatorFlags, "operator-flags", "-v", "extra flags of `operator run -A --standalone`")
	flag.StringVar(&c.work, "work", ".cache/chaos", "directory of the campaign's files (emptied first)")
	flag.DurationVar(&c.minUp, "min-up", 200*time.Millisecond, "least time between an operator's start (or an API server restart) and the next disturbance")
	flag.DurationVar(&c.maxUp, "max-up", 8*time.Second, "most time between an operator's start (or an API server restart) and the next disturbance")
	flag.DurationVar(&c.minDown, "min-down", time.Second, "least time kube-apiserver stays down")
	flag.DurationVar(&c.maxDown, "max-down", 5*time.Second, "most time kube-apiserver stays down")
	flag.IntVar(&c.createConcurrency, "create-concurrency", 16, "objects created at once")
	flag.DurationVar(&c.createOver, "create-over", 0, "spread the creations over this time (0: 90% of the disturbances' expected duration)")
	flag.DurationVar(&c.settle, "settle", 10*time.Minute, "after the last disturbance, how long the operator has to handle every object")
	flag.DurationVar(&c.finalUp, "final-up", 10*time.Second, "least uptime of the last operator before it is stopped, so that its start-up is checked too")
	flag.Parse()
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, c, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
	}
	os.Exit(code)
}

// campaign is the state of a running campaign.
type campaign struct {
	config
	out       io.Writer
	began     time.Time
	rng       *rand.Rand
	cluster   *cluster.Cluster
	dyn       dynamic.Interface
	ledger    string
	audit     string
	kubecfg   string
	objects   []object
	operators []*process // every operator process, in order
	created   chan struct{}
	lastExit  string // how the last operator ended on SIGTERM
	killed    int    // operator kills done
	restarted int    // kube-apiserver restarts done
	stalls    []int  // by pause done: the silent watches the operator gave up meanwhile
	paused    bool   // kube-apiserver is frozen now
}

// object is one object of the campaign.
type object struct {
	gvr  schema.GroupVersionResource
	kind string
	name string
}

func (o object) key() string { return o.gvr.Resource + "/" + namespace + "/" + o.name }

var (
	examplesGVR = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	plainsGVR   = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfplains"}
)

// run runs the campaign and returns the exit code; the error says why the
// campaign could not run (code 2).
func run(ctx context.Context, cfg config, out io.Writer) (int, error) {
	if cfg.maxUp < cfg.minUp || cfg.maxDown < cfg.minDown || cfg.minUp < 0 || cfg.minDown < 0 {
		return 2, fmt.Errorf("want 0 <= -min-up <= -max-up and 0 <= -min-down <= -max-down")
	}
	if cfg.kills < 0 || cfg.restarts < 0 || cfg.pauses < 0 || cfg.examples < 0 || cfg.plains < 0 || cfg.createConcurrency < 1 {
		return 2, fmt.Errorf("want -n, -plain, -kills, -restarts, -pauses >= 0 and -create-concurrency >= 1")
	}
	if cfg.maxPause < cfg.minPause || cfg.inactivity <= 0 || (cfg.pauses > 0 && cfg.minPause <= cfg.inactivity) {
		return 2, fmt.Errorf("want -inactivity > 0 and -inactivity < -min-pause <= -max-pause: a pause must outlast the watch inactivity timeout")
	}
	c := &campaign{config: cfg, out: out, rng: rand.New(rand.NewPCG(cfg.seed, cfg.seed^0x9e3779b97f4a7c15))}
	defer func() {
		for _, p := range c.operators {
			p.kill()
		}
		if c.cluster == nil {
			return
		}
		if c.paused {
			_ = c.cluster.ResumeAPIServer()
		}
		if err := c.cluster.Stop(); err != nil {
			c.logf("stopping the control plane: %v", err)
		}
	}()
	if err := c.prepare(ctx); err != nil {
		return 2, err
	}
	if err := c.disturb(ctx); err != nil {
		return 2, err
	}
	if err := c.settleDown(ctx); err != nil {
		return 2, err
	}
	return c.report(ctx)
}

func (c *campaign) logf(format string, args ...any) {
	d := time.Duration(0)
	if !c.began.IsZero() {
		d = time.Since(c.began)
	}
	fmt.Fprintf(c.out, "[%6.1fs] %s\n", d.Seconds(), fmt.Sprintf(format, args...))
}

// prepare empties the work directory, builds the operator if needed,
// starts the control plane with its audit log and applies the CRDs.
func (c *campaign) prepare(ctx context.Context) error {
	work, err := filepath.Abs(c.work)
	if err != nil {
		return err
	}
	c.work = work
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "chaos: seed %d; %d KopfExample + %d KopfPlain objects; %d operator kills; %d kube-apiserver restarts; %d kube-apiserver pauses of %s-%s (watch inactivity timeout %s); files in %s\n",
		c.seed, c.examples, c.plains, c.kills, c.restarts, c.pauses, c.minPause, c.maxPause, c.inactivity, work)
	if c.operator == "" {
		c.operator = filepath.Join(work, "operator")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", c.operator, "./cmd/chaos/operator")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building the operator (run from e2e/, or pass -operator): %w\n%s", err, out)
		}
	}
	policy := filepath.Join(work, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(chaos.AuditPolicy), 0o644); err != nil {
		return err
	}
	c.audit = filepath.Join(work, "audit.log")
	c.ledger = filepath.Join(work, "ledger")
	c.kubecfg = filepath.Join(work, "kubeconfig")
	cl, err := cluster.StartDetached(
		envtest.WithAPIServerFlag("audit-policy-file", policy),
		envtest.WithAPIServerFlag("audit-log-path", c.audit),
		envtest.WithAPIServerFlag("audit-log-maxsize", "100000"), // MB: never rotate
		envtest.WithAPIServerFlag("audit-log-mode", "blocking"),
	)
	if err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	c.cluster = cl
	c.dyn = dynamic.NewForConfigOrDie(c.cluster.Config)
	if err := c.cluster.WriteKubeconfig(c.kubecfg); err != nil {
		return err
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	crd, err := os.ReadFile(filepath.Join(root, "examples", "crd.yaml"))
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, m := range [][]byte{crd, plainCRD} {
		if _, err := envtest.Apply(actx, c.cluster.Config, m); err != nil {
			return fmt.Errorf("applying the CRDs: %w", err)
		}
	}
	for i := range c.examples {
		c.objects = append(c.objects, object{examplesGVR, "KopfExample", fmt.Sprintf("ex-%04d", i)})
	}
	for i := range c.plains {
		c.objects = append(c.objects, object{plainsGVR, "KopfPlain", fmt.Sprintf("plain-%04d", i)})
	}
	c.rng.Shuffle(len(c.objects), func(i, j int) { c.objects[i], c.objects[j] = c.objects[j], c.objects[i] })
	return nil
}

// disturbance is one of the campaign's faults.
type disturbance int

const (
	kill    disturbance = iota // SIGKILL the operator, start it again
	restart                    // kill kube-apiserver, start it again
	pause                      // SIGSTOP kube-apiserver, then SIGCONT
)

// disturb starts the operator and the creations, then kills the operator,
// restarts kube-apiserver and pauses it in a random order, each after a
// random time since the previous disturbance.
func (c *campaign) disturb(ctx context.Context) error {
	c.began = time.Now()
	if err := c.startOperator(); err != nil {
		return err
	}
	meanGap := (c.minUp + c.maxUp) / 2
	over := c.createOver
	if over == 0 {
		// 90% of the disturbances' expected duration (kube-apiserver takes
		// about 4 s to start here), so that handlers run at most of them
		// and the last few hit an operator finishing the last objects.
		phase := time.Duration(c.kills+c.restarts+c.pauses)*meanGap +
			time.Duration(c.restarts)*((c.minDown+c.maxDown)/2+4*time.Second) +
			time.Duration(c.pauses)*((c.minPause+c.maxPause)/2)
		over = phase * 9 / 10
	}
	c.created = make(chan struct{})
	go c.create(ctx, over)

	// Restarts first, then kills, then pauses, before the shuffle: with
	// -pauses 0, a seed gives the schedule it gave before pauses existed.
	var events []disturbance
	for _, d := range []struct {
		kind disturbance
		n    int
	}{{restart, c.restarts}, {kill, c.kills}, {pause, c.pauses}} {
		for range d.n {
			events = append(events, d.kind)
		}
	}
	c.rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	last := time.Now()
	for _, ev := range events {
		gap := c.minUp + time.Duration(c.rng.Int64N(int64(c.maxUp-c.minUp)+1))
		if err := sleep(ctx, time.Until(last.Add(gap))); err != nil {
			return err
		}
		var err error
		switch ev {
		case kill:
			err = c.killOperator(ctx)
		case restart:
			err = c.restartAPIServer(ctx)
		case pause:
			err = c.pauseAPIServer(ctx)
		}
		if err != nil {
			return err
		}
		last = time.Now()
	}
	return nil
}

// killOperator SIGKILLs the operator and starts the next one at once.
func (c *campaign) killOperator(ctx context.Context) error {
	c.killed++
	p := c.operators[len(c.operators)-1]
	up := time.Since(p.started)
	p.kill()
	if err := c.startOperator(); err != nil {
		return err
	}
	c.logf("kill %d/%d: pid %d SIGKILLed after %s of uptime, pid %d started; %s",
		c.killed, c.kills, p.cmd.Process.Pid, up.Truncate(time.Millisecond), c.operators[len(c.operators)-1].cmd.Process.Pid, c.progress(ctx))
	return nil
}

// restartAPIServer kills kube-apiserver, keeps it down for a random time
// and starts it again.
func (c *campaign) restartAPIServer(ctx context.Context) error {
	c.restarted++
	down := c.minDown + time.Duration(c.rng.Int64N(int64(c.maxDown-c.minDown)+1))
	if err := c.cluster.StopAPIServer(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	if err := sleep(ctx, down); err != nil {
		return err
	}
	t0 := time.Now()
	if err := c.cluster.StartAPIServer(); err != nil {
		return fmt.Errorf("starting kube-apiserver: %w", err)
	}
	c.logf("kube-apiserver restart %d/%d: down %s, up again in %s; %s",
		c.restarted, c.restarts, down.Truncate(time.Millisecond), time.Since(t0).Truncate(time.Millisecond), c.progress(ctx))
	return nil
}

// pauseAPIServer freezes kube-apiserver (SIGSTOP) for a random time longer
// than the operator's watch inactivity timeout, then lets it go on
// (SIGCONT), and counts the operator's log lines that tell of a silent
// watch given up meanwhile (watchStalled). The operator is given some
// uptime first, so that its watches are open when the pause begins.
func (c *campaign) pauseAPIServer(ctx context.Context) error {
	p := c.operators[len(c.operators)-1]
	if err := sleep(ctx, time.Until(p.started.Add(pauseAfterStart))); err != nil {
		return err
	}
	d := c.minPause + time.Duration(c.rng.Int64N(int64(c.maxPause-c.minPause)+1))
	before, err := c.countLog(p, watchStalled)
	if err != nil {
		return err
	}
	if err := c.cluster.PauseAPIServer(); err != nil {
		return fmt.Errorf("pausing kube-apiserver: %w", err)
	}
	c.paused = true
	slept := sleep(ctx, d)
	if err := c.cluster.ResumeAPIServer(); err != nil { // even if ctx is done: never leave it frozen
		return fmt.Errorf("resuming kube-apiserver: %w", err)
	}
	c.paused = false
	if slept != nil {
		return slept
	}
	after, err := c.countLog(p, watchStalled)
	if err != nil {
		return err
	}
	c.stalls = append(c.stalls, after-before)
	c.logf("kube-apiserver pause %d/%d: frozen for %s; the operator (pid %d) gave up %d silent watch(es) meanwhile; %s",
		len(c.stalls), c.pauses, d.Truncate(time.Millisecond), p.cmd.Process.Pid, after-before, c.progress(ctx))
	return nil
}

// watchStalled is in the operator's log line of a watch given up for its
// silence (settings.Watching.InactivityTimeout).
const watchStalled = "has been silent for"

// pauseAfterStart is the least uptime of the operator when a pause
// begins: time enough to open its watches.
const pauseAfterStart = 3 * time.Second

// countLog counts the lines of an operator process's log that contain s.
func (c *campaign) countLog(p *process, s string) (int, error) {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return 0, err
	}
	return strings.Count(string(data), s), nil
}

// settleDown waits for the creations to end and every object to be
// handled, then stops the operator with SIGTERM.
func (c *campaign) settleDown(ctx context.Context) error {
	select {
	case <-c.created:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.logf("every disturbance done and every object created; waiting up to %s for the operator to handle them", c.settle)
	deadline := time.Now().Add(c.settle)
	lastLog := time.Now()
	p := c.operators[len(c.operators)-1]
	for {
		n, err := c.handled(ctx)
		if err == nil && n == len(c.objects) && time.Since(p.started) >= c.finalUp {
			break
		}
		if time.Now().After(deadline) {
			c.logf("not every object is handled after %s: %s", c.settle, c.progress(ctx))
			break
		}
		if time.Since(lastLog) > 15*time.Second {
			c.logf("%s", c.progress(ctx))
			lastLog = time.Now()
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			return err
		}
	}
	if err := p.terminate(30 * time.Second); err != nil {
		c.lastExit = err.Error()
	} else {
		c.lastExit = fmt.Sprintf("exit code %d", p.cmd.ProcessState.ExitCode())
	}
	c.logf("the last operator (pid %d) is stopped: %s", p.cmd.Process.Pid, c.lastExit)
	return nil
}

// create creates every object, spread evenly over the given time, retrying
// each until it exists (the API server may be down meanwhile).
func (c *campaign) create(ctx context.Context, over time.Duration) {
	defer close(c.created)
	todo := make(chan object)
	var wg sync.WaitGroup
	for range c.createConcurrency {
		wg.Go(func() {
			for o := range todo {
				c.createOne(ctx, o)
			}
		})
	}
	step := over / time.Duration(max(len(c.objects), 1))
	start := time.Now()
	for i, o := range c.objects {
		if sleep(ctx, time.Until(start.Add(time.Duration(i)*step))) != nil {
			break
		}
		todo <- o
	}
	close(todo)
	wg.Wait()
}

func (c *campaign) createOne(ctx context.Context, o object) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": o.gvr.GroupVersion().String(),
		"kind":       o.kind,
		"metadata":   map[string]any{"name": o.name},
		"spec":       map[string]any{"duration": "1m", "field": "value", "items": []any{"item1", "item2"}},
	}}
	for {
		_, err := c.dyn.Resource(o.gvr).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) || ctx.Err() != nil {
			return
		}
		_ = sleep(ctx, 500*time.Millisecond) // the API server is restarting
	}
}

// handled counts the objects that are fully handled.
func (c *campaign) handled(ctx context.Context) (int, error) {
	n := 0
	for _, gvr := range []schema.GroupVersionResource{examplesGVR, plainsGVR} {
		list, err := c.dyn.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		for i := range list.Items {
			if len(chaos.Unhandled(&list.Items[i], handlers)) == 0 {
				n++
			}
		}
	}
	return n, nil
}

func (c *campaign) progress(ctx context.Context) string {
	n, err := c.handled(ctx)
	if err != nil {
		return fmt.Sprintf("handled: unknown (%v)", err)
	}
	return fmt.Sprintf("handled %d/%d", n, len(c.objects))
}

// report reads the ledger and the audit log, checks the objects and
// prints the summary; it returns the exit code.
func (c *campaign) report(ctx context.Context) (int, error) {
	duration := time.Since(c.began)
	f, err := os.Open(c.ledger)
	if err != nil {
		return 2, err
	}
	ledger, err := chaos.ParseLedger(f)
	f.Close()
	if err != nil {
		return 2, err
	}
	f, err = os.Open(c.audit)
	if err != nil {
		return 2, err
	}
	writes, bad, err := chaos.ParseAudit(f)
	f.Close()
	if err != nil {
		return 2, err
	}

	var unhandled, touched []string
	for _, o := range c.objects {
		obj, err := c.dyn.Resource(o.gvr).Namespace(namespace).Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			unhandled = append(unhandled, fmt.Sprintf("%s: %v", o.key(), err))
			continue
		}
		if why := chaos.Unhandled(obj, handlers); len(why) > 0 {
			unhandled = append(unhandled, fmt.Sprintf("%s: %s", o.key(), strings.Join(why, ", ")))
		}
		if chaos.TouchLeft(obj) {
			touched = append(touched, fmt.Sprintf("%s: %s=%s (resourceVersion %s)", o.key(), chaos.TouchKey, obj.GetAnnotations()[chaos.TouchKey], obj.GetResourceVersion()))
		}
	}
	keys := make([]string, len(c.objects))
	for i, o := range c.objects {
		keys[i] = o.key()
	}
	missing := chaos.Missing(ledger, keys, handlers)
	var crashes []string
	for i := range c.operators {
		name := fmt.Sprintf("operator-%02d.log", i+1)
		f, err := os.Open(filepath.Join(c.work, name))
		if err != nil {
			return 2, err
		}
		lines, err := chaos.Crashes(f)
		f.Close()
		if err != nil {
			return 2, fmt.Errorf("%s: %w", name, err)
		}
		for _, l := range lines {
			crashes = append(crashes, name+":"+l)
		}
	}

	reruns := chaos.Classify(ledger, writes)
	epoch := map[int]int{}
	for i, p := range c.operators {
		epoch[p.cmd.Process.Pid] = i + 1
	}
	var lines []string
	for _, r := range reruns {
		lines = append(lines, fmt.Sprintf("%s (operator #%d -> #%d)", r, epoch[r.Succeeded.PID], epoch[r.Start.PID]))
	}
	if err := os.WriteFile(filepath.Join(c.work, "reruns.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return 2, err
	}

	starts := 0
	for _, e := range ledger {
		if e.Event == chaos.EventStart {
			starts++
		}
	}
	quiet := 0 // pauses that did not outlast a watch's inactivity timeout: they tested nothing
	for _, n := range c.stalls {
		if n == 0 {
			quiet++
		}
	}
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "seed\t%d\n", c.seed)
	fmt.Fprintf(tw, "duration\t%s\n", duration.Truncate(time.Second))
	fmt.Fprintf(tw, "objects\t%d KopfExample (status subresource) + %d KopfPlain (no subresource)\n", c.examples, c.plains)
	fmt.Fprintf(tw, "operator SIGKILLs\t%d (%d operator processes)\n", len(c.operators)-1, len(c.operators))
	fmt.Fprintf(tw, "kube-apiserver restarts\t%d\n", c.restarted)
	fmt.Fprintf(tw, "kube-apiserver pauses (watch inactivity timeout %s)\t%d, silent watches given up during each: %v\n", c.inactivity, len(c.stalls), c.stalls)
	fmt.Fprintf(tw, "pauses during which no watch was given up\t%d\n", quiet)
	fmt.Fprintf(tw, "handler runs (ledger starts)\t%d\n", starts)
	fmt.Fprintf(tw, "handler runs cut short by a SIGKILL\t%d\n", len(chaos.Interrupted(ledger)))
	fmt.Fprintf(tw, "objects not fully handled\t%d\n", len(unhandled))
	fmt.Fprintf(tw, "handlers that never succeeded\t%d\n", len(missing))
	fmt.Fprintf(tw, "touch annotations left (not a failure)\t%d\n", len(touched))
	fmt.Fprintf(tw, "panics, fatal errors, data races in operator logs\t%d\n", len(crashes))
	fmt.Fprintf(tw, "the last operator's exit on SIGTERM\t%s\n", c.lastExit)
	fmt.Fprintf(tw, "unreadable audit lines\t%d\n", bad)
	fmt.Fprintf(tw, "patches never answered (kube-apiserver killed)\t%d\n", len(chaos.Unanswered(writes)))
	if widths := chaos.WindowWidths(writes); len(widths) > 0 {
		q := func(p float64) time.Duration {
			return widths[int(p*float64(len(widths)-1))].Round(100 * time.Microsecond)
		}
		fmt.Fprintf(tw, "crash window (status stored to object patch received)\tmedian %s, p90 %s, p99 %s, max %s over %d cycles\n",
			q(0.5), q(0.9), q(0.99), q(1), len(widths))
	}
	fmt.Fprintf(tw, "\t\n")
	fmt.Fprintf(tw, "re-runs of succeeded handlers\tKopfExample\tKopfPlain\n")
	type row struct {
		label string
		class chaos.Class
		same  int // -1: both, 0: after a kill, 1: in the same process
	}
	rows := []row{
		{"  total", "", -1},
		{"  success never stored, after a kill", chaos.Lost, 0},
		{"  success never stored, same process", chaos.Lost, 1},
		{"  in the crash window, after a kill", chaos.Window, 0},
		{"  in the crash window, same process", chaos.Window, 1},
		{"  after a patch never answered (maybe stored)", chaos.Unknown, -1},
		{"  outside the window (bugs)", chaos.Outside, -1},
	}
	for _, rw := range rows {
		fmt.Fprintf(tw, "%s", rw.label)
		for _, res := range []string{"kopfexamples", "kopfplains"} {
			n := 0
			for _, r := range reruns {
				if strings.HasPrefix(r.Start.Object, res+"/") && (rw.class == "" || r.Class == rw.class) &&
					(rw.same < 0 || r.SameProcess() == (rw.same == 1)) {
					n++
				}
			}
			fmt.Fprintf(tw, "\t%d", n)
		}
		fmt.Fprintf(tw, "\n")
	}
	tw.Flush()
	summary := sb.String()
	counts := chaos.Counts(reruns)
	failed := len(unhandled) > 0 || len(missing) > 0 || counts[chaos.Outside] > 0 || len(crashes) > 0 || quiet > 0
	verdict := "PASS: every object fully handled, no handler re-run after its success was recorded in the object, every pause outlasted a watch"
	if failed {
		verdict = "FAIL"
	}
	summary += verdict + "\n"
	fmt.Fprintf(c.out, "\n%s", summary)
	for _, u := range first(unhandled, 20) {
		fmt.Fprintf(c.out, "not fully handled: %s\n", u)
	}
	for _, l := range first(crashes, 20) {
		fmt.Fprintf(c.out, "in an operator's log: %s\n", l)
	}
	for _, l := range first(touched, 20) {
		fmt.Fprintf(c.out, "touch annotation left: %s\n", l)
	}
	for _, m := range first(missing, 20) {
		fmt.Fprintf(c.out, "never succeeded: %s\n", m)
	}
	for _, l := range lines {
		if strings.Contains(l, ": "+string(chaos.Outside)+";") {
			fmt.Fprintf(c.out, "re-run outside the window: %s\n", l)
		}
	}
	fmt.Fprintf(c.out, "every re-run: %s\n", filepath.Join(c.work, "reruns.txt"))
	if err := os.WriteFile(filepath.Join(c.work, "summary.txt"), []byte(summary), 0o644); err != nil {
		return 2, err
	}
	if failed {
		return 1, nil
	}
	return 0, nil
}

func first(s []string, n int) []string { return s[:min(len(s), n)] }

// sleep waits for d or the context's end.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// process is one operator process.
type process struct {
	cmd     *exec.Cmd
	log     string // the path of its log
	started time.Time
	done    chan struct{}
}

// startOperator starts the next operator process, logging to
// operator-NN.log in the work directory.
func (c *campaign) startOperator() error {
	n := len(c.operators) + 1
	path := filepath.Join(c.work, fmt.Sprintf("operator-%02d.log", n))
	log, err := os.Create(path)
	if err != nil {
		return err
	}
	args := append([]string{"run", "-A", "--standalone", "--kubeconfig", c.kubecfg}, strings.Fields(c.operatorFlags)...)
	cmd := exec.Command(c.operator, args...)
	cmd.Env = append(os.Environ(), "CHAOS_LEDGER="+c.ledger, "CHAOS_INACTIVITY_TIMEOUT="+c.inactivity.String())
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the campaign
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting the operator: %w", err)
	}
	p := &process{cmd: cmd, log: path, started: time.Now(), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	c.operators = append(c.operators, p)
	return nil
}

// kill SIGKILLs the process (if it still runs) and waits for its end.
func (p *process) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// terminate sends SIGTERM and waits up to timeout for the exit, then
// SIGKILLs the process.
func (p *process) terminate(timeout time.Duration) error {
	select {
	case <-p.done:
		return fmt.Errorf("it had exited already (code %d)", p.cmd.ProcessState.ExitCode())
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		p.kill()
		return errors.New("it did not exit in " + timeout.String() + " after SIGTERM; killed")
	}
}
