package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/study"
)

// Replay writes study 2's table: for each set-up, how long one replay of
// the capture took, the degradation against the baseline, statements per
// second, statement errors and events; then each set-up's throughput over
// time in 5-second buckets, and the transients found in it.
func Replay(w io.Writer, st study.Study, s result.Summary) error {
	studyHeading(w, st)
	byName := conditionsByName(s)
	t := columns{head: []string{"set-up", "replay s", "overhead % [CI]", "stmts/s", "failed stmts", "events rec/exec", "transients"}, left: []bool{true}}
	for _, r := range st.Rows {
		c, ok := byName[r.Observer]
		if !ok {
			t.add(r.Observer, "not run")
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
		t.add(r.Observer, fmt.Sprintf("%.1f", c.RunSeconds), ov, thousands(c.Throughput.Median), thousands(float64(c.StatementErrors)), events(c.Events), trans)
	}
	if err := t.writeFitted(w, 1); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nwhat each set-up stands for:")
	for _, r := range st.Rows {
		notef(w, "  %s: %s", r.Observer, r.Original)
	}
	fmt.Fprintln(w, "\nstatements/s every 5 s (mean over rounds):")
	for _, r := range st.Rows {
		c, ok := byName[r.Observer]
		if !ok || len(c.Series) == 0 {
			continue
		}
		cells := make([]string, len(c.Series))
		for i, v := range c.Series {
			cells[i] = fmt.Sprintf("%.0f", v)
		}
		notef(w, "  %s: %s", r.Observer, strings.Join(cells, " "))
	}
	for _, r := range st.Rows {
		for _, t := range byName[r.Observer].Transients {
			notef(w, "transient: %s, round %d: %s", r.Observer, t.Round, t.Note)
		}
	}
	for _, u := range st.Unmapped {
		notef(w, "not reproduced: %s", u)
	}
	return nil
}
