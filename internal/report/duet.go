package report

import (
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/result"
)

// Duet lists how each duet condition's twins used their CPU shares: a
// twin well under its share waited rather than computed.
func Duet(w io.Writer, s result.Summary) {
	any := false
	for _, c := range s.Conditions {
		d := c.Duet
		if d == nil {
			continue
		}
		if !any {
			share := "not isolated"
			if d.ShareCPUs > 0 {
				share = fmt.Sprintf("each held to %.3g CPU", d.ShareCPUs)
			}
			fmt.Fprintf(w, "\nduet twins (%s; CPU of server and load, median phase; throttled: time the quota held its processes back, summed over CPUs):\n", share)
			any = true
		}
		fmt.Fprintf(w, "  %-28s %3d phases  observer's twin %.2f CPU (throttled %.2fs)  other twin %.2f CPU (throttled %.2fs)\n",
			c.Name, d.Phases, d.OnCPUs, d.OnThrottledS, d.OffCPUs, d.OffThrottledS)
	}
}
