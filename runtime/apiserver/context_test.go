package apiserver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

type testClient struct{ host, agent string }

type otherClient struct{ host string }

func operatorContext(t *testing.T) context.Context {
	t.Helper()
	cfg := &rest.Config{Host: "https://example.invalid:6443", UserAgent: "test-operator"}
	return WithClients(WithRESTConfig(t.Context(), cfg))
}

func TestClientIsMadeOnceUnderContention(t *testing.T) {
	ctx := operatorContext(t)
	var made atomic.Int32
	newFn := func(cfg *rest.Config) (*testClient, error) {
		made.Add(1)
		return &testClient{host: cfg.Host, agent: cfg.UserAgent}, nil
	}
	const callers = 64
	got := make([]*testClient, callers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			c, err := Client(ctx, newFn)
			if err != nil {
				t.Errorf("Client: %v", err)
			}
			got[i] = c
		})
	}
	close(start)
	wg.Wait()
	if n := made.Load(); n != 1 {
		t.Fatalf("newFn was called %d times, want 1", n)
	}
	for i, c := range got {
		if c != got[0] {
			t.Fatalf("caller %d got %p, caller 0 got %p: not the same client", i, c, got[0])
		}
	}
	if got[0].host != "https://example.invalid:6443" || got[0].agent != "test-operator" {
		t.Errorf("the client was made from %+v, not from the operator's configuration", *got[0])
	}
}

func TestClientPerTypeAndPerOperator(t *testing.T) {
	ctx := operatorContext(t)
	a, err := Client(ctx, func(cfg *rest.Config) (*testClient, error) { return &testClient{host: cfg.Host}, nil })
	if err != nil {
		t.Fatal(err)
	}
	b, err := Client(ctx, func(cfg *rest.Config) (*otherClient, error) { return &otherClient{host: cfg.Host}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if a == nil || b == nil {
		t.Fatalf("got nil clients: %v, %v", a, b)
	}
	// The key is the type alone: a second newFn of the same type is not called.
	again, err := Client(ctx, func(*rest.Config) (*testClient, error) {
		t.Error("newFn called for a type that already has its client")
		return nil, nil
	})
	if err != nil || again != a {
		t.Errorf("second call: %p, %v; want %p, nil", again, err, a)
	}
	// Another operator (another run) has clients of its own.
	other, err := Client(operatorContext(t), func(cfg *rest.Config) (*testClient, error) { return &testClient{host: cfg.Host}, nil })
	if err != nil || other == a {
		t.Errorf("another operator's client: %p, %v; want a new one", other, err)
	}
	// A real constructor of client-go.
	d1, err := Client(ctx, dynamic.NewForConfig)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := Client(ctx, dynamic.NewForConfig)
	if err != nil || d1 != d2 {
		t.Errorf("dynamic clients differ: %p, %p, %v", d1, d2, err)
	}
}

func TestClientErrorsAreNotKept(t *testing.T) {
	ctx := operatorContext(t)
	boom := errors.New("boom")
	_, err := Client(ctx, func(*rest.Config) (*testClient, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap %v", err, boom)
	}
	c, err := Client(ctx, func(cfg *rest.Config) (*testClient, error) { return &testClient{host: cfg.Host}, nil })
	if err != nil || c == nil {
		t.Fatalf("after a failure: %v, %v; want a client", c, err)
	}
}

func TestClientGetsACopyOfTheConfig(t *testing.T) {
	ctx := operatorContext(t)
	_, err := Client(ctx, func(cfg *rest.Config) (*testClient, error) {
		cfg.Host = "https://changed.invalid"
		return &testClient{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if h := RESTConfig(ctx).Host; h != "https://example.invalid:6443" {
		t.Errorf("newFn changed the operator's configuration: host %q", h)
	}
}

func TestClientOutsideAnOperator(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
	}{
		{"no operator", context.Background()},
		{"a configuration without the operator's clients", WithRESTConfig(context.Background(), &rest.Config{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Client(tt.ctx, func(*rest.Config) (*testClient, error) {
				t.Error("newFn called outside an operator")
				return nil, nil
			})
			if !errors.Is(err, ErrNoOperator) {
				t.Errorf("err = %v, want ErrNoOperator", err)
			}
		})
	}
	if _, err := Client[*testClient](operatorContext(t), nil); err == nil {
		t.Error("a nil newFn gave no error")
	}
}

type greeter interface{ greet() string }

func (c *testClient) greet() string { return "real " + c.host }

type fakeGreeter struct{}

func (fakeGreeter) greet() string { return "fake" }

// TestWithClient: a client given with WithClient is what Client returns
// for its type, without newFn and without an operator; other types are
// made as before where there is an operator, and the parent context is
// left as it was.
func TestWithClient(t *testing.T) {
	never := func(*rest.Config) (greeter, error) {
		t.Error("newFn called for a client given with WithClient")
		return nil, nil
	}
	tests := []struct {
		name     string
		parent   context.Context
		otherErr error // Client of another type in the child context
	}{
		{"no operator", context.Background(), ErrNoOperator},
		{"an operator", operatorContext(t), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := WithClient[greeter](tt.parent, fakeGreeter{})
			for range 2 {
				g, err := Client(ctx, never)
				if err != nil || g.greet() != "fake" {
					t.Fatalf("Client = %v, %v; want the fake", g, err)
				}
			}
			_, err := Client(ctx, func(cfg *rest.Config) (*otherClient, error) { return &otherClient{host: cfg.Host}, nil })
			if !errors.Is(err, tt.otherErr) {
				t.Errorf("another type: %v, want %v", err, tt.otherErr)
			}
			if tt.otherErr == nil {
				real, err := Client(tt.parent, func(cfg *rest.Config) (greeter, error) { return &testClient{host: cfg.Host}, nil })
				if err != nil || real.greet() == "fake" {
					t.Errorf("the parent context's client: %v, %v; want a real one", real, err)
				}
			}
		})
	}
}

// TestWithClientKeepsOthers: clients made before WithClient are shared
// with the new context.
func TestWithClientKeepsOthers(t *testing.T) {
	ctx := operatorContext(t)
	made, err := Client(ctx, func(cfg *rest.Config) (*otherClient, error) { return &otherClient{host: cfg.Host}, nil })
	if err != nil {
		t.Fatal(err)
	}
	child := WithClient[greeter](ctx, fakeGreeter{})
	again, err := Client(child, func(*rest.Config) (*otherClient, error) { return &otherClient{}, nil })
	if err != nil || again != made {
		t.Errorf("the child context's client %p (%v), want the parent's %p", again, err, made)
	}
}
