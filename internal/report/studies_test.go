package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/sqlserver"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/study"
)

func cond(name string, tput float64, ov *result.OverheadSummary, counters map[string]float64) result.ConditionSummary {
	return result.ConditionSummary{Name: name, Throughput: result.ThroughputSummary{Median: tput}, Overhead: ov, Counters: counters}
}

func TestSweepPerThousand(t *testing.T) {
	ov := &result.OverheadSummary{Pct: 4, CILow: 2, CIHigh: 6, Verdict: "slower", Significant: true}
	audit := cond("audit", 19200, ov, nil)
	audit.Measures, audit.Window = result.MeasuresSwitchable, result.WindowOnPhases
	points := []report.SweepPoint{
		{Sessions: 2, Summary: result.Summary{Conditions: []result.ConditionSummary{cond("baseline", 20000, nil, nil), audit}}},
	}
	var b bytes.Buffer
	if err := report.Sweep(&b, points, 1000); err != nil {
		t.Fatal(err)
	}
	// 2 sessions at 20,000 statements/s: 0.1 ms a statement, 100 ms a
	// thousand-query, 1,200 thousand-queries a minute.
	checkHas(t, "sweep table", b.String(), "ms/unit", "unit: a thousand-query", "100.0", "1200.0", "4.0 [2.0, 6.0]", "slower",
		"only what a reload switches", "over its on phases")
	fitsTerminal(t, b.String())
}

func TestSyncCommitTable(t *testing.T) {
	st, err := study.Lookup("postgres", "sync-commit")
	if err != nil {
		t.Fatal(err)
	}
	base := cond("baseline", 2000, nil, map[string]float64{"xact_commit": 2000, "wal_sync": 1990, "wal_bytes": 250000, "replica_flush_lag_ms": 0.3})
	base.Waits = &result.WaitSummary{Top: []result.WaitShare{{Wait: "IPC:SyncRep", Pct: 41.5}}}
	off := cond("sync-commit-off", 8000, &result.OverheadSummary{Pct: -300, CILow: -320, CIHigh: -280, Verdict: "faster"}, nil)
	off.Waits = &result.WaitSummary{}
	sums := []result.Summary{{Workload: "inserts-autocommit", Clients: 1, Conditions: []result.ConditionSummary{base, off}}}
	var b bytes.Buffer
	if err := report.SyncCommit(&b, st, sums); err != nil {
		t.Fatal(err)
	}
	// 2,000 inserts/s: 5 s per 10,000, 0.5 ms an insert; 8,000/s: 1.25 s,
	// 4 times the baseline's rate (an overhead of -300%), read as a ratio.
	checkHas(t, "table", b.String(), "5.00", "0.500", "1.25", "0.125", "1990", "0.25", "0.30", "41.5", "4.0× faster [3.8×, 4.2×]", "IPC:SyncRep %")
	fitsTerminal(t, b.String())
}

func TestReliabilityVerdicts(t *testing.T) {
	run := func(recorded, executed int64) result.Run {
		return result.Run{Condition: "pgaudit-rotated", Driver: driverResult(executed),
			Events: &result.Events{Recorded: recorded, Executed: executed, Files: []result.FileCount{
				{Name: "a.log", Records: recorded / 2, Bytes: 10e6}, {Name: "b.log", Records: recorded - recorded/2, Bytes: 5e6}}}}
	}
	for _, tc := range []struct {
		r    result.Run
		want []string
	}{
		{run(1000, 1000), []string{"COMPLETE: one record per statement", "in 2 file(s)", "a.log", "b.log", "100 records/s, 1.50 MB/s", "per day"}},
		{run(990, 1000), []string{"INCOMPLETE: 10 statements have no record (1.0000%)"}},
		{run(1003, 1000), []string{"EXTRA: 3 more records than statements"}},
	} {
		var b bytes.Buffer
		if err := report.Reliability(&b, tc.r); err != nil {
			t.Fatal(err)
		}
		checkHas(t, "reliability", joinWrapped(b.String()), tc.want...)
		fitsTerminal(t, b.String())
	}
}

func driverResult(executed int64) driver.Result {
	return driver.Result{Clients: 4, Seconds: 10, Executed: executed}
}

