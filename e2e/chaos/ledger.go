// Package chaos is the analysis half of the chaos campaign (`make chaos`,
// e2e/cmd/chaos): it reads what the campaign's operator wrote to its ledger
// (every run of every handler) and what kube-apiserver wrote to its audit
// log (every patch it stored), finds the handlers that ran again after they
// had succeeded, and classifies each such re-run by what the API server had
// stored of that success when the re-run began (see Classify). Its
// TestCampaign runs a small campaign with a fixed seed in `make test`.
package chaos

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Ledger events, as the campaign's operator writes them.
const (
	EventStart     = "start"
	EventSucceeded = "succeeded"
	EventFailed    = "failed"
	EventCancelled = "cancelled"
)

// Entry is one line of the ledger:
//
//	<RFC 3339 time> pid=<pid> <resource>/<namespace>/<name> <handler> <event> retry=<n> rv=<resourceVersion>
type Entry struct {
	Line    int // 1-based line number in the ledger: the order of events
	Time    time.Time
	PID     int
	Object  string // resource/namespace/name
	Handler string
	Event   string
	Retry   int
	RV      string // the resourceVersion of the body the handler was given
	Raw     string
}

// ParseLedger reads a ledger. A line that does not parse is an error, with
// one exception: a last line without its newline (the writer was killed
// mid-write, which a single write(2) of a short line makes unlikely) is
// ignored.
func ParseLedger(r io.Reader) ([]Entry, error) {
	var out []Entry
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if err == io.EOF {
			return out, nil // a partial last line, if any, is dropped
		}
		if err != nil {
			return nil, fmt.Errorf("reading the ledger: %w", err)
		}
		e, err := parseEntry(strings.TrimSuffix(line, "\n"))
		if err != nil {
			return nil, fmt.Errorf("ledger line %d: %w", n, err)
		}
		e.Line = n
		out = append(out, e)
	}
}

func parseEntry(line string) (Entry, error) {
	f := strings.Fields(line)
	if len(f) != 7 {
		return Entry{}, fmt.Errorf("want 7 fields, got %d: %q", len(f), line)
	}
	e := Entry{Object: f[2], Handler: f[3], Event: f[4], Raw: line}
	var err error
	if e.Time, err = time.Parse(time.RFC3339Nano, f[0]); err != nil {
		return Entry{}, fmt.Errorf("time: %w: %q", err, line)
	}
	pid, ok := strings.CutPrefix(f[1], "pid=")
	if e.PID, err = strconv.Atoi(pid); !ok || err != nil {
		return Entry{}, fmt.Errorf("pid: %q", line)
	}
	retry, ok := strings.CutPrefix(f[5], "retry=")
	if e.Retry, err = strconv.Atoi(retry); !ok || err != nil {
		return Entry{}, fmt.Errorf("retry: %q", line)
	}
	if e.RV, ok = strings.CutPrefix(f[6], "rv="); !ok {
		return Entry{}, fmt.Errorf("rv: %q", line)
	}
	if strings.Count(e.Object, "/") != 2 {
		return Entry{}, fmt.Errorf("object is not resource/namespace/name: %q", line)
	}
	switch e.Event {
	case EventStart, EventSucceeded, EventFailed, EventCancelled:
	default:
		return Entry{}, fmt.Errorf("unknown event %q: %q", e.Event, line)
	}
	return e, nil
}
