package metrics

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
)

// Guard lets through only the requests that the API server authenticates
// and authorizes, as controller-runtime's metrics filter
// (pkg/metrics/filters.WithAuthenticationAndAuthorization) and
// kube-rbac-proxy do:
//
//   - the request's bearer token (Authorization: Bearer ...) is reviewed
//     with a TokenReview (authentication.k8s.io/v1); no token, or one that
//     the API server does not authenticate: 401 Unauthorized;
//   - the user it names is checked with a SubjectAccessReview
//     (authorization.k8s.io/v1) of the non-resource URL: the request's
//     path, its method in lower case as the verb ("get" for GET
//     /metrics); not allowed: 403 Forbidden. RBAC grants it with a rule
//     of nonResourceURLs ["/metrics"] and verbs ["get"] (the scaffold's
//     metrics-reader ClusterRole);
//   - a review that fails (the API server unreachable, or the operator not
//     allowed to create reviews): 500, and the reason is logged by the
//     caller of Guard.Wrap's onError.
//
// The operator's own credentials must allow creating tokenreviews and
// subjectaccessreviews (the scaffold's metrics-auth ClusterRole, as
// kubebuilder's config/rbac/metrics_auth_role.yaml).
//
// The results are cached as controller-runtime caches them, so that
// Prometheus's scrapes every few seconds cost the API server a review a
// minute at most: a token's review for a minute (authenticated or not), an
// allowed user for 5 minutes, a denied one for 30 seconds. So a revoked
// permission takes effect within 5 minutes, a deleted token within one.
// The cache is keyed by the token's SHA-256 (the token itself is not kept)
// and bounded (maxCached entries; a full cache is emptied of its expired
// entries, or else entirely), so tokens made up by a client cannot grow
// it without bound. A failed review is not cached.
//
// Why not controller-runtime's filter itself, or k8s.io/apiserver's
// delegating authenticator and authorizer that it wraps: k8s.io/apiserver
// would bring etcd's client, gRPC, OpenTelemetry and CEL into the module
// graph of every operator (an operator's go.mod requires the root module
// only, see docs/ARCHITECTURE.md), for two POST requests that client-go's
// typed clients make. What they add and this does not: retries of a
// failed review with a backoff (here the scrape fails, and the next one
// reviews again), client certificates and request headers as credentials
// (Prometheus sends a bearer token).
type Guard struct {
	tokens  authenticationclient.TokenReviewInterface
	access  authorizationclient.SubjectAccessReviewInterface
	now     func() time.Time
	timeout time.Duration

	mu      sync.Mutex
	authn   map[[32]byte]cachedUser
	allowed map[string]cachedDecision
}

// The cache's durations (controller-runtime's), its bound, and how long a
// review may take (controller-runtime's TokenAccessReviewTimeout).
const (
	authnTTL      = time.Minute
	allowTTL      = 5 * time.Minute
	denyTTL       = 30 * time.Second
	maxCached     = 1024
	reviewTimeout = 10 * time.Second
)

type cachedUser struct {
	user    *authenticationv1.UserInfo // nil: not authenticated
	expires time.Time
}

type cachedDecision struct {
	allowed bool
	expires time.Time
}

// NewGuard returns a Guard that sends its reviews with cfg: the
// operator's own credentials.
func NewGuard(cfg *rest.Config) (*Guard, error) {
	authn, err := authenticationclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("the metrics' token reviews: %w", err)
	}
	authz, err := authorizationclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("the metrics' access reviews: %w", err)
	}
	return &Guard{tokens: authn.TokenReviews(), access: authz.SubjectAccessReviews(), now: time.Now, timeout: reviewTimeout,
		authn: map[[32]byte]cachedUser{}, allowed: map[string]cachedDecision{}}, nil
}

// Wrap returns next behind the guard. onError, if set, is told of each
// review that failed (the response is then 500).
func (g *Guard) Wrap(next http.Handler, onError func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), g.timeout)
		defer cancel()
		status, msg, err := g.check(ctx, req)
		if err != nil && onError != nil {
			onError(err)
		}
		if status != http.StatusOK {
			http.Error(w, msg, status)
			return
		}
		next.ServeHTTP(w, req)
	})
}

// check returns 200 for a request that may pass, or the status and
// message of its refusal (and the error of a failed review).
func (g *Guard) check(ctx context.Context, req *http.Request) (status int, msg string, err error) {
	token, ok := bearerToken(req)
	if !ok {
		return http.StatusUnauthorized, "Unauthorized", nil
	}
	user, err := g.authenticate(ctx, token)
	if err != nil {
		return http.StatusInternalServerError, "Authentication failed", err
	}
	if user == nil {
		return http.StatusUnauthorized, "Unauthorized", nil
	}
	verb := strings.ToLower(req.Method)
	allowed, err := g.authorize(ctx, user, verb, req.URL.Path)
	if err != nil {
		return http.StatusInternalServerError, fmt.Sprintf("Authorization for user %s failed", user.Username), err
	}
	if !allowed {
		return http.StatusForbidden, fmt.Sprintf("Authorization denied for user %s", user.Username), nil
	}
	return http.StatusOK, "", nil
}

// bearerToken is the request's bearer token, as the API server reads it.
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return "", false
	}
	return token, true
}

// authenticate returns the user of the token, nil if the API server does
// not authenticate it.
func (g *Guard) authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	key := sha256.Sum256([]byte(token))
	now := g.now()
	g.mu.Lock()
	c, ok := g.authn[key]
	g.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.user, nil
	}
	tr, err := g.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("reviewing a token of the metrics' client: %w", err)
	}
	c = cachedUser{expires: now.Add(authnTTL)}
	if tr.Status.Authenticated {
		c.user = &tr.Status.User
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	prune(g.authn, now, func(c cachedUser) time.Time { return c.expires })
	g.authn[key] = c
	return c.user, nil
}

// authorize asks whether user may do verb on the non-resource path.
func (g *Guard) authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (bool, error) {
	key := accessKey(user, verb, path)
	now := g.now()
	g.mu.Lock()
	c, ok := g.allowed[key]
	g.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.allowed, nil
	}
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}}
	res, err := g.access.Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("reviewing the access of %s to %s %s: %w", user.Username, verb, path, err)
	}
	c = cachedDecision{allowed: res.Status.Allowed && !res.Status.Denied, expires: now.Add(denyTTL)}
	if c.allowed {
		c.expires = now.Add(allowTTL)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	prune(g.allowed, now, func(c cachedDecision) time.Time { return c.expires })
	g.allowed[key] = c
	return c.allowed, nil
}

// accessKey identifies a user's access to a verb on a path: everything
// the SubjectAccessReview is made of.
func accessKey(user *authenticationv1.UserInfo, verb, path string) string {
	var b strings.Builder
	for _, s := range []string{verb, path, user.Username, user.UID} {
		fmt.Fprintf(&b, "%q;", s)
	}
	fmt.Fprintf(&b, "%q;", user.Groups)
	keys := make([]string, 0, len(user.Extra))
	for k := range user.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q;", k, []string(user.Extra[k]))
	}
	return b.String()
}

// prune makes room in a full cache: its expired entries go, or all of them
// if none has expired. The caller holds the lock.
func prune[K comparable, V any](m map[K]V, now time.Time, expires func(V) time.Time) {
	if len(m) < maxCached {
		return
	}
	for k, v := range m {
		if !now.Before(expires(v)) {
			delete(m, k)
		}
	}
	if len(m) >= maxCached {
		clear(m)
	}
}
