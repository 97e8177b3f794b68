package operator

import (
	"fmt"
	"log/slog"
	"strings"
)

// warnPeering says that the operator runs standalone although it was not
// asked to: peering is not implemented yet. The peering name and the
// priority given, if any, are named as ignored.
func warnPeering(logger *slog.Logger, opts Options) {
	if opts.Standalone {
		return
	}
	var ignored []string
	if opts.PeeringName != "" {
		ignored = append(ignored, fmt.Sprintf("the peering %q", opts.PeeringName))
	}
	if opts.Priority != 0 {
		ignored = append(ignored, fmt.Sprintf("the priority %d", opts.Priority))
	}
	msg := "Peering is not supported yet; running in the standalone mode."
	if len(ignored) > 0 {
		msg += " Ignored: " + strings.Join(ignored, " and ") + "."
	}
	logger.Warn(msg)
}
