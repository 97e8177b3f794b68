package peering

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/peering"
)

// rawRecord is status.<id> of the KopfPeering as the API server returns
// its JSON, byte for byte ("" if absent).
func rawRecord(t *testing.T, ns, name, id string) string {
	t.Helper()
	hc, err := rest.HTTPClientFor(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("%s/apis/kopf.dev/v1/namespaces/%s/kopfpeerings/%s", strings.TrimSuffix(shared.Config.Host, "/"), ns, name)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	data, err := io.ReadAll(rsp.Body)
	if err != nil || rsp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", url, rsp.StatusCode, err, data)
	}
	var obj struct {
		Status map[string]json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	return string(obj.Status[id])
}

// A peering object as a Python Kopf peer writes it: the wire format's
// literal record (kopf-wire-format.md, data/peering.yaml) is a ghost long
// expired, removed by the kopf-go operator without a pause; a live Kopf
// record of a higher priority pauses it with Kopf's words; its removal
// (Kopf's exit) resumes it; a Kopf peer that dies without removing its
// record stops pausing it once its lifetime is over. The kopf-go
// operator's own record is Kopf's, literally.
func TestKopfWireFormat(t *testing.T) {
	ns := newNamespace(t, "wire")
	newPeering(t, ns, "wire")
	objs := kopftest.NewObjects(t, shared.Config, examples, ns)
	op := kopftest.Start(t, shared.Config, register(nil), peered(ns, "wire", 0, "kopf-go-wire")...)

	// kopf-go's keep-alive record, as the API server stores it.
	var rec string
	waitFor(t, "kopf-go's record", 30*time.Second, func() bool { rec = rawRecord(t, ns, "wire", "kopf-go-wire"); return rec != "" })
	if !regexp.MustCompile(`^\{"lastseen":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00","lifetime":60,"priority":0\}$`).MatchString(rec) {
		t.Errorf("kopf-go's record is not Kopf's: %s", rec)
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(rec), &fields); err != nil || len(fields) != 3 {
		t.Errorf("kopf-go's record has other fields than priority, lifetime, lastseen: %s", rec)
	}

	// The wire format's literal record: lastseen 2026-06-03T12:00:00.123456+00:00,
	// lifetime 60: long dead. Any peer removes it.
	const python = "kopf-python@host/20260603120000/abc"
	patchPeering(t, ns, "wire", `{"status": {"`+python+`": {"priority": 100, "lifetime": 60, "lastseen": "2026-06-03T12:00:00.123456+00:00"}}}`)
	waitFor(t, "the ghost's removal", 30*time.Second, func() bool { return rawRecord(t, ns, "wire", python) == "" })
	if op.CountLog("Pausing operations") != 0 {
		t.Errorf("a ghost paused the operator:\n%s", op.Logs())
	}

	// A live Kopf peer of a higher priority, written as Kopf's touch() does.
	now := peering.IsoFormat(time.Now().UTC())
	patchPeering(t, ns, "wire", `{"status": {"`+python+`": {"priority": 100, "lifetime": 60, "lastseen": "`+now+`"}}}`)
	op.WaitLog("Pausing operations in favour of [<Peer "+python+": priority=100, lifetime=60, lastseen='"+now+"'>].", 30*time.Second)
	objs.Create(example("obj-1"))
	op.WaitLog("["+ns+"/obj-1] The operator is paused: the processing waits for the resume.", 30*time.Second)
	if got := op.Outcomes(kopftest.Match{Name: "obj-1", Handler: "create_fn"}); len(got) != 0 {
		t.Fatalf("the paused operator handled obj-1: %v", got)
	}
	// Kopf's exit: its record is nulled.
	resumed := time.Now()
	patchPeering(t, ns, "wire", `{"status": {"`+python+`": null}}`)
	op.WaitLog("Resuming operations after the pause. Conflicting operators with the same priority are gone.", 30*time.Second)
	if o := op.WaitOutcome(kopftest.Match{Name: "obj-1", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second); o.Time.Before(resumed) {
		t.Errorf("obj-1 was handled at %s, before the Kopf peer left at %s", o.Time, resumed)
	}

	// A Kopf peer killed with its record left (lifetime 3 s): a pause
	// that ends when the record expires, and the record is removed.
	const killed = "kopf-python@host/20260603120000/xyz"
	patchPeering(t, ns, "wire", `{"status": {"`+killed+`": {"priority": 100, "lifetime": 3, "lastseen": "`+peering.IsoFormat(time.Now().UTC())+`"}}}`)
	waitFor(t, "the second pause", 30*time.Second, func() bool { return op.CountLog("Pausing operations in favour of") == 2 })
	waitFor(t, "the resume after the ghost expired", 30*time.Second, func() bool { return op.CountLog("Resuming operations after the pause.") == 2 })
	waitFor(t, "the expired record's removal", 30*time.Second, func() bool { return rawRecord(t, ns, "wire", killed) == "" })

	// On exit, kopf-go removes its own record, as Kopf does.
	if err := op.Stop(); err != nil {
		t.Fatal(err)
	}
	if rec := rawRecord(t, ns, "wire", "kopf-go-wire"); rec != "" {
		t.Errorf("kopf-go's record is left after its exit: %s", rec)
	}
}
