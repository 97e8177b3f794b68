package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, 100 on every Linux the benchmark runs on.
const clockTicks = 100

// contender is a program under test: a separate process, so that its RSS
// and CPU time are its own.
type contender struct {
	Name string // as reported
	Bin  string
	Args []string
	Env  []string
	// Exits: the program exits by itself when done (the ceiling).
	Exits bool
	// DiffBase: the program writes kopf-go's diff-base annotation too (with
	// the status subresource, in a second write), so an object is done
	// when both its result and the annotation are in.
	DiffBase bool
}

// proc is a running contender.
type proc struct {
	c      contender
	cmd    *exec.Cmd
	start  time.Time
	pprof  string // host:port of its instrument endpoint
	exited chan struct{}
	err    error
	log    *os.File
	// peak is the highest VmHWM sampled (rusage's maxrss of a child
	// started by Go counts the parent's RSS until exec, so it is useless).
	peak atomic.Int64
}

func launch(c contender, kubeconfig, logPath string, extraEnv ...string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &proc{c: c, pprof: fmt.Sprintf("127.0.0.1:%d", port), exited: make(chan struct{}), log: logf}
	cmd := exec.Command(c.Bin, c.Args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "BENCH_PPROF="+p.pprof)
	cmd.Env = append(cmd.Env, c.Env...)
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p.cmd = cmd
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.exited:
				return
			case <-tick.C:
				p.memory()
			}
		}
	}()
	return p, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// cpu returns the process's user+system CPU time so far.
func (p *proc) cpu() time.Duration {
	select {
	case <-p.exited:
		return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
	default:
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The command name may contain spaces: fields count from after ')'.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// memory returns VmRSS and the peak RSS (VmHWM) in bytes; after the
// exit, 0 and the last peak sampled.
func (p *proc) memory() (rss, peak int64) {
	select {
	case <-p.exited:
		return 0, p.peak.Load()
	default:
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, p.peak.Load()
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			rss = v * 1024
		case "VmHWM:":
			peak = v * 1024
		}
	}
	for {
		old := p.peak.Load()
		if peak <= old {
			return rss, old
		}
		if p.peak.CompareAndSwap(old, peak) {
			return rss, peak
		}
	}
}

// settle asks the process to collect garbage and return freed memory to
// the OS, then returns its RSS and what the Go runtime reports of itself
// (heap in use, memory obtained from the OS, goroutines).
func (p *proc) settle() (int64, map[string]int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stats := map[string]int64{}
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+p.pprof+"/debug/settle", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, " "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				stats[k] = n
			}
		}
	}
	time.Sleep(200 * time.Millisecond)
	rss, _ := p.memory()
	return rss, stats
}

// fetch saves one of the process's pprof endpoints into a file.
func (p *proc) fetch(path, file string) error {
	resp, err := http.Get("http://" + p.pprof + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// stop sends SIGTERM and waits for the exit (SIGKILL after 20 s). It
// returns the total CPU time and peak RSS.
func (p *proc) stop() (time.Duration, int64) {
	select {
	case <-p.exited:
	default:
		p.memory() // the last sample
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	_, peak := p.memory()
	return p.cpu(), peak
}

// wait waits for a contender that exits by itself.
func (p *proc) wait(timeout time.Duration) error {
	select {
	case <-p.exited:
		return p.err
	case <-time.After(timeout):
		p.stop()
		return fmt.Errorf("%s did not finish in %s", p.c.Name, timeout)
	}
}
