package sharding_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/e2e/internal/proc"
)

// startReplica starts the shardop binary bin as the replica identity,
// recording its handler runs into record, its log in dir.
func startReplica(t *testing.T, bin, kubeconfig, record, dir, identity string, extra ...string) *proc.Process {
	t.Helper()
	return proc.Start(t, bin, proc.Options{
		Name: identity,
		Log:  filepath.Join(dir, identity+".log"),
		Env:  append(os.Environ(), "SHARDOP_RECORD="+record, "SHARDOP_IDENTITY="+identity),
		Args: append([]string{"run", "-A", "--shards=64", "-v", "--kubeconfig", kubeconfig}, extra...),
	})
}

// run is one line of the record: a handler's invocation or its end.
type run struct {
	event, handler, object, wave string
	pid, retry                   int
	at                           time.Time
}

// audit is the record of every handler run of every replica.
type audit struct{ runs []run }

func readAudit(t *testing.T, path string) audit {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var a audit
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 7 {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimPrefix(f[4], "pid="))
		ns, _ := strconv.ParseInt(strings.TrimPrefix(f[5], "t="), 10, 64)
		retry, _ := strconv.Atoi(strings.TrimPrefix(f[6], "retry="))
		a.runs = append(a.runs, run{event: f[0], handler: f[1], object: f[2], wave: strings.TrimPrefix(f[3], "wave="), pid: pid, retry: retry, at: time.Unix(0, ns)})
	}
	return a
}

// change is one handler's runs for one object and one wave.
type change struct{ invoked, finished []run }

// changes groups the runs of a handler in a wave by object.
func (a audit) changes(handler, wave string) map[string]*change {
	out := map[string]*change{}
	for _, r := range a.runs {
		if r.handler != handler || r.wave != wave {
			continue
		}
		c := out[r.object]
		if c == nil {
			c = &change{}
			out[r.object] = c
		}
		if r.event == "invoked" {
			c.invoked = append(c.invoked, r)
		} else {
			c.finished = append(c.finished, r)
		}
	}
	return out
}
