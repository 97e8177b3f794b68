package chaos

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const obj = "kopfexamples/default/ex-0001"

func TestParseLedger(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int // entries
		wantErr string
	}{
		{name: "lines", want: 2, in: "" +
			"2026-11-23T06:28:04.648059982Z pid=7 kopfexamples/default/ex-0001 fast_fn start retry=0 rv=538\n" +
			"2026-11-23T06:28:04.648062786Z pid=7 kopfexamples/default/ex-0001 fast_fn succeeded retry=0 rv=538\n"},
		{name: "a partial last line is dropped", want: 1, in: "" +
			"2026-11-23T06:28:04.648059982Z pid=7 kopfexamples/default/ex-0001 fast_fn start retry=0 rv=538\n" +
			"2026-11-23T06:28:04.648062786Z pid=7 kopfexamples/def"},
		{name: "a bad line is an error", wantErr: "line 1: want 7 fields", in: "garbage\n"},
		{name: "an unknown event is an error", wantErr: `unknown event "ended"`,
			in: "2026-11-23T06:28:04.648059982Z pid=7 kopfexamples/default/ex-0001 fast_fn ended retry=0 rv=538\n"},
		{name: "a bad pid is an error", wantErr: "pid",
			in: "2026-11-23T06:28:04.648059982Z 7 kopfexamples/default/ex-0001 fast_fn start retry=0 rv=538\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLedger(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want {
				t.Fatalf("got %d entries, want %d: %+v", len(got), tt.want, got)
			}
			e := got[0]
			if e.Line != 1 || e.PID != 7 || e.Object != obj || e.Handler != "fast_fn" || e.Event != EventStart || e.Retry != 0 || e.RV != "538" {
				t.Errorf("first entry = %+v", e)
			}
		})
	}
}

// receivedLine is the audit event of a request received, trimmed.
func receivedLine(id, stamp string) string {
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","auditID":"` + id + `","stage":"RequestReceived",` +
		`"requestURI":"/apis/kopf.dev/v1/namespaces/default/kopfexamples/ex-0001","verb":"patch",` +
		`"objectRef":{"resource":"kopfexamples","namespace":"default","name":"ex-0001","apiGroup":"kopf.dev","apiVersion":"v1"},` +
		`"requestReceivedTimestamp":"2026-11-23T06:28:` + stamp + `Z","stageTimestamp":"2026-11-23T06:28:` + stamp + `Z"}`
}

// auditLine is an audit event as kube-apiserver writes it, trimmed.
func auditLine(stamp, sub string, code int, body string) string {
	uri := "/apis/kopf.dev/v1/namespaces/default/kopfexamples/ex-0001"
	ref := `{"resource":"kopfexamples","namespace":"default","name":"ex-0001","apiGroup":"kopf.dev","apiVersion":"v1"`
	if sub != "" {
		uri += "/" + sub
		ref += `,"subresource":"` + sub + `"`
	}
	ref += "}"
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","auditID":"id-` + stamp + `","stage":"ResponseComplete","requestURI":"` + uri +
		`","verb":"patch","objectRef":` + ref + `,"responseStatus":{"metadata":{},"code":` + strconv.Itoa(code) + `},"requestObject":` + body +
		`,"requestReceivedTimestamp":"2026-11-23T06:28:04.000000Z","stageTimestamp":"2026-11-23T06:28:` + stamp + `Z"}`
}

