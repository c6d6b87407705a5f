package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
)

// shownWaits is how many waits a condition's line shows; summary.json has
// ten.
const shownWaits = 5

// Waits writes each condition's top waits against the baseline, marking
// signatures with "*".
func Waits(w io.Writer, s result.Summary) {
	any := false
	var samplerCPU []float64
	for _, c := range s.Conditions {
		if c.Waits == nil {
			continue
		}
		if !any {
			fmt.Fprintln(w, "\nwaits: % of active-session samples (baseline % in parentheses; * = signature: negligible in baseline, material with the observer)")
			any = true
		}
		if c.Waits.SamplerCPUPct != nil {
			samplerCPU = append(samplerCPU, *c.Waits.SamplerCPUPct)
		}
		fmt.Fprintf(w, "  %-28s %s\n", c.Name, WaitLine(c.Waits, shownWaits))
		label := result.WaitProfile{Source: "the engine's wait profile"}
		if s.WaitProfile != nil {
			label = *s.WaitProfile
		}
		switch {
		case len(c.Waits.Engine) > 0:
			var parts []string
			for _, e := range c.Waits.Engine[:min(shownWaits, len(c.Waits.Engine))] {
				parts = append(parts, fmt.Sprintf("%s %.1f", e.Wait, e.Pct))
			}
			fmt.Fprintf(w, "  %-28s %s: %s\n", "", label.Source, strings.Join(parts, ", "))
		case label.Missing != "":
			fmt.Fprintf(w, "  %-28s %s: not collected (%s)\n", "", label.Source, label.Missing)
		}
	}
	if len(samplerCPU) > 0 {
		lo, hi := slices.Min(samplerCPU), slices.Max(samplerCPU)
		fmt.Fprintf(w, "  (the sampler's queries cost the server %.2f-%.2f%% of the machine's CPU)\n", lo, hi)
	}
}

// WaitLine is a condition's n largest waits on one line.
func WaitLine(ws *result.WaitSummary, n int) string {
	var parts []string
	for _, sh := range ws.Top[:min(n, len(ws.Top))] {
		p := fmt.Sprintf("%s %.1f", sh.Wait, sh.Pct)
		if sh.BaselinePct != nil {
			p += fmt.Sprintf(" (%.1f)", *sh.BaselinePct)
		}
		if sh.Signature {
			p += "*"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// counterOrder lists the counters the report shows, in order.
var counterOrder = []struct{ key, label string }{
	{"xact_commit", "commits/s"},
	{"statements", "statements/s"},
	{"questions", "statements/s"},
	{"com_commit", "commits/s"},
	{"innodb_os_log_written", "redo log B/s"},
	{"innodb_data_fsyncs", "fsyncs/s"},
	{"handler_read_key", "key reads/s"},
	{"server_audit_writes_failed", "audit writes failed/s"},
	{"performance_schema_lost", "perf-schema lost/s"},
	{"wal_bytes", "WAL B/s"},
	{"wal_sync", "WAL syncs/s"},
	{"log_bytes", "log B/s"},
	{"replica_flush_lag_ms", "replica flush lag ms"},
	{"replica_replay_lag_ms", "replica replay lag ms"},
	{"log_stream_bytes", "stream B/s"},
	{"temp_bytes", "temp B/s"},
	{"buffers_backend", "backend buf writes/s"},
}

// Counters writes the engine counters that moved, per condition.
func Counters(w io.Writer, s result.Summary) {
	any := false
	for _, c := range s.Conditions {
		if len(c.Counters) == 0 {
			continue
		}
		var parts []string
		for _, k := range counterOrder {
			if v, ok := c.Counters[k.key]; ok && v >= 0.5 {
				parts = append(parts, fmt.Sprintf("%s %s", k.label, thousands(v)))
			}
		}
		if len(parts) == 0 {
			continue
		}
		if !any {
			fmt.Fprintln(w, "\ncounters (per second, median of runs):")
			any = true
		}
		fmt.Fprintf(w, "  %-28s %s\n", c.Name, strings.Join(parts, ", "))
	}
}

// Workers writes what each worker process ran and cost, per condition.
func Workers(w io.Writer, s result.Summary) {
	any := false
	for _, c := range s.Conditions {
		if len(c.Workers) == 0 {
			continue
		}
		if !any {
			fmt.Fprintln(w, "\nworkers (median of whole runs; CPU as a share of the worker's machine):")
			any = true
		}
		name := c.Name
		for _, k := range c.Workers {
			fmt.Fprintf(w, "  %-28s worker %d on %s: %d sessions, %s stmt/s, CPU %.0f%% (max %.0f%%)\n",
				name, k.Worker, k.Host, k.Sessions, thousands(k.Throughput), k.CPUPct, k.CPUPctMax)
			name = ""
		}
	}
}
