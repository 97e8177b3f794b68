package cli

import (
	"os"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/sharding"
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

func TestShardModeFlag(t *testing.T) {
	code := &operator.Sharding{Group: "g"}
	tests := []struct {
		name string
		args []string
		env  string // $KOPF_RUN_SHARD_MODE
		code *operator.Sharding
		want sharding.Mode // "": sharding off, or the mode left unset
		err  bool
	}{
		{name: "unset", args: []string{"--shards"}},
		{name: "label", args: []string{"--shards", "--shard-mode=label"}, want: sharding.ModeLabel},
		{name: "before --shards", args: []string{"--shard-mode=server", "--shards=8"}, want: sharding.ModeServer},
		{name: "from the environment", args: []string{"--shards"}, env: "label", want: sharding.ModeLabel},
		{name: "over the code's", args: []string{"--shard-mode=filter"}, code: code, want: sharding.ModeFilter},
		{name: "without sharding: nothing", args: []string{"--shard-mode=label"}},
		{name: "unknown", args: []string{"--shards", "--shard-mode=labels"}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KOPF_RUN_SHARD_MODE", tt.env)
			f := runFlags{opts: Options{Sharding: tt.code}}
			fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
			addRunFlags(fl, &f)
			if err := fl.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := applyEnv(fl, runEnv(), os.LookupEnv); err != nil {
				t.Fatal(err)
			}
			err := f.applyShardMode()
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want one: %v", err, tt.err)
			}
			var got sharding.Mode
			if f.opts.Sharding != nil {
				got = f.opts.Sharding.Mode
			}
			if got != tt.want {
				t.Errorf("mode %q, want %q", got, tt.want)
			}
			if tt.code != nil && tt.code.Mode != "" {
				t.Error("the code's settings were changed")
			}
		})
	}
}
