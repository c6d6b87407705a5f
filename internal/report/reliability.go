package report

import (
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/result"
)

// Reliability writes study 5's completeness verdict for one long run of an
// audit observer: statements executed against records found in the
// trail's files, file by file, then the trail's throughput, extrapolated
// per minute, hour and day as the study did.
func Reliability(w io.Writer, r result.Run) error {
	d := r.Driver
	seconds := d.Seconds // counting starts before the run and ends after it: warm-up is 0
	notef(w, "reliability: %s, %d sessions, %s", r.Condition, d.Clients, formatSeconds(seconds))
	ev := r.Events
	switch {
	case r.Error != "":
		notef(w, "  run failed: %s", r.Error)
		return nil
	case ev == nil:
		_, err := fmt.Fprintln(w, "  the observer records no events: nothing to check")
		return err
	case ev.Error != "":
		notef(w, "  events not counted: %s", ev.Error)
		return nil
	}
	var bytes int64
	for _, f := range ev.Files {
		bytes += f.Bytes
	}
	verdict := "COMPLETE: one record per statement"
	switch diff := ev.Recorded - ev.Executed; {
	case diff < 0:
		verdict = fmt.Sprintf("INCOMPLETE: %s statements have no record (%.4f%%)", thousands(float64(-diff)), 100*float64(-diff)/float64(ev.Executed))
	case diff > 0:
		verdict = fmt.Sprintf("EXTRA: %s more records than statements", thousands(float64(diff)))
	}
	notef(w, "  statements executed (driver) %s; audit records %s in %d file(s): %s",
		thousands(float64(ev.Executed)), thousands(float64(ev.Recorded)), len(ev.Files), verdict)
	if ev.EngineLost != nil {
		fmt.Fprintf(w, "  the engine's own lost-record counter grew by %d\n", *ev.EngineLost)
	}
	for i, f := range ev.Files {
		// The first three and the last: a long run rotates hundreds.
		if len(ev.Files) > 5 && i >= 3 && i < len(ev.Files)-1 {
			if i == 3 {
				fmt.Fprintf(w, "    ... %d more file(s)\n", len(ev.Files)-4)
			}
			continue
		}
		fmt.Fprintf(w, "    %-34s %12s records %10.1f MB\n", f.Name, thousands(float64(f.Records)), float64(f.Bytes)/1e6)
	}
	if seconds <= 0 || ev.Recorded == 0 {
		return nil
	}
	rps, mbps := float64(ev.Recorded)/seconds, float64(bytes)/1e6/seconds
	fmt.Fprintf(w, "throughput: %s records/s, %.2f MB/s written to the trail\n", thousands(rps), mbps)
	for _, p := range []struct {
		name string
		s    float64
	}{{"minute", 60}, {"hour", 3600}, {"day", 86400}} {
		fmt.Fprintf(w, "  per %-6s %16s records %12s MB\n", p.name, thousands(rps*p.s), thousands(mbps*p.s))
	}
	return nil
}

func formatSeconds(s float64) string {
	if s >= 120 {
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.0f s", s)
}
