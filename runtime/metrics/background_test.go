package metrics

import (
	"testing"
	"time"
)

func TestDaemonsAndTimers(t *testing.T) {
	type stop struct {
		handler, kind string
		latency       time.Duration
		orphaned      bool
	}
	type tick struct {
		handler string
		lag     time.Duration
	}
	type want struct {
		name   string
		labels map[string]string
		count  uint64
		sum    float64
	}
	tests := []struct {
		name  string
		stops []stop
		ticks []tick
		want  []want
		none  []want // series that must not exist
	}{
		{
			name:  "a daemon that exits when asked",
			stops: []stop{{"d", "daemon", 1500 * time.Millisecond, false}},
			want:  []want{{"kopf_daemon_stop_seconds", map[string]string{"handler": "d", "kind": "daemon", "outcome": StopExited}, 1, 1.5}},
			none:  []want{{name: "kopf_timer_lag_seconds", labels: map[string]string{"handler": "d"}}},
		},
		{
			name:  "a daemon left orphaned, then one that exits",
			stops: []stop{{"d", "daemon", 60 * time.Second, true}, {"d", "daemon", time.Second, false}},
			want: []want{
				{"kopf_daemon_stop_seconds", map[string]string{"handler": "d", "outcome": StopOrphaned}, 1, 60},
				{"kopf_daemon_stop_seconds", map[string]string{"handler": "d", "outcome": StopExited}, 1, 1},
			},
		},
		{
			name:  "a timer's ticks and its stop",
			ticks: []tick{{"t", 0}, {"t", 250 * time.Millisecond}, {"t", -time.Millisecond}}, // a negative lag counts as none
			stops: []stop{{"t", "timer", 0, false}},
			want: []want{
				{"kopf_timer_lag_seconds", map[string]string{"resource": kex, "handler": "t"}, 3, 0.25},
				{"kopf_daemon_stop_seconds", map[string]string{"handler": "t", "kind": "timer", "outcome": StopExited}, 1, 0},
			},
		},
		{
			name:  "two timers apart",
			ticks: []tick{{"t1", time.Second}, {"t2", 2 * time.Second}, {"t2", 2 * time.Second}},
			want: []want{
				{"kopf_timer_lag_seconds", map[string]string{"handler": "t1"}, 1, 1},
				{"kopf_timer_lag_seconds", map[string]string{"handler": "t2"}, 2, 4},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			for _, tk := range tt.ticks {
				m.TimerTicked(kex, tk.handler, tk.lag)
			}
			for _, s := range tt.stops {
				m.DaemonStopped(kex, s.handler, s.kind, s.latency, s.orphaned)
			}
			for _, w := range tt.want {
				h := histogram(t, m, w.name, w.labels)
				if h.GetSampleCount() != w.count || h.GetSampleSum() != w.sum {
					t.Errorf("%s%v: %d samples, sum %g; want %d, %g", w.name, w.labels, h.GetSampleCount(), h.GetSampleSum(), w.count, w.sum)
				}
			}
			for _, w := range tt.none {
				if f := find(t, m, w.name, w.labels); f != nil {
					t.Errorf("%s%v exists: %v", w.name, w.labels, f)
				}
			}
		})
	}
}

func TestTimerTickAllocatesNothing(t *testing.T) {
	m := New()
	m.TimerTicked(kex, "t", time.Millisecond)
	if n := testing.AllocsPerRun(100, func() { m.TimerTicked(kex, "t", time.Millisecond) }); n != 0 {
		t.Errorf("a tick allocates %g times, want 0", n)
	}
}
