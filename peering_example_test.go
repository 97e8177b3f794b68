package kopf_test

import (
	"time"

	"github.com/kopf-go/kopf"
)

// docs/peering.md shows peeringSettings verbatim.
func peeringSettings() kopf.Option {
	return kopf.WithSettings(func(s *kopf.Settings) {
		s.Peering.Name = "example" // the peering object
		s.Peering.Mandatory = true // paused while it is missing
		s.Peering.Priority = 100
		s.Peering.Stealth = true // no keep-alives in the log
		// High availability: the stand-by takes over within about 10 s.
		s.Peering.LeaseDuration = 8 * time.Second
		s.Peering.RenewDeadline = 5 * time.Second
		s.Peering.RetryPeriod = time.Second
	})
}

var _ = peeringSettings
