package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/study"
)

// SyncCommit writes study 4's table: per workload and durability setting,
// seconds per 10,000 inserts, ms per insert, the overhead against
// synchronous commit to the standby, commits and log flushes per second,
// log bytes per second, the standby's lag (PostgreSQL: flush lag;
// MariaDB: mean wait for the acknowledgement) and the share of sampled
// session time spent waiting for the standby.
func SyncCommit(w io.Writer, st study.Study, sums []result.Summary) error {
	studyHeading(w, st)
	k := st.Commit
	wait := k.Wait
	if i := strings.Index(wait, "Waiting for"); i >= 0 {
		wait = "wait for " + strings.TrimPrefix(wait[i:], "Waiting for ")
	}
	t := columns{head: []string{"workload", "condition", "s per 10,000", "ms/insert", "overhead % [CI]", "commits/s", "log flushes/s", "log MB/s", k.LagLabel, wait + " %"},
		left: []bool{true, true}}
	for _, s := range sums {
		byName := conditionsByName(s)
		for _, r := range st.Rows {
			c, ok := byName[r.Observer]
			if !ok {
				continue
			}
			tp := c.Throughput.Median
			per10k, msPer := "-", "-"
			if tp > 0 {
				per10k = fmt.Sprintf("%.2f", 10000/tp)
				msPer = fmt.Sprintf("%.3f", float64(s.Clients)*1000/tp)
			}
			t.add(s.Workload, r.Observer, per10k, msPer, overheadCell(c.Overhead), counter(c, k.Commits, "%.0f"), counter(c, k.Flushes, "%.0f"),
				counterScaled(c, k.LogBytes, 1e-6, "%.2f"), counter(c, k.Lag, "%.2f"), waitShare(c, k.Wait))
		}
	}
	if err := t.writeFitted(w, 2); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nconditions (the study's set-up each stands for):")
	for _, r := range st.Rows {
		notef(w, "  %-26s %s", r.Observer, r.Original)
	}
	notef(w, "s per 10,000 = 10,000 / inserts per second; ms/insert = sessions / inserts per second; %s: %s; a speed-up reads as a ratio of throughputs (N× faster)", k.LagLabel, k.LagNote)
	for _, u := range st.Unmapped {
		notef(w, "not reproduced: %s", u)
	}
	return nil
}

// overheadCell is an overhead with its interval, in percent, "-" where
// there is none (the baseline, or a comparison that could not be made); a
// speed-up (the whole interval below zero) reads as a ratio of
// throughputs, "7.0× faster [5.5×, 9.8×]", since -596% says nothing at a
// glance.
func overheadCell(o *result.OverheadSummary) string {
	if !o.Measured() {
		return "-"
	}
	if o.CIHigh < 0 {
		return fmt.Sprintf("%s faster [%s, %s]", ratio(o.Pct), ratio(o.CIHigh), ratio(o.CILow))
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", o.Pct, o.CILow, o.CIHigh)
}

// ratio turns an overhead in percent, 1 - T/T(baseline), into T/T(baseline).
func ratio(pct float64) string {
	r := 1 - pct/100
	if r < 2 {
		return fmt.Sprintf("%.2f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}

func counter(c result.ConditionSummary, key, format string) string {
	return counterScaled(c, key, 1, format)
}

func counterScaled(c result.ConditionSummary, key string, scale float64, format string) string {
	v, ok := c.Counters[key]
	if !ok {
		return "-"
	}
	return fmt.Sprintf(format, v*scale)
}

// waitShare is wait's share of the condition's sampled session time, "-"
// when waits were not sampled. A wait not among the top ones is 0 when
// the top lists every wait seen, else below the smallest listed.
func waitShare(c result.ConditionSummary, wait string) string {
	if c.Waits == nil {
		return "-"
	}
	top := c.Waits.Top
	for _, t := range top {
		if t.Wait == wait {
			return fmt.Sprintf("%.1f", t.Pct)
		}
	}
	if len(top) < result.TopWaits {
		return "0.0"
	}
	return fmt.Sprintf("<%.1f", top[len(top)-1].Pct)
}
