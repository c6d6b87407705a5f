package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/study"
)

// Replay writes study 2's table: for each set-up, how long one replay of
// the capture took, the degradation against the baseline, statements per
// second, statement errors and events; then each set-up's throughput over
// time in 5-second buckets, and the transients found in it.
func Replay(w io.Writer, st study.Study, s result.Summary) error {
	fmt.Fprintf(w, "%s\n%s\n\n", st.Title, st.Question)
	byName := conditionsByName(s)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "set-up\tstands for\treplay s\toverhead % [CI]\tstmts/s\tfailed stmts\tevents rec/exec\ttransients")
	for _, r := range st.Rows {
		c, ok := byName[r.Observer]
		if !ok {
			fmt.Fprintf(tw, "%s\t%s\tnot run\n", r.Observer, r.Original)
			continue
		}
		ov := "-"
		if r.Observer != "baseline" {
			ov = overheadCell(c.Overhead)
		}
		trans := "none"
		rounds := map[int]bool{}
		for _, t := range c.Transients {
			rounds[t.Round] = true
		}
		if len(rounds) > 0 {
			trans = fmt.Sprintf("in %d of %d runs", len(rounds), len(c.Throughput.Runs))
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\n", r.Observer, r.Original, c.RunSeconds, ov,
			thousands(c.Throughput.Median), thousands(float64(c.StatementErrors)), events(c.Events), trans)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nstatements/s every 5 s (mean over rounds):")
	tw = tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, r := range st.Rows {
		c, ok := byName[r.Observer]
		if !ok || len(c.Series) == 0 {
			continue
		}
		cells := make([]string, len(c.Series))
		for i, v := range c.Series {
			cells[i] = fmt.Sprintf("%.0f", v)
		}
		fmt.Fprintf(tw, "  %s\t%s\n", r.Observer, strings.Join(cells, " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range st.Rows {
		for _, t := range byName[r.Observer].Transients {
			fmt.Fprintf(w, "transient: %s, round %d: %s\n", r.Observer, t.Round, t.Note)
		}
	}
	for _, u := range st.Unmapped {
		fmt.Fprintf(w, "not reproduced: %s\n", u)
	}
	return nil
}
