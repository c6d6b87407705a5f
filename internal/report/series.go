package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/obsbench/obsbench/internal/result"
)

// Series writes every measured second of every run as a CSV row, as
// pgbench's --aggregate-interval log does, for a spreadsheet or a plotting
// tool: when (t_s, seconds from the first run's start), which run, which
// server (a duet's twin), which side of the comparison the second is on
// (on: an alternation's on phase or a duet's observer's twin, which in the
// A/A arm stand in for an observer; off; empty for a whole run), and the
// statements completed and the CPU of the server and the driver in it,
// and the latency percentiles of the statements completed in it (empty
// for a run recorded before obsbench kept them; read from buckets within
// 6.25% of the exact value); at a fixed rate, the latency of the units
// completed in it from their scheduled starts too (sched_*: what users
// arriving on the schedule saw, a queue's wait included).
func Series(w io.Writer, s result.Summary, runs []result.Run) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"t_s", "seq", "round", "condition", "method", "twin", "side", "second", "statements", "server_cpu", "driver_cpu",
		"p50_ms", "p90_ms", "p99_ms", "max_ms", "units", "sched_p50_ms", "sched_p99_ms", "sched_max_ms"})
	var first result.Run
	for _, r := range runs {
		if !r.Started.IsZero() && (first.Started.IsZero() || r.Started.Before(first.Started)) {
			first = r
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, r := range runs {
		if r.Error != "" || r.Started.IsZero() {
			continue
		}
		start := r.Started.Sub(first.Started).Seconds() + s.Warmup
		rows := func(twin string, side func(int) string, d result.DriverResult, u result.Usage) {
			for i, n := range totals(d.PerSecond) {
				row := []string{f(start + float64(i)), strconv.Itoa(r.Seq), strconv.Itoa(r.Round), r.Condition, string(r.Method), twin,
					side(i), strconv.Itoa(i), strconv.FormatInt(n, 10), "", "", "", "", "", "", "", "", "", ""}
				if i < len(u.PerSecond) {
					row[9], row[10] = f(u.PerSecond[i].Server), f(u.PerSecond[i].Driver)
				}
				if i < len(d.LatencyPerSecond) && d.LatencyPerSecond[i].Count > 0 {
					l := d.LatencyPerSecond[i]
					row[11], row[12], row[13], row[14] = f(l.P50), f(l.P90), f(l.P99), f(l.Max)
				}
				if d.Rate != nil && i < len(d.Rate.LatencyPerSecond) {
					l := d.Rate.LatencyPerSecond[i]
					row[15] = strconv.FormatInt(l.Count, 10)
					if l.Count > 0 {
						row[16], row[17], row[18] = f(l.P50), f(l.P99), f(l.Max)
					}
				}
				cw.Write(row)
			}
		}
		switch {
		case r.Duet != nil:
			off := "a"
			if r.Duet.On == "a" {
				off = "b"
			}
			rows(r.Duet.On, func(int) string { return "on" }, r.Driver, r.Usage)
			rows(off, func(int) string { return "off" }, r.Duet.Off, r.Duet.OffUsage)
		case len(r.Phases) > 0:
			rows("", func(i int) string { return phaseSide(r.Phases, i) }, r.Driver, r.Usage)
		default:
			rows("", func(int) string { return "" }, r.Driver, r.Usage)
		}
	}
	cw.Flush()
	return cw.Error()
}

// totals are the statements of all sessions in each second.
func totals(perSession [][]int64) []int64 {
	var out []int64
	for _, s := range perSession {
		for i, v := range s {
			if i == len(out) {
				out = append(out, 0)
			}
			out[i] += v
		}
	}
	return out
}

// phaseSide is the side of second i of an alternation run: on, off, or
// empty past its schedule.
func phaseSide(phases []result.Phase, i int) string {
	for _, p := range phases {
		if i >= p.Start && i < p.End {
			if p.On {
				return "on"
			}
			return "off"
		}
	}
	return ""
}