// Study 3's table on SQL Server shows what each target lost: events and
// whole buffers the engine dropped, and a mark where the count cannot
// tell (the notes, among the warnings). The ring buffer's cells are read
// from a recorded target_data XML as obsbench reads a live one.
func TestTargetsLossColumns(t *testing.T) {
	st, err := study.Lookup("sqlserver", "targets")
	if err != nil {
		t.Fatal(err)
	}
	xml, err := os.ReadFile(filepath.Join("..", "engine", "sqlserver", "testdata", "xe", "ring_buffer_truncated.xml"))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := sqlserver.ParseRingBuffer(string(xml))
	if err != nil {
		t.Fatal(err)
	}
	n := func(v int64) *int64 { return &v }
	ov := func(p float64) *result.OverheadSummary {
		return &result.OverheadSummary{Pct: p, CILow: p - 3, CIHigh: p + 3, Verdict: "slower", Significant: true}
	}
	// Lock events are many per statement: each cell's count is its volume
	// (a ring's is what it received, also what it pushed out), beside
	// what the engine dropped or made statements wait for.
	conds := []result.ConditionSummary{
		cond("baseline", 20000, nil, nil),
		{Name: "xe-locks-ring-buffer", Overhead: ov(30), Events: &result.Events{Recorded: ring.TotalProcessed, Executed: 100000, Volume: true, EngineLost: n(0), EngineLostBuffers: n(0)}},
		{Name: "xe-locks-ring-buffer-multiple-loss", Overhead: ov(25), Events: &result.Events{Recorded: 170000, Executed: 100000, Volume: true, EngineLost: n(0), EngineLostBuffers: n(37)}},
		{Name: "xe-locks-ring-buffer-no-loss", Overhead: ov(41), Events: &result.Events{Recorded: 184000, Executed: 100000, Volume: true, EngineLost: n(0), EngineLostBuffers: n(0), EngineBlocked: n(1840)}},
		{Name: "xe-locks-file", Overhead: ov(22), Events: &result.Events{Recorded: 700000, Executed: 100000, Volume: true, EngineLost: n(0), EngineLostBuffers: n(0),
			Notes: []string{sqlserver.RolloverNote(10, 10)}}},
		{Name: "xe-locks-file-multiple-loss", Overhead: ov(20), Events: &result.Events{Recorded: 160000, Executed: 100000, Volume: true, EngineLost: n(1200), EngineLostBuffers: n(12)}},
		{Name: "xe-locks-file-filtered-out", Overhead: ov(9), Events: &result.Events{Recorded: 0, Executed: 100000, Volume: true, EngineLost: n(0), EngineLostBuffers: n(0)}},
	}
	var b bytes.Buffer
	if err := report.Targets(&b, st, result.Summary{Conditions: conds}); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, filepath.Join("testdata", "targets-sqlserver-loss.txt"), b.Bytes())
	fitsTerminal(t, b.String())
	checkHas(t, "table", joinWrapped(b.String()), "184,233 recorded (not per statement)", "(engine: 37 buffers lost)", "(engine: blocked 1,840 (unit undocumented))", "(engine: 1,200 lost, 12 buffers lost)",
		"700,000 recorded (not per statement) *", "0 recorded (not per statement)")
}

// Study 3 with its counted part: a second condensed table of each cell's
// counted change, the A/A cell the baseline's spread, and the counted
// change in each cell's line; a cell the counting stopped before says
// so rather than showing nothing.
func TestTargetsCounted(t *testing.T) {
	st, err := study.Lookup("postgres", "targets")
	if err != nil {
		t.Fatal(err)
	}
	ov := func(p float64) *result.OverheadSummary {
		return &result.OverheadSummary{Pct: p, CILow: p - 4, CIHigh: p + 4, Verdict: "slower", Significant: p > 4}
	}
	change := func(p, half float64) *result.CountChange {
		return &result.CountChange{Pct: p, Low: p - half, High: p + half, HasCI: true, Pairs: 4, Signif: p-half > 0}
	}
	conds := []result.ConditionSummary{cond("baseline", 30, nil, nil), {Name: result.AAName, Overhead: ov(0.5)}}
	counted := &result.Counted{Statements: 101, Warmup: 101, Rounds: 4, Sessions: 2,
		Conditions: []result.CountedCondition{{Name: "baseline", Runs: 4, BackendSpreadPct: 0.004}}}
	for i, c := range st.Matrix[1:] {
		conds = append(conds, result.ConditionSummary{Name: c.Observer, Overhead: ov(float64(i))})
		if c.Observer != "pg-wait-sampling" {
			counted.Conditions = append(counted.Conditions, result.CountedCondition{Name: c.Observer, Runs: 4, BackendChange: change(float64(i)/10, 0.01)})
		}
	}
	var b bytes.Buffer
	if err := report.Targets(&b, st, result.Summary{Conditions: conds, Counted: counted}); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, filepath.Join("testdata", "targets-counted.txt"), b.Bytes())
	fitsTerminal(t, b.String())
	checkHas(t, "table", joinWrapped(b.String()), "101 statements after 101 in each session, 4 run(s) each", "spread 0.004%", "+0.10 [0.09, 0.11]", "not counted")
}

// A counted run of study 3 alone: the condensed table of counted
// changes and each cell's session and other-process changes, on MariaDB
// (threads), without a timed column.
func TestTargetsCountedOnly(t *testing.T) {
	st, err := study.Lookup("mariadb", "targets")
	if err != nil {
		t.Fatal(err)
	}
	change := func(p, half float64) *result.CountChange {
		return &result.CountChange{Pct: p, Low: p - half, High: p + half, HasCI: true, Pairs: 8, Signif: p-half > 0}
	}
	counted := &result.Counted{Statements: 101, Rounds: 8, Threads: true,
		Conditions: []result.CountedCondition{{Name: "baseline", Runs: 8, BackendSpreadPct: 0.128}}}
	for i, c := range st.Matrix[1:] {
		if c.Observer != "perf-schema-waits" {
			counted.Conditions = append(counted.Conditions, result.CountedCondition{Name: c.Observer, Runs: 8,
				BackendChange: change(float64(i)/10, 0.05), HelperChange: change(float64(i), 1)})
		}
	}
	var b bytes.Buffer
	if err := report.TargetsCounted(&b, st, counted); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, filepath.Join("testdata", "targets-counted-only.txt"), b.Bytes())
	fitsTerminal(t, b.String())
	checkHas(t, "table", joinWrapped(b.String()), "101 statements after 0, 8 run(s) each", "spread 0.128%", "other threads instr/run", "+0.10 [0.05, 0.15]", "+1.00 [0.00, 2.00]", "not counted")
	if strings.Contains(b.String(), "overhead %") {
		t.Errorf("a counted run alone shows a timed column:\n%s", b.String())
	}
}

// fitsTerminal fails the test for each line of out over 100 columns.
func fitsTerminal(t *testing.T, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("line %d is %d columns; want at most 100:\n%s", i+1, n, line)
		}
	}
}

// wrapBreak is a line break and the indent after it in a wrapped note.
var wrapBreak = regexp.MustCompile(`\n +`)

// joinWrapped is out with each note wrapped at the width read as one line
// again: a line break and the indent after it become a space.
func joinWrapped(out string) string { return wrapBreak.ReplaceAllString(out, " ") }
