package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
)

// Markdown writes s as a markdown section to paste into an issue, a wiki
// or a pull request: the heading line, the table of conditions with the
// figures that answer "what does it cost" (the rest is in the text and
// JSON formats), then how each row was measured and the warnings.
func Markdown(w io.Writer, s result.Summary) error {
	fmt.Fprintf(w, "**%s**\n\n", mdEscape(strings.TrimPrefix(heading(s), "obsbench: ")))
	counted := hasCounted(s)
	head, rule := "| condition | measures | stmts/s | ref stmts/s | overhead % [95% CI] | verdict | p50 ms | p99 ms | events rec/exec | server CPU/stmt Δ% [CI] |",
		"|---|---|---:|---:|---:|---|---:|---:|---:|---:|"
	if counted {
		head, rule = head+" instr/stmt Δ% [CI] | others Δ% [CI] |", rule+"---:|---:|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	for _, c := range s.Conditions {
		ov, verdict, ref := overheadCells(c)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %.3f | %.3f | %s | %s |",
			mdEscape(c.Name), mdEscape(measuresCell(c)), thousands(c.Throughput.Median), ref, mdEscape(ov), mdEscape(verdict),
			c.LatencyMS.P50, c.LatencyMS.P99, mdEscape(events(c.Events)), changeCell(c.CPUChange))
		if counted {
			session, others := countedCells(s, c)
			fmt.Fprintf(w, " %s | %s |", session, others)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	for _, c := range s.Conditions {
		if c.Method != "" {
			fmt.Fprintf(w, "- %s: %s\n", mdEscape(c.Name), mdEscape(c.Method))
		}
	}
	if s.MDEPct != nil {
		fmt.Fprintf(w, "- resolution: an overhead of %.1f%% or more is detected with 80%% power (from the A/A phases)\n", *s.MDEPct)
	}
	for _, l := range sharedLines(s) {
		fmt.Fprintf(w, "- shared: %s\n", mdEscape(l))
	}
	fmt.Fprintf(w, "- method: %s\n", mdEscape(s.Method))
	countedNotes(w, s, "- ", false)
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "- warning: %s\n", mdEscape(warn))
	}
	return nil
}

// mdEscape keeps a cell's text from ending its table cell or starting
// emphasis.
var mdEscape = strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`).Replace
