package cli

import (
	"context"
	"os"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/clusters"
)

func TestClusterFlags(t *testing.T) {
	code := clusters.List()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		code    clusters.Provider
		want    string // the provider's type: "" none, "code", "dir", "home" (made at run)
		wantErr bool
	}{
		{name: "none", want: ""},
		{name: "the code's", code: code, want: "code"},
		{name: "a directory", args: []string{"--clusters-dir=/etc/fleet"}, code: code, want: "dir"},
		{name: "a directory from the environment", env: map[string]string{"KOPF_RUN_CLUSTERS_DIR": "/etc/fleet"}, want: "dir"},
		{name: "Secrets", args: []string{"--clusters-secrets=fleet/kopf.dev/fleet=prod"}, want: "home"},
		{name: "Secrets without a selector", args: []string{"--clusters-secrets=fleet"}, wantErr: true},
		{name: "both", args: []string{"--clusters-dir=/d", "--clusters-secrets=ns/a=b"}, wantErr: true},
		{name: "shared over the code's", args: []string{"--clusters-shared"}, code: code, want: "home"},
		{name: "shared from the environment", env: map[string]string{"KOPF_RUN_CLUSTERS_SHARED": "yes", "KOPF_RUN_CLUSTERS_DIR": "/d"}, want: "home"},
		{name: "shared of nothing", args: []string{"--clusters-shared"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range []string{"KOPF_RUN_CLUSTERS_DIR", "KOPF_RUN_CLUSTERS_SECRETS", "KOPF_RUN_CLUSTERS_SHARED"} {
				t.Setenv(name, tt.env[name])
			}
			f := runFlags{opts: Options{Clusters: tt.code}}
			fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
			addRunFlags(fl, &f)
			if err := fl.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := applyEnv(fl, runEnv(), os.LookupEnv); err != nil {
				t.Fatal(err)
			}
			err := f.clusters.complete(&f.opts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			got := ""
			switch p := f.opts.Clusters.(type) {
			case nil:
			case *clusters.ListProvider:
				got = "code"
			case homeProvider:
				got = "home"
			default:
				if p != nil {
					got = "dir"
				}
			}
			if got != tt.want {
				t.Errorf("the provider is %q (%T), want %q", got, f.opts.Clusters, tt.want)
			}
		})
	}
}

func TestHomeProviderReadsTheCredentialsWhenItRuns(t *testing.T) {
	var made *rest.Config
	p := homeProvider{
		home: func(context.Context) (*rest.Config, error) { return &rest.Config{Host: "https://home"}, nil },
		make: func(cfg *rest.Config) clusters.Provider { made = cfg; return clusters.List() },
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if made == nil || made.Host != "https://home" {
		t.Fatalf("made with %v", made)
	}
}