func TestParseAudit(t *testing.T) {
	log := strings.Join([]string{
		receivedLine("id-01.000000", "00.900000"), // answered below
		receivedLine("lost", "06.000000"),         // never answered
		auditLine("01.000000", "status", 200, `{"status":{"fast_fn":{"message":"fast_fn done"},"kopf":null}}`),
		auditLine("02.000000", "", 200, `{"metadata":{"annotations":{"kopf.zalando.org/fast_fn":"{\"started\":\"2026-11-23T06:28:04.648039+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}","kopf.zalando.org/retry_fn":"{\"retries\":1,\"success\":false,\"failure\":false}"}}}`),
		auditLine("03.000000", "", 409, `{"metadata":{"annotations":{"kopf.zalando.org/slow_fn":"{\"success\":true}"}}}`),
		auditLine("04.000000", "", 200, `[{"op":"test","path":"/metadata/resourceVersion","value":"5"}]`),
		auditLine("05.000000", "", 200, `{"metadata":{"annotations":{"kopf.zalando.org/fast_fn":null,"kopf.zalando.org/last-handled-configuration":"{\"spec\":{}}\n"}}}`),
		`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","auditID":"cut`,
	}, "\n")
	writes, bad, err := ParseAudit(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if bad != 1 {
		t.Errorf("bad = %d, want 1 (the cut last line)", bad)
	}
	ws := writes[obj]
	if len(ws) != 4 {
		t.Fatalf("got %d writes, want 3 stored and 1 unanswered (the failed and the JSON patch skipped): %+v", len(ws), ws)
	}
	if w := ws[3]; !w.Unanswered || w.AuditID != "lost" || w.Stored("fast_fn") || !w.Time.Equal(time.Date(2026, 11, 23, 6, 28, 6, 0, time.UTC)) {
		t.Errorf("unanswered patch = %+v", w)
	}
	if got := Unanswered(writes); len(got) != 1 || got[0].AuditID != "lost" {
		t.Errorf("Unanswered = %+v", got)
	}
	if w := ws[0]; !w.Status || !w.Results["fast_fn"] || w.Results["kopf"] || len(w.Successes) != 0 || w.DiffBase {
		t.Errorf("status patch = %+v", w)
	}
	if w := ws[1]; w.Status || !w.Successes["fast_fn"] || w.Successes["retry_fn"] || w.DiffBase {
		t.Errorf("progress patch = %+v", w)
	}
	if w := ws[2]; !w.DiffBase || len(w.Successes) != 0 {
		t.Errorf("final patch = %+v", w)
	}
	if want := time.Date(2026, 11, 23, 6, 28, 1, 0, time.UTC); !ws[0].Time.Equal(want) {
		t.Errorf("time = %s, want %s", ws[0].Time, want)
	}
	if want := time.Date(2026, 11, 23, 6, 28, 4, 0, time.UTC); !ws[0].Received.Equal(want) {
		t.Errorf("received = %s, want %s", ws[0].Received, want)
	}
}

func TestWindowWidths(t *testing.T) {
	at := func(ms int) time.Time {
		return time.Date(2026, 11, 23, 6, 28, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	}
	w := func(status bool, received, done int) Write {
		return Write{Status: status, Received: at(received), Time: at(done)}
	}
	writes := map[string][]Write{
		"a": {w(true, 0, 10), w(false, 12, 20), w(true, 30, 40), w(false, 140, 150)},
		"b": {w(false, 0, 5), w(true, 10, 20)}, // the last status patch: killed before the object patch
		"c": {w(true, 0, 10), {Unanswered: true, Received: at(11), Time: at(11)}},
	}
	got := WindowWidths(writes)
	want := []time.Duration{2 * time.Millisecond, 100 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Errorf("WindowWidths = %v, want %v", got, want)
	}
}

func TestClassify(t *testing.T) {
	at := func(sec int) time.Time { return time.Date(2026, 11, 23, 6, 28, sec, 0, time.UTC) }
	entry := func(line, sec, pid int, handler, event string) Entry {
		return Entry{Line: line, Time: at(sec), PID: pid, Object: obj, Handler: handler, Event: event}
	}
	status := func(sec int, ids ...string) Write {
		w := Write{Time: at(sec), Object: obj, Status: true, Results: map[string]bool{}, Successes: map[string]bool{}}
		for _, id := range ids {
			w.Results[id] = true
		}
		return w
	}
	progress := func(sec int, ids ...string) Write {
		w := Write{Time: at(sec), Object: obj, Results: map[string]bool{}, Successes: map[string]bool{}}
		for _, id := range ids {
			w.Successes[id] = true
		}
		return w
	}
	single := func(sec int, id string) Write { // no subresource: one patch
		w := progress(sec, id)
		w.Results[id] = true
		return w
	}
	// fast_fn runs at 1 s in pid 1 and succeeds; it runs again at 10 s in pid 2.
	runs := []Entry{
		entry(1, 1, 1, "fast_fn", EventStart),
		entry(2, 1, 1, "fast_fn", EventSucceeded),
		entry(3, 10, 2, "fast_fn", EventStart),
		entry(4, 10, 2, "fast_fn", EventSucceeded),
	}
	tests := []struct {
		name   string
		ledger []Entry
		writes []Write
		want   []Class
	}{
		{name: "no re-run", ledger: runs[:2], writes: []Write{status(2, "fast_fn"), progress(3, "fast_fn")}},
		{name: "nothing stored: lost", ledger: runs, want: []Class{Lost}},
		{name: "a failed handler's retry is no re-run", ledger: []Entry{
			entry(1, 1, 1, "retry_fn", EventStart), entry(2, 1, 1, "retry_fn", EventFailed),
			entry(3, 2, 1, "retry_fn", EventStart), entry(4, 2, 1, "retry_fn", EventSucceeded)}},
		{name: "another handler's result: lost", ledger: runs, writes: []Write{status(2, "slow_fn")}, want: []Class{Lost}},
		{name: "status stored, progress not: window", ledger: runs, writes: []Write{status(2, "fast_fn")}, want: []Class{Window}},
		{name: "status and progress stored: outside", ledger: runs, writes: []Write{status(2, "fast_fn"), progress(3, "fast_fn")}, want: []Class{Outside}},
		{name: "diff-base stored: outside", ledger: runs, writes: []Write{{Time: at(3), Object: obj, DiffBase: true}}, want: []Class{Outside}},
		{name: "single patch stored: outside", ledger: runs, writes: []Write{single(2, "fast_fn")}, want: []Class{Outside}},
		{name: "stored after the re-run began: lost", ledger: runs, writes: []Write{status(11, "fast_fn"), progress(12, "fast_fn")}, want: []Class{Lost}},
		{name: "stored at the very moment the re-run began: lost", ledger: runs, writes: []Write{progress(10, "fast_fn")}, want: []Class{Lost}},
		{name: "an unanswered write after the success: unknown", ledger: runs,
			writes: []Write{status(2, "fast_fn"), {Time: at(3), Object: obj, Unanswered: true}}, want: []Class{Unknown}},
		{name: "an unanswered write before the success: no matter", ledger: runs,
			writes: []Write{{Time: at(0), Object: obj, Unanswered: true}, status(2, "fast_fn")}, want: []Class{Window}},
		{name: "an answered write that stored the success beats an unanswered one", ledger: runs,
			writes: []Write{{Time: at(2), Object: obj, Unanswered: true}, progress(3, "fast_fn")}, want: []Class{Outside}},
		{name: "a third run counts again", ledger: append(append([]Entry{}, runs...),
			entry(5, 20, 3, "fast_fn", EventStart)), writes: []Write{status(2, "fast_fn"), progress(15, "fast_fn")},
			want: []Class{Window, Outside}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.ledger, map[string][]Write{obj: tt.writes})
			if len(got) != len(tt.want) {
				t.Fatalf("got %d re-runs, want %d: %v", len(got), len(tt.want), got)
			}
			for i, r := range got {
				if r.Class != tt.want[i] {
					t.Errorf("re-run %d: %s, want %s", i, r, tt.want[i])
				}
				if (r.Class == Lost) != (r.Evidence == nil) {
					t.Errorf("re-run %d: evidence %v with class %s", i, r.Evidence, r.Class)
				}
			}
		})
	}
	got := Classify(runs, nil)
	if len(got) != 1 || got[0].SameProcess() || got[0].Succeeded.Line != 2 || got[0].Start.Line != 3 {
		t.Errorf("re-run after a restart = %+v", got)
	}
}

