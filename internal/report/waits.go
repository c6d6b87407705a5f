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
			fmt.Fprintln(w)
			notef(w, "waits: %% of active-session samples (baseline %% in parentheses; * = signature: negligible in baseline, material with the observer)")
			any = true
		}
		if c.Waits.SamplerCPUPct != nil {
			samplerCPU = append(samplerCPU, *c.Waits.SamplerCPUPct)
		}
		labelled(w, c.Name, WaitLine(c.Waits, shownWaits))
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
			labelled(w, "", label.Source+": "+strings.Join(parts, ", "))
		case label.Missing != "":
			labelled(w, "", label.Source+": not collected ("+label.Missing+")")
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
	{"slot_wal_retained_bytes", "slot WAL retained B"},
	{"slot_reader_behind_bytes", "slot reader behind B"},
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
		labelled(w, c.Name, strings.Join(parts, ", "))
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
			labelled(w, name, fmt.Sprintf("worker %d on %s: %d sessions, %s stmt/s, CPU %.0f%% (max %.0f%%)",
				k.Worker, k.Host, k.Sessions, thousands(k.Throughput), k.CPUPct, k.CPUPctMax))
			name = ""
		}
	}
}

// labelled writes text after a condition's name, in a column of its own,
// wrapped at textWidth under the text's start: between the parts of a
// list, and within a part only where it is longer than a line.
func labelled(w io.Writer, name, text string) {
	const at = 31 // "  ", the name's column, " "
	var words []string
	for _, part := range strings.SplitAfter(text, ", ") {
		part = strings.TrimSuffix(part, " ")
		if len(part) > textWidth-at {
			words = append(words, strings.Split(part, " ")...)
			continue
		}
		words = append(words, part)
	}
	for _, line := range wrapWords(words, textWidth, fmt.Sprintf("  %-28s ", name), strings.Repeat(" ", at)) {
		fmt.Fprintln(w, line)
	}
}
