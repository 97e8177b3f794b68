package admission

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// BenchmarkAdmission measures what the admission server adds to a
// request: a trivial validating handler served by Handler against a bare
// net/http handler that reads the request and writes a canned response,
// both over TLS (httptest's certificate) with keep-alive connections, in
// the same run, requests alternating. It reports each one's requests per
// second and p99 latency (sequential requests), and the ratios kopf/bare.
func BenchmarkAdmission(b *testing.B) {
	reg := registry.New()
	if err := reg.AddWebhook(registry.WebhookHandler{ID: "check", Selector: examples, Kind: registry.WebhookValidating,
		Fn: func(_ context.Context, kw *kwargs.Admission) error {
			if kw.Spec["field"] == "wrong" {
				return NewError("wrong", 400)
			}
			return nil
		}}); err != nil {
		b.Fatal(err)
	}
	kopfSrv := httptest.NewTLSServer(&Handler{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	defer kopfSrv.Close()
	canned := []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u-1","allowed":true}}`)
	bareSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(canned)
	}))
	defer bareSrv.Close()
	body := []byte(review("CREATE", "", example, ""))
	send := func(c *http.Client, url string) time.Duration {
		start := time.Now()
		resp, err := c.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("HTTP %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	kc, bc := kopfSrv.Client(), bareSrv.Client()
	send(kc, kopfSrv.URL+"/check") // the TLS handshakes
	send(bc, bareSrv.URL+"/check")
	kopfLat := make([]time.Duration, 0, b.N)
	bareLat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		kopfLat = append(kopfLat, send(kc, kopfSrv.URL+"/check"))
		bareLat = append(bareLat, send(bc, bareSrv.URL+"/check"))
	}
	b.StopTimer()
	rate := func(l []time.Duration) float64 {
		var sum time.Duration
		for _, d := range l {
			sum += d
		}
		return float64(len(l)) / sum.Seconds()
	}
	p99 := func(l []time.Duration) time.Duration {
		slices.Sort(l)
		return l[(len(l)*99)/100]
	}
	kr, br := rate(kopfLat), rate(bareLat)
	kp, bp := p99(kopfLat), p99(bareLat)
	b.ReportMetric(kr, "kopf-req/s")
	b.ReportMetric(br, "bare-req/s")
	b.ReportMetric(kr/br, "rate-ratio")
	b.ReportMetric(float64(kp.Microseconds()), "kopf-p99-µs")
	b.ReportMetric(float64(bp.Microseconds()), "bare-p99-µs")
	b.ReportMetric(float64(kp)/float64(bp), "p99-ratio")
}
