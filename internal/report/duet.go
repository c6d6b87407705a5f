package report

import (
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/result"
)

// Duet lists how each duet condition's twins used their CPU shares: a
// twin well under its share waited rather than computed.
func Duet(w io.Writer, s result.Summary) {
	any, held := false, false
	for _, c := range s.Conditions {
		d := c.Duet
		if d == nil {
			continue
		}
		if !any {
			share, whose := "not isolated", "server and load"
			if d.ShareCPUs > 0 {
				share = fmt.Sprintf("each held to %.3g CPU", d.ShareCPUs)
			}
			if d.LoadApart {
				share, whose = fmt.Sprintf("each server held to %.3g CPU, its load in a group of its own", d.ShareCPUs), "server, then load"
			}
			fmt.Fprintf(w, "\nduet twins (%s; CPU of %s, median phase; throttled: time the quota held its processes back, summed over CPUs):\n", share, whose)
			any = true
		}
		fmt.Fprintf(w, "  %-28s %3d phases  observer's twin %.2f CPU (throttled %.2fs)  other twin %.2f CPU (throttled %.2fs)",
			c.Name, d.Phases, d.OnCPUs, d.OnThrottledS, d.OffCPUs, d.OffThrottledS)
		if d.LoadApart {
			fmt.Fprintf(w, "  loads %.2f and %.2f CPU (throttled at most %.2fs)", d.OnLoadCPUs, d.OffLoadCPUs, d.LoadThrottledS)
		}
		fmt.Fprintln(w)
		held = held || d.ShareCPUs > 0
	}
	if held {
		// The latency columns are a twin's: a session that finds its
		// twin's quota spent waits out the rest of the quota's period,
		// which no observer caused.
		fmt.Fprintln(w, "  p50/p99 ms are a twin's under its quota: once a twin has used its share of a quota period, its sessions wait for the next one,")
		fmt.Fprintln(w, "  so p99 holds that wait in both twins alike; --method auto measures latency on a server without a quota")
	}
}