func TestInterrupted(t *testing.T) {
	e := func(line, pid int, handler, event string) Entry {
		return Entry{Line: line, PID: pid, Object: obj, Handler: handler, Event: event}
	}
	ledger := []Entry{
		e(1, 1, "fast_fn", EventStart), e(2, 1, "fast_fn", EventSucceeded),
		e(3, 1, "slow_fn", EventStart), // killed
		e(4, 2, "slow_fn", EventStart), e(5, 2, "slow_fn", EventCancelled),
		e(6, 2, "retry_fn", EventStart), e(7, 2, "retry_fn", EventFailed),
		e(8, 2, "retry_fn", EventStart), // killed
		e(9, 3, "retry_fn", EventStart), e(10, 3, "retry_fn", EventSucceeded),
	}
	got := Interrupted(ledger)
	if len(got) != 2 || got[0].Line != 3 || got[1].Line != 8 {
		t.Errorf("Interrupted = %+v, want the runs of lines 3 and 8", got)
	}
}

func TestCrashes(t *testing.T) {
	log := strings.Join([]string{
		"[2026-11-23 06:38:19,945] kopf.objects [ERROR ] [default/ex-0060] Handler 'slow_fn' failed with an exception: panic: boom",
		"==================",
		"WARNING: DATA RACE",
		"Write at 0x00c000123 by goroutine 7:",
		"panic: runtime error: invalid memory address or nil pointer dereference",
		"fatal error: concurrent map writes",
		"",
	}, "\n")
	got, err := Crashes(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"3: WARNING: DATA RACE", "5: panic: runtime error: invalid memory address or nil pointer dereference", "6: fatal error: concurrent map writes"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Crashes = %q, want %q", got, want)
	}
}

