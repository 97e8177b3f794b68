package cli

import (
	"os"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kopf-go/kopf/runtime/operator"
)

func TestShardsFlag(t *testing.T) {
	code := &operator.Sharding{Group: "g", LeaseDuration: 4 * time.Second}
	tests := []struct {
		name    string
		args    []string
		env     string // $KOPF_RUN_SHARDS
		code    *operator.Sharding
		buckets int // 0: sharding off
		group   string
	}{
		{name: "off by default"},
		{name: "alone: 64 buckets", args: []string{"--shards"}, buckets: 64},
		{name: "with a number", args: []string{"--shards=8"}, buckets: 8},
		{name: "from the environment", env: "16", buckets: 16},
		{name: "the flag wins over the environment", args: []string{"--shards=32"}, env: "16", buckets: 32},
		{name: "in code only", code: code, buckets: 0, group: "g"},
		{name: "the flag sets the buckets of the code's settings", args: []string{"--shards=128"}, code: code, buckets: 128, group: "g"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KOPF_RUN_SHARDS", tt.env)
			f := runFlags{opts: Options{Sharding: tt.code}}
			fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
			addRunFlags(fl, &f)
			if err := fl.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := applyEnv(fl, runEnv(), os.LookupEnv); err != nil {
				t.Fatal(err)
			}
			got := f.opts.Sharding
			switch {
			case tt.buckets == 0 && tt.code == nil:
				if got != nil {
					t.Fatalf("sharding is on: %+v", got)
				}
			case got == nil:
				t.Fatal("sharding is off")
			case got.Buckets != tt.buckets || got.Group != tt.group:
				t.Errorf("got %d buckets in group %q, want %d in %q", got.Buckets, got.Group, tt.buckets, tt.group)
			}
			if tt.code != nil && tt.code.Buckets != 0 {
				t.Error("the code's settings were changed")
			}
		})
	}
}
