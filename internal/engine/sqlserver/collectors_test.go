package sqlserver

// The rows and XML under testdata/rows and testdata/xe are constructed from
// the documented formats of sys.dm_os_wait_stats,
// sys.dm_os_performance_counters, sys.dm_os_ring_buffers and the XE
// targets' target_data (learn.microsoft.com pages cited in collectors.go),
// because no SQL Server runs here; the expected deltas in the tables are
// worked out by hand from them. live_test.go reads the same views on a
// real server where OBSBENCH_TEST_MSSQL is set.

import (
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine"
)

var update = flag.Bool("update", false, "rewrite golden files")

// readRows reads a recorded result: tab-separated, a header line first.
func readRows(t *testing.T, name string) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "rows", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var out [][]string
	for _, l := range lines[1:] {
		out = append(out, strings.Split(l, "\t"))
	}
	return out
}

func readXML(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "xe", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestDiffWaits(t *testing.T) {
	before, err := ParseWaitStats(readRows(t, "waits-before.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := ParseWaitStats(readRows(t, "waits-after.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	got, cleared := DiffWaits(before, after)
	want := []WaitDelta{
		{Type: "XE_DISPATCHER_WAIT", Tasks: 2, WaitMS: 60000, SignalMS: 0, Background: true},
		{Type: "XE_TIMER_EVENT", Tasks: 30, WaitMS: 60000, SignalMS: 10, Background: true},
		{Type: "SOS_SCHEDULER_YIELD", Tasks: 90000, WaitMS: 7000, SignalMS: 6990},
		{Type: "XE_BUFFERMGR_FREEBUF_EVENT", Tasks: 512, WaitMS: 4410, SignalMS: 12}, // new since before
	}
	if cleared || !reflect.DeepEqual(got, want) {
		t.Errorf("DiffWaits = %+v, cleared %v;\nwant %+v (WRITELOG and PAGEIOLATCH_SH did not move)", got, cleared, want)
	}
	// Someone ran DBCC SQLPERF('sys.dm_os_wait_stats', CLEAR) mid-window.
	got, cleared = DiffWaits(after, []WaitStat{{Type: "SOS_SCHEDULER_YIELD", Tasks: 10, WaitMS: 3, SignalMS: 3}})
	if !cleared || len(got) != 1 || got[0].WaitMS != 3 {
		t.Errorf("after a clear: %+v, cleared %v; want the after values and cleared", got, cleared)
	}
	if p := WaitProfile(after); p["WRITELOG"] != 61234000 {
		t.Errorf("WaitProfile WRITELOG = %d µs; want 61,234,000", p["WRITELOG"])
	}
}

func TestCounterRates(t *testing.T) {
	read := func(name string) map[string]float64 {
		cs, err := ParsePerfCounters(readRows(t, name))
		if err != nil {
			t.Fatal(err)
		}
		return CounterMap(cs, "obsbench")
	}
	rates := Rates(read("counters-before.tsv"), read("counters-after.tsv"), 60)
	want := map[string]float64{
		"batch_requests":              1000,   // 1,000,000 -> 1,060,000
		"transactions":                500,    // 500,000 -> 530,000
		"log_flushes":                 100,    // 200,000 -> 206,000
		"log_bytes_flushed":           500000, // 900 MB -> 930 MB
		"write_transactions":          100,    // 190,000 -> 196,000
		"transaction_delay_ms":        5400,   // obsbench +264,000, sales +60,000 (summed: no _Total)
		"mirrored_write_transactions": 100,    // obsbench +6,000, sales +0
		// The dataset database's own instance, beside the sum.
		"db_transaction_delay_ms":        4400, // obsbench +264,000
		"db_mirrored_write_transactions": 100,
	}
	if !reflect.DeepEqual(rates, want) {
		t.Errorf("Rates = %v;\nwant %v", rates, want)
	}
	if d, ok := AvgTransactionDelayMS(rates); !ok || d != 44 {
		t.Errorf("average transaction delay = %v, %v; want 44 ms, the dataset database's own", d, ok)
	}
	if _, ok := AvgTransactionDelayMS(map[string]float64{"transaction_delay_ms": 5}); ok {
		t.Error("a delay without mirrored transactions has no average")
	}

	// A named instance's prefix; _Total preferred over the databases;
	// ratio counters left out.
	named := read("counters-named-instance.tsv")
	if want := map[string]float64{"batch_requests": 77, "log_flushes": 40, "transaction_delay_ms": 500, "db_log_flushes": 9, "db_transaction_delay_ms": 400}; !reflect.DeepEqual(named, want) {
		t.Errorf("named instance = %v; want %v", named, want)
	}

	tests := []struct {
		name          string
		before, after map[string]float64
		want          map[string]float64
	}{
		{"gauge is the end value", map[string]float64{"gauge_x": 5}, map[string]float64{"gauge_x": 9}, map[string]float64{"x": 9}},
		{"reset is left out", map[string]float64{"x": 50}, map[string]float64{"x": 10}, map[string]float64{}},
		{"new counter has no rate", map[string]float64{}, map[string]float64{"x": 10}, map[string]float64{}},
	}
	for _, tt := range tests {
		if got := Rates(tt.before, tt.after, 10); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v; want %v", tt.name, got, tt.want)
		}
	}
	gauge := CounterMap([]PerfCounter{{Counter: "Transaction Delay", Instance: "_Total", Value: 7, Type: PerfCounterLargeRawCount}}, "obsbench")
	if gauge["gauge_transaction_delay_ms"] != 7 || len(gauge) != 1 {
		t.Errorf("a raw count is a gauge: %v", gauge)
	}
}

func TestSchedulerCPU(t *testing.T) {
	rec := readXML(t, "scheduler_monitor.xml")
	p, idle, err := ParseSchedulerRecord(rec)
	if err != nil || p != 37 || idle != 58 {
		t.Fatalf("ParseSchedulerRecord = %d, %d, %v; want 37, 58", p, idle, err)
	}
	samples, err := ParseSchedulerRows([][]string{{"30000", rec}, {"90000", strings.Replace(rec, ">37<", ">80<", 1)}, {"200000", strings.Replace(rec, ">37<", ">5<", 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if samples[1].Age != 90*time.Second || samples[1].ProcessPct != 80 {
		t.Errorf("sample = %+v", samples[1])
	}
	if pct, n, ok := ServerCPU(samples, 2*time.Minute); !ok || n != 2 || math.Abs(pct-58.5) > 1e-9 {
		t.Errorf("ServerCPU(2m) = %v over %d, %v; want 58.5 over the 2 records within", pct, n, ok)
	}
	if _, _, ok := ServerCPU(samples, 10*time.Second); ok {
		t.Error("no record within 10 s; want ok = false")
	}
	if _, err := ParseSchedulerRows([][]string{{"x", rec}}); err == nil || !strings.Contains(err.Error(), `row 1 column 1: "x" is not an integer`) {
		t.Errorf("bad age: %v", err)
	}
	if _, _, err := ParseSchedulerRecord("<Record><SchedulerMonitorEvent/></Record>"); err == nil {
		t.Error("a record without SystemHealth parsed")
	}
}

func TestXETargets(t *testing.T) {
	ring := readXML(t, "ring_buffer.xml")
	st, err := ParseRingBuffer(ring)
	if err != nil || st != (RingBufferStats{TotalProcessed: 7, EventCount: 7}) {
		t.Errorf("ParseRingBuffer = %+v, %v", st, err)
	}
	// Tagged statement events: the first sql_statement_completed, the
	// second sp_statement_completed and the last sql_statement_completed
	// (its tag in an action); not the untagged one, the tab72 one, or the
	// rpc and batch events, whose names are not asked for.
	n, err := CountRingEvents(ring, []string{"sql_statement_completed", "sp_statement_completed"}, "obsbench-credit-top1")
	if err != nil || n != 3 {
		t.Errorf("CountRingEvents = %d, %v; want 3", n, err)
	}
	st, err = ParseRingBuffer(readXML(t, "ring_buffer_truncated.xml"))
	if err != nil || !st.Truncated || st.Dropped != 183233 || st.TotalProcessed != 184233 {
		t.Errorf("truncated ring = %+v, %v", st, err)
	}
	c, err := CounterTotal(readXML(t, "event_counter.xml"), []string{"sql_statement_completed", "sp_statement_completed"})
	if err != nil || c != 42000 {
		t.Errorf("CounterTotal = %d, %v; want 40,112 + 1,888", c, err)
	}
	h, err := HistogramSlots(readXML(t, "histogram.xml"))
	if err != nil || !reflect.DeepEqual(h, map[string]int64{"S": 91822, "IS": 20417, "Sch-S": 311}) {
		t.Errorf("HistogramSlots = %v, %v", h, err)
	}
	for name, f := range map[string]func() error{
		"malformed": func() error { _, err := CountRingEvents("<RingBufferTarget><event name=", nil, "x"); return err },
		"empty":     func() error { _, err := CounterTotal("", nil); return err },
		"bad count": func() error {
			_, err := CounterTotal(`<CounterTarget><Event name="a" count="many"/></CounterTarget>`, []string{"a"})
			return err
		},
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	loss, err := ParseXESessionLoss([][]string{{"system_health", "0", "0", "0"}, {"obsbench_x", "12", "1", "812"}})
	if err != nil || loss[1] != (XESessionLoss{Name: "obsbench_x", DroppedEvents: 12, DroppedBuffers: 1, BlockedFireTime: 812}) {
		t.Errorf("ParseXESessionLoss = %+v, %v", loss, err)
	}
	if _, err := ParseWaitStats([][]string{{"WRITELOG", "1", "x", "0"}}); err == nil || !strings.Contains(err.Error(), `row 1 column 3: "x" is not an integer`) {
		t.Errorf("bad wait row: %v", err)
	}
	if _, err := ParsePerfCounters([][]string{{"a", "b"}}); err == nil || !strings.Contains(err.Error(), "row 1 has 2 columns, want 5") {
		t.Errorf("short counter row: %v", err)
	}
}

// The collectors' queries, checked in: go test -run TestCollectorQueriesGolden -update.
func TestCollectorQueriesGolden(t *testing.T) {
	var b strings.Builder
	for _, q := range []struct{ name, sql string }{
		{"WaitStatsSQL", WaitStatsSQL}, {"PerfCountersSQL", PerfCountersSQL("obsbench")}, {"SchedulerCPUSQL", SchedulerCPUSQL},
		{"XESessionLossSQL", XESessionLossSQL}, {"ActiveWaitsSQL", ActiveWaitsSQL},
		{"InspectTracesSQL", InspectTracesSQL}, {"InspectSessionsSQL", InspectSessionsSQL}, {"InspectAuditsSQL", InspectAuditsSQL},
		{"replicasSQL", replicasSQL},
	} {
		b.WriteString("-- " + q.name + "\n" + q.sql + ";\n\n")
	}
	checkGolden(t, filepath.Join("testdata", "golden", "collectors.sql.golden"), b.String())
}

// checkGolden compares got with the golden file at path, or writes it
// with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v (run with -update to write it)", err)
		return
	}
	if got != string(want) {
		t.Errorf("T-SQL differs from %s (run with -update and review the diff):\n%s", path, got)
	}
}

// paddedColumns are the nchar columns the collectors read with LIKE, by
// view: nchar(n) values are padded with blanks to n characters
// (sys-dm-os-performance-counters-transact-sql: object_name, counter_name,
// instance_name are nchar(128)).
var paddedColumns = []string{"object_name", "counter_name", "instance_name"}

// likeOnPadded lists the LIKEs of query on a padded column that is not
// trimmed first. "LIKE (Transact-SQL)": with Unicode data (nchar,
// nvarchar) trailing blanks are significant, so N'%:Databases' never
// matches a padded 'SQLServer:Databases    ...'.
// https://learn.microsoft.com/sql/t-sql/language-elements/like-transact-sql
func likeOnPadded(query string) []string {
	var out []string
	for _, col := range paddedColumns {
		re := regexp.MustCompile(`(?i)(\w*\(?)\b` + col + `\)?\s+(NOT\s+)?LIKE\b`)
		for _, m := range re.FindAllStringSubmatch(query, -1) {
			if !strings.EqualFold(m[1], "RTRIM(") && !strings.EqualFold(m[1], "TRIM(") {
				out = append(out, strings.TrimSpace(m[0]))
			}
		}
	}
	return out
}

func TestPaddedColumnsTrimmedBeforeLike(t *testing.T) {
	// The query as it was: every counter came back empty.
	old := `WHERE (object_name LIKE N'%:SQL Statistics' AND counter_name = N'Batch Requests/sec')`
	if got := likeOnPadded(old); len(got) != 1 {
		t.Errorf("the check misses the untrimmed LIKE of %q: %v", old, got)
	}
	for name, q := range map[string]string{
		"PerfCountersSQL": PerfCountersSQL("obsbench"), "WaitStatsSQL": WaitStatsSQL, "SchedulerCPUSQL": SchedulerCPUSQL,
		"XESessionLossSQL": XESessionLossSQL, "ActiveWaitsSQL": ActiveWaitsSQL, "InspectTracesSQL": InspectTracesSQL,
		"InspectSessionsSQL": InspectSessionsSQL, "InspectAuditsSQL": InspectAuditsSQL, "replicasSQL": replicasSQL,
	} {
		if bad := likeOnPadded(q); len(bad) > 0 {
			t.Errorf("%s: LIKE on a blank-padded nchar column, never matching: %v", name, bad)
		}
	}
}

// What a target's count cannot tell is said, not reported as loss.
func TestTargetNotes(t *testing.T) {
	st, err := ParseRingBuffer(readXML(t, "ring_buffer_truncated.xml"))
	if err != nil {
		t.Fatal(err)
	}
	notes := RingNotes(st)
	if len(notes) != 2 || !strings.Contains(notes[0], "received 184233 events and pushed out the oldest 183233") || !strings.Contains(notes[1], "cut at 4 MB") {
		t.Errorf("RingNotes = %q", notes)
	}
	full, err := ParseRingBuffer(readXML(t, "ring_buffer.xml"))
	if err != nil || len(RingNotes(full)) != 0 {
		t.Errorf("a ring that neither wrapped nor was cut has notes: %q, %v", RingNotes(full), err)
	}
	if RolloverNote(3, 5) != "" || !strings.Contains(RolloverNote(5, 5), "max_rollover_files (5 files)") || RolloverNote(9, 0) != "" {
		t.Error("RolloverNote: wrong at 3 of 5, 5 of 5 or without a limit")
	}
	// "Targets for Extended Events", event_file: the server deletes the
	// oldest file when it opens one past max_rollover_files; at the limit
	// none need have gone yet, so the note does not say one did.
	if note := RolloverNote(5, 5); strings.Contains(note, "the server deleted the oldest") || !strings.Contains(note, "any file it deleted") {
		t.Errorf("RolloverNote(5, 5) = %q; want deletion as possible, not as done", note)
	}
	// Histogram: "When this value is reached, new events that do not
	// belong to the existing groups are ignored"; slots default to 256
	// and are rounded up to the next power of 2.
	for option, want := range map[string]int{"": 256, "16": 16, "10": 16, "1": 1, "300": 512} {
		if got := HistogramSlotCount(option); got != want {
			t.Errorf("HistogramSlotCount(%q) = %d; want %d", option, got, want)
		}
	}
	if HistogramNote(3, 16) != "" || !strings.Contains(HistogramNote(16, 16), "do not belong to the existing groups are ignored") {
		t.Errorf("HistogramNote: wrong at 3 of 16 or 16 of 16 groups: %q", HistogramNote(16, 16))
	}
}

// sys.dm_os_wait_stats
// (learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql):
// "The contents of this dynamic management view can be reset by running
// the following command: DBCC SQLPERF ('sys.dm_os_wait_stats', CLEAR);
// ... This command resets all counters to 0." A clear inside a window
// leaves waits lower than at its start, or gone (the query leaves out the
// waits at 0): the run carries the error, not a window of small waits.
func TestWaitStatsCleared(t *testing.T) {
	before, err := ParseWaitStats(readRows(t, "waits-before.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := ParseWaitStats(readRows(t, "waits-after.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	var _ engine.WaitProfileDiffer = s
	growth, err := engine.EngineWaitGrowth(s, WaitProfile(before), WaitProfile(after))
	if err != nil || growth["SOS_SCHEDULER_YIELD"] != 7000*1000 || growth["WRITELOG"] != 0 {
		t.Errorf("a window without a clear: %v, %v; want SOS_SCHEDULER_YIELD's 7,000 ms and no error", growth, err)
	}
	// Cleared mid-window: the waits started again from 0, and those that
	// did not recur since are gone from the view.
	cleared := WaitProfile([]WaitStat{{Type: "SOS_SCHEDULER_YIELD", Tasks: 10, WaitMS: 3, SignalMS: 3}, {Type: "XE_TIMER_EVENT", Tasks: 1, WaitMS: 1000}})
	for name, end := range map[string]map[string]int64{
		"lower":   cleared,
		"gone":    func() map[string]int64 { m := WaitProfile(after); delete(m, "WRITELOG"); return m }(),
		"nothing": {},
	} {
		growth, err := engine.EngineWaitGrowth(s, WaitProfile(before), end)
		if !errors.Is(err, ErrWaitsCleared) || growth != nil || !strings.Contains(err.Error(), "statistics were cleared") {
			t.Errorf("%s: %v, %v; want ErrWaitsCleared and no waits", name, growth, err)
		}
	}
}
