package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Kopf's annotation names, as the operator writes them by default.
const (
	AnnotationPrefix = "kopf.zalando.org/"
	DiffBaseKey      = AnnotationPrefix + "last-handled-configuration"
)

// AuditPolicy is a kube-apiserver audit policy that records, with their
// request bodies, the writes to kopf.dev objects, and nothing else: each
// when it is received (without its body: the server has not read it yet)
// and when it is answered. ParseAudit reads the log it produces
// (--audit-log-format=json).
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["ResponseStarted", "Panic"]
rules:
  - level: Request
    verbs: ["create", "update", "patch", "delete"]
    resources:
      - group: kopf.dev
  - level: None
`

// Write is a merge patch of an object that the API server stored (its
// response was 2xx), reduced to what it stored of the handlers' outcomes.
type Write struct {
	Time     time.Time // when the response completed (the audit stage time)
	Received time.Time // when the request was received
	Object   string    // resource/namespace/name
	// Status: the patch went to the status subresource.
	Status bool
	// Results are the handler ids with a result in the patch's status.
	Results map[string]bool
	// Successes are the handler ids whose progress record in the patch's
	// annotations says success (Kopf's annotation progress storage).
	Successes map[string]bool
	// DiffBase: the patch stores a diff-base (the cause is done).
	DiffBase bool
	// Unanswered: the request was received and never answered, because
	// kube-apiserver was killed meanwhile. Whether it was stored is not
	// known, nor what it held (a received event has no body): Results,
	// Successes and DiffBase are empty, and Time is when it was received.
	Unanswered bool
	AuditID    string
}

// Stored reports whether the write stores handler id's success in the
// object proper (not only in the status subresource): a progress record
// that says success, a result in the object's own patch, or a diff-base.
func (w Write) Stored(id string) bool {
	return w.Successes[id] || w.DiffBase || (!w.Status && w.Results[id])
}

type auditEvent struct {
	AuditID   string `json:"auditID"`
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestObject            json.RawMessage `json:"requestObject"`
	RequestReceivedTimestamp time.Time       `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time       `json:"stageTimestamp"`
}

// mergePatch is the part of a patch that tells the handlers' outcomes.
type mergePatch struct {
	Metadata struct {
		Annotations map[string]*string `json:"annotations"`
	} `json:"metadata"`
	Status map[string]json.RawMessage `json:"status"`
}

// ParseAudit reads a kube-apiserver audit log (JSON lines) and returns the
// stored merge patches of objects, by object, in the log's order, followed
// by the patches that were received and never answered (Write.Unanswered).
// Other events (creations, JSON patches such as finalizer changes, failed
// requests) are skipped. A line that is not JSON is counted in bad and
// skipped: kube-apiserver killed mid-write leaves a partial last line.
func ParseAudit(r io.Reader) (writes map[string][]Write, bad int, err error) {
	writes = map[string][]Write{}
	received := map[string]auditEvent{} // by audit id, until answered
	var order []string                  // the received ids, in order
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			bad++
			continue
		}
		if ev.Verb == "patch" && ev.ObjectRef != nil {
			switch ev.Stage {
			case "RequestReceived":
				received[ev.AuditID] = ev
				order = append(order, ev.AuditID)
			case "ResponseComplete":
				delete(received, ev.AuditID)
			}
		}
		if ev.Stage != "ResponseComplete" || ev.Verb != "patch" || ev.ObjectRef == nil ||
			ev.ResponseStatus == nil || ev.ResponseStatus.Code/100 != 2 {
			continue
		}
		var p mergePatch
		if err := json.Unmarshal(ev.RequestObject, &p); err != nil {
			continue // a JSON patch (an array): finalizers, not outcomes
		}
		ref := ev.ObjectRef
		w := Write{
			Time:      ev.StageTimestamp,
			Received:  ev.RequestReceivedTimestamp,
			Object:    ref.Resource + "/" + ref.Namespace + "/" + ref.Name,
			Status:    ref.Subresource == "status",
			Results:   map[string]bool{},
			Successes: map[string]bool{},
			AuditID:   ev.AuditID,
		}
		for id, v := range p.Status {
			if string(v) != "null" && id != "kopf" {
				w.Results[id] = true
			}
		}
		for key, v := range p.Metadata.Annotations {
			id, ok := strings.CutPrefix(key, AnnotationPrefix)
			if !ok || v == nil {
				continue
			}
			if key == DiffBaseKey {
				w.DiffBase = true
				continue
			}
			var rec struct {
				Success bool `json:"success"`
			}
			if json.Unmarshal([]byte(*v), &rec) == nil && rec.Success {
				w.Successes[id] = true
			}
		}
		writes[w.Object] = append(writes[w.Object], w)
	}
	if err := sc.Err(); err != nil {
		return nil, bad, fmt.Errorf("reading the audit log: %w", err)
	}
	for _, id := range order {
		ev, ok := received[id]
		if !ok {
			continue
		}
		ref := ev.ObjectRef
		w := Write{
			Time:       ev.StageTimestamp,
			Received:   ev.StageTimestamp,
			Object:     ref.Resource + "/" + ref.Namespace + "/" + ref.Name,
			Status:     ref.Subresource == "status",
			Unanswered: true,
			AuditID:    id,
		}
		writes[w.Object] = append(writes[w.Object], w)
	}
	return writes, bad, nil
}

// Unanswered returns the writes that were received and never answered.
func Unanswered(writes map[string][]Write) []Write {
	var out []Write
	for _, ws := range writes {
		for _, w := range ws {
			if w.Unanswered {
				out = append(out, w)
			}
		}
	}
	slices.SortFunc(out, func(a, b Write) int { return a.Time.Compare(b.Time) })
	return out
}

// WindowWidths measures the crash window of every cycle that wrote both
// patches: from the status patch's response to the API server's receipt of
// the object patch that followed it (the next write of the object). A
// SIGKILL of the operator within that time re-runs the handlers whose
// results the status patch stored.
func WindowWidths(writes map[string][]Write) []time.Duration {
	var out []time.Duration
	for _, ws := range writes {
		for i := 0; i+1 < len(ws); i++ {
			if ws[i].Status && !ws[i+1].Status && !ws[i].Unanswered && !ws[i+1].Unanswered {
				out = append(out, ws[i+1].Received.Sub(ws[i].Time))
			}
		}
	}
	slices.Sort(out)
	return out
}
