package metrics

import (
	"net/http"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// The bearer token is read as the API server reads it; anything else is
// no token (401 without a review).
func TestBearerToken(t *testing.T) {
	for _, tt := range []struct {
		header, want string
		ok           bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer  abc ", "abc", true},
		{"Basic abc", "", false},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"", "", false},
	} {
		req, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
		if tt.header != "" {
			req.Header.Set("Authorization", tt.header)
		}
		if got, ok := bearerToken(req); got != tt.want || ok != tt.ok {
			t.Errorf("bearerToken(%q) = %q, %v; want %q, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

// A full cache loses its expired entries, or all of them if none has
// expired: made-up tokens cannot grow it past maxCached.
func TestPrune(t *testing.T) {
	now := time.Now()
	expires := func(t time.Time) time.Time { return t }
	m := map[int]time.Time{}
	for i := range maxCached {
		m[i] = now.Add(time.Minute)
	}
	m[0], m[1] = now.Add(-time.Second), now
	prune(m, now, expires)
	if len(m) != maxCached-2 {
		t.Errorf("after pruning the expired entries: %d entries, want %d", len(m), maxCached-2)
	}
	m[-1], m[-2] = now.Add(time.Minute), now.Add(time.Minute)
	prune(m, now, expires)
	if len(m) != 0 {
		t.Errorf("a full cache with nothing expired: %d entries left, want 0", len(m))
	}
}

// A user's access is cached per verb, path, name, uid, groups and extra.
func TestAccessKey(t *testing.T) {
	u := &authenticationv1.UserInfo{Username: "u", UID: "1", Groups: []string{"g"}, Extra: map[string]authenticationv1.ExtraValue{"b": {"2"}, "a": {"1"}}}
	base := accessKey(u, "get", "/metrics")
	same := &authenticationv1.UserInfo{Username: "u", UID: "1", Groups: []string{"g"}, Extra: map[string]authenticationv1.ExtraValue{"a": {"1"}, "b": {"2"}}}
	if accessKey(same, "get", "/metrics") != base {
		t.Error("the same user gives another key")
	}
	for name, other := range map[string]*authenticationv1.UserInfo{
		"name":   {Username: "v", UID: "1", Groups: []string{"g"}, Extra: u.Extra},
		"groups": {Username: "u", UID: "1", Groups: []string{"g", "h"}, Extra: u.Extra},
		"extra":  {Username: "u", UID: "1", Groups: []string{"g"}},
	} {
		if accessKey(other, "get", "/metrics") == base {
			t.Errorf("another %s gives the same key", name)
		}
	}
	if accessKey(u, "post", "/metrics") == base || accessKey(u, "get", "/other") == base {
		t.Error("another verb or path gives the same key")
	}
}
