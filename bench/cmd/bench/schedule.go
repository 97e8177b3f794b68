package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// creation is one object's creation on a schedule: when it was due, when
// its request was sent and when the API server acknowledged it.
type creation struct {
	Name                   string
	Scheduled, Sent, Acked time.Time
	Err                    error
}

// schedule is a fixed creation schedule: object i is due at offset i/rate
// after the start, whatever happens beside it. The same schedule (the same
// offsets) is used for every contender, so the load offered does not
// depend on how fast the contender (or the API server beside it) goes.
type schedule struct {
	rate float64 // creations per second
	n    int
	// pool is how many creations can be in flight at once: enough that a
	// slow API server does not hold back the next creation's start.
	pool int
}

func (s schedule) offset(i int) time.Duration {
	return time.Duration(float64(i) * float64(time.Second) / s.rate)
}

// run creates the objects at their scheduled times, from a pool of
// s.pool goroutines, and returns every creation. A creation that cannot
// start on time (every creator busy) starts late: its lag (sent −
// scheduled) is reported, never hidden.
func (s schedule) run(ctx context.Context, a *api, ns string, objs []string) []creation {
	out := make([]creation, len(objs))
	t0 := time.Now().Add(20 * time.Millisecond) // the pool's start-up is not lag
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(s.pool, len(objs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(objs) {
					return
				}
				c := &out[i]
				c.Name = objs[i]
				c.Scheduled = t0.Add(s.offset(i))
				if d := time.Until(c.Scheduled); d > 0 {
					time.Sleep(d)
				}
				c.Sent = time.Now()
				c.Err = a.create(ctx, ns, c.Name)
				c.Acked = time.Now()
			}
		}()
	}
	wg.Wait()
	return out
}

// timing sums up a scheduled run: latencies from each creation's
// acknowledgement to its result being seen, the makespan (first creation
// sent → last result seen), and how far the creator fell behind.
type timing struct {
	P50, P99, Max float64 // ms, acknowledgement → result
	// SchedP99: ms from the scheduled time to the result (what a client
	// that wanted the object at that time waited).
	SchedP99 float64
	Makespan float64 // s
	// LagP99, LagMax: ms from the scheduled time to the request being sent.
	LagP99, LagMax float64
	// AckP99: ms from sent to acknowledged (the API server's latency for
	// the creations).
	AckP99 float64
	// Rate: the creations acknowledged per second (first sent → last
	// acknowledged).
	Rate float64
	Seen int
}

func quantile(ds []float64, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	sort.Float64s(ds)
	return ds[min(len(ds)-1, max(0, int(math.Ceil(p*float64(len(ds))))-1))]
}

func measure(cs []creation, seenAt func(string) (time.Time, bool)) (timing, error) {
	var t timing
	var lat, sched, lag, ack []float64
	var first, lastSeen, lastAck time.Time
	for _, c := range cs {
		if c.Err != nil {
			return t, fmt.Errorf("creating %s: %w", c.Name, c.Err)
		}
		if first.IsZero() || c.Sent.Before(first) {
			first = c.Sent
		}
		if c.Acked.After(lastAck) {
			lastAck = c.Acked
		}
		lag = append(lag, ms(c.Sent.Sub(c.Scheduled)))
		ack = append(ack, ms(c.Acked.Sub(c.Sent)))
		seen, ok := seenAt(c.Name)
		if !ok {
			continue
		}
		t.Seen++
		if seen.After(lastSeen) {
			lastSeen = seen
		}
		lat = append(lat, math.Max(0, ms(seen.Sub(c.Acked))))
		sched = append(sched, math.Max(0, ms(seen.Sub(c.Scheduled))))
	}
	t.P50, t.P99 = quantile(lat, 0.50), quantile(lat, 0.99)
	t.Max = quantile(lat, 1)
	t.SchedP99 = quantile(sched, 0.99)
	t.LagP99, t.LagMax = quantile(lag, 0.99), quantile(lag, 1)
	t.AckP99 = quantile(ack, 0.99)
	if !first.IsZero() {
		t.Makespan = lastSeen.Sub(first).Seconds()
		if d := lastAck.Sub(first).Seconds(); d > 0 && len(cs) > 1 {
			t.Rate = float64(len(cs)-1) / d
		}
	}
	return t, nil
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// loadSampler samples the machine's load during a pass: the 1-minute
// load average (/proc/loadavg) and the share of all CPUs busy
// (/proc/stat), every second.
type loadSampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	max1 float64
	sum1 float64
	n    int
	busy [2]uint64 // at the start: busy, total jiffies
}

func startLoad() *loadSampler {
	l := &loadSampler{stop: make(chan struct{}), done: make(chan struct{})}
	l.busy[0], l.busy[1] = cpuJiffies()
	l.sample()
	go func() {
		defer close(l.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-tick.C:
				l.sample()
			}
		}
	}()
	return l
}

func (l *loadSampler) sample() {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return
	}
	l.mu.Lock()
	l.sum1 += v
	l.n++
	l.max1 = math.Max(l.max1, v)
	l.mu.Unlock()
}

// end stops the sampling and returns the mean and highest 1-minute load
// average, and the share of the machine's CPU time that was busy.
func (l *loadSampler) end() Load {
	close(l.stop)
	<-l.done
	l.sample()
	busy, total := cpuJiffies()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := Load{Max: l.max1}
	if l.n > 0 {
		out.Mean = l.sum1 / float64(l.n)
	}
	if total > l.busy[1] {
		out.Busy = float64(busy-l.busy[0]) / float64(total-l.busy[1])
	}
	return out
}

// Load is the machine's load during one pass.
type Load struct {
	Mean float64 `json:"mean"` // 1-minute load average, sampled every second
	Max  float64 `json:"max"`
	Busy float64 `json:"busy"` // share of all CPUs' time not idle (/proc/stat)
}

func (l *Load) String() string {
	if l == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f (max %.1f), %.0f %% busy", l.Mean, l.Max, 100*l.Busy)
}

// cpuJiffies returns the busy and total jiffies of all CPUs.
func cpuJiffies() (busy, total uint64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	for i, s := range f[1:] {
		v, _ := strconv.ParseUint(s, 10, 64)
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}
