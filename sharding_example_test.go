package kopf_test

import (
	"os"
	"time"

	"github.com/kopf-go/kopf"
)

// Replicas of an operator split its objects among them, as `operator run
// -A --shards` does (--shards sets the number of buckets and wins over
// the option's). See docs/sharding.md.
func ExampleWithSharding() {
	os.Exit(kopf.Main(register,
		kopf.WithSharding(kopf.Sharding{
			Buckets:       64,
			Namespace:     os.Getenv("POD_NAMESPACE"),
			LeaseDuration: 15 * time.Second,
		}),
	))
}