func TestUnhandled(t *testing.T) {
	handlers := []string{"fast_fn", "slow_fn"}
	done := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{DiffBaseKey: `{"spec":{}}`, "other/x": "y"}},
			"status":   map[string]any{"fast_fn": map[string]any{}, "slow_fn": map[string]any{"message": "m"}},
		}}
	}
	tests := []struct {
		name   string
		change func(*unstructured.Unstructured)
		want   string
	}{
		{name: "fully handled", change: func(*unstructured.Unstructured) {}},
		{name: "a result missing", change: func(o *unstructured.Unstructured) { unstructured.RemoveNestedField(o.Object, "status", "slow_fn") }, want: "no status.slow_fn"},
		{name: "no diff-base", change: func(o *unstructured.Unstructured) { o.SetAnnotations(nil) }, want: "no diff-base"},
		{name: "a bad diff-base", change: func(o *unstructured.Unstructured) { o.SetAnnotations(map[string]string{DiffBaseKey: "null"}) }, want: "not a JSON object"},
		{name: "progress left", change: func(o *unstructured.Unstructured) {
			a := o.GetAnnotations()
			a[AnnotationPrefix+"slow_fn"] = "{}"
			o.SetAnnotations(a)
		}, want: "annotation kopf.zalando.org/slow_fn left"},
		{name: "the touch annotation is no progress", change: func(o *unstructured.Unstructured) {
			a := o.GetAnnotations()
			a[TouchKey] = "2026-11-23T06:47:33.472985+00:00"
			o.SetAnnotations(a)
		}},
		{name: "status.kopf left", change: func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, map[string]any{}, "status", "kopf")
		}, want: "status.kopf left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := done()
			tt.change(o)
			got := strings.Join(Unhandled(o, handlers), "; ")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("Unhandled = %q, want %q", got, tt.want)
			}
			if _, want := o.GetAnnotations()[TouchKey]; TouchLeft(o) != want {
				t.Errorf("TouchLeft = %t, want %t", TouchLeft(o), want)
			}
		})
	}
}
