package sqlserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/observer"
)

// The four ways the event count disagreed with Microsoft's documentation,
// each as a test named after its fault. No SQL Server runs
// here: each test states the documented behaviour it is built from, and
// checks the count's code or its T-SQL against it.

// rolloverServer is what sp_trace_create documents of a rollover trace
// after it has opened its n-th file: files base.trc, base_1.trc, ..., and
// with max_rollover_files m "SQL Server tries to maintain no more than
// max_rollover_files trace files by deleting the oldest trace file before
// opening a new trace file"
// (learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-trace-create-transact-sql).
// It returns the files kept, oldest first; the last is the one
// sys.traces.path names.
func rolloverServer(base string, n, m int) []string {
	var files []string
	for i := 0; i < n; i++ {
		if m > 0 && len(files) == m {
			files = files[1:] // deleted before the new file opens
		}
		name := base + ".trc"
		if i > 0 {
			name = fmt.Sprintf("%s_%d.trc", base, i)
		}
		files = append(files, name)
	}
	return files
}

// Rollover: a counted trace with max_files counts from the oldest file the
// server kept, and says how many it deleted. fn_trace_gettable reads from
// "the initial trace file to be read" on
// (learn.microsoft.com/sql/relational-databases/system-functions/sys-fn-trace-gettable-transact-sql):
// the count used to name the first file, which the server deletes once
// the trace has opened max_files + 1 files, so the count failed.
func TestRolloverCountsFromTheOldestFileKept(t *testing.T) {
	base := `C:\MSSQL\Log\obsbench-trace-locks-file-20261122T000000`
	for _, m := range []int{0, 1, 5, 10} {
		for n := 1; n <= 25; n++ {
			kept := rolloverServer(base, n, m)
			first, deleted, err := TraceFirstFile(base, kept[len(kept)-1], m)
			if err != nil || first != kept[0] || deleted != n-len(kept) {
				t.Errorf("max_files %d, %d files opened: first %q, %d deleted, %v; the server keeps %q on, %d deleted",
					m, n, first, deleted, err, kept[0], n-len(kept))
			}
		}
	}
	for _, bad := range []string{base + "_0.trc", base + "_x.trc", base + ".xel", `C:\other.trc`, base + "-2.trc"} {
		if _, _, err := TraceFirstFile(base, bad, 10); err == nil {
			t.Errorf("TraceFirstFile took %s as a file of %s", bad, base)
		}
	}
	if note := TraceRolloverNote(3, 10); !strings.Contains(note, "deleted the oldest 3") || !strings.Contains(note, "not counted") {
		t.Errorf("note %q does not say what was deleted and not counted", note)
	}

	// Every counted catalog trace with max_files finds the file the
	// server writes before it counts, and stops the trace first so that
	// the file is whole.
	cat := servertest.Catalog(t)
	checked := 0
	for _, o := range cat.All("sqlserver") {
		if traceOf(o) == nil || o.Events == nil || traceOf(o).MaxFiles == 0 {
			continue
		}
		checked++
		stmts := countStatements(o, goldenEnv, "obsbench-tag")
		path := TracePath(o, goldenEnv)
		stop := slices.Index(stmts, StopTraceSQL(path))
		current := slices.Index(stmts, CurrentTraceFileSQL(path))
		count := slices.IndexFunc(stmts, func(s string) bool { return strings.Contains(s, "fn_trace_gettable") })
		if stop < 0 || current < stop || count < current {
			t.Errorf("%s counts without finding its oldest kept file after the stop:\n%s", o.Name, strings.Join(stmts, "\n"))
		}
	}
	if checked < 2 {
		t.Errorf("%d counted traces with max_files; the catalog's lock traces have it", checked)
	}
}

// Blocked: the blocked time reported as the observer's is its own
// session's. sys.dm_xe_sessions.blocked_event_fire_time is "The length of
// time that event firings were blocked when buffers were full", of "an
// active extended events session", with no unit given
// (learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-sessions-transact-sql),
// while XE_BUFFERMGR_FREEBUF_EVENT in sys.dm_os_wait_stats "occurs when
// either of the following conditions is true: An Extended Events session
// is configured for no event loss, and all buffers in the session are
// currently full. ... Audits experience a delay"
// (learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql):
// any other session or audit adds to it. The count used to report the
// wait's growth as the observer's.
func TestBlockedIsTheSessionsOwn(t *testing.T) {
	o := servertest.CatalogObserver(t, "sqlserver", "xe-locks-ring-buffer-no-loss")
	// Another NO_EVENT_LOSS session on the server waited 9,000 ms; this
	// session's firing was blocked 250 ms.
	e := &EventCount{source: SourceXE, target: "ring_buffer", blocks: true, serverWait0: 1_000}
	e.take(sessionCounters{lost: 0, lostBuf: 0, blocked: 250, has: true, serverWait: 10_250})
	if ms, ok, _ := e.EngineBlocked(context.Background()); !ok || ms != 250 {
		t.Errorf("blocked %d ms (%v); want the session's own 250 ms", ms, ok)
	}
	if len(e.notes) != 1 || !strings.Contains(e.notes[0], "server-wide") || !strings.Contains(e.notes[0], "9250 ms") {
		t.Errorf("notes %q; want the server's 9,250 ms as a server-wide line", e.notes)
	}
	// The statement that reads it is the session's row of
	// sys.dm_xe_sessions; the wait stats are read only beside it.
	stmts := countStatements(o, goldenEnv, "obsbench-tag")
	own := SessionCountersSQL(SessionName(o))
	if !slices.Contains(stmts, own) || !strings.Contains(own, "blocked_event_fire_time") || !strings.Contains(own, "name = N'"+SessionName(o)+"'") {
		t.Errorf("the count does not read the session's blocked_event_fire_time:\n%s", strings.Join(stmts, "\n"))
	}
	// A session that may drop events never blocks: no figure, no note.
	lossy := &EventCount{source: SourceXE, target: "ring_buffer"}
	lossy.take(sessionCounters{blocked: 0, has: true, serverWait: 5_000})
	if _, ok, _ := lossy.EngineBlocked(context.Background()); ok || len(lossy.notes) > 0 {
		t.Errorf("a lossy session got a blocked figure or a note: %v", lossy.notes)
	}
}

// Flush: an asynchronous target is read only after what the session
// buffered has reached it. "Unlike most targets, the event_counter target
// processes synchronously the data it receives"
// (learn.microsoft.com/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server);
// MAX_DISPATCH_LATENCY "Specifies the amount of time that events will be
// buffered in memory before being dispatched to event session targets. By
// default, this value is set to 30 seconds", and INFINITE flushes "only
// when the buffers are full, or when the event session closes"
// (learn.microsoft.com/sql/t-sql/statements/create-event-session-transact-sql).
// A file target is flushed by stopping its session; an in-memory target
// would be emptied by the stop ("when you stop a session that uses an
// in-memory target, all the information that is stored in the session's
// buffer will be lost", SQL Server Extended Events Targets,
// learn.microsoft.com/previous-versions/sql/sql-server-2008-r2/bb630339(v=sql.105)),
// so the count waits the latency out. The count used to read them at once.
func TestFlushBeforeReadingAnAsynchronousTarget(t *testing.T) {
	synchronous := map[string]bool{"event_counter": true}
	cat := servertest.Catalog(t)
	kinds := map[string]int{}
	for _, o := range cat.All("sqlserver") {
		if sessionOf(o) == nil || o.Events == nil {
			continue
		}
		target := countableTarget(sessionOf(o))
		kinds[target]++
		stmts := countStatements(o, goldenEnv, "obsbench-tag")
		read := slices.IndexFunc(stmts, func(s string) bool {
			return strings.Contains(s, "sys.dm_xe_session_targets") || strings.Contains(s, "COUNT_BIG(*) FROM sys.fn_xe_file_target_read_file")
		})
		latency := 30 * time.Second
		if l := sessionOf(o).MaxDispatchLatency; l != "" {
			latency, _ = time.ParseDuration(l)
		}
		wait := FlushWait(sessionOf(o), target)
		switch {
		case synchronous[target]:
			if wait != 0 {
				t.Errorf("%s: waits %s before reading a synchronous %s", o.Name, wait, target)
			}
		case target == "event_file":
			if stop := slices.Index(stmts, StopSessionSQL(SessionName(o))); stop < 0 || stop > read {
				t.Errorf("%s: reads its files without stopping the session first:\n%s", o.Name, strings.Join(stmts, "\n"))
			}
		default:
			if wait <= latency {
				t.Errorf("%s: waits %s before reading its %s; its buffers are dispatched within %s", o.Name, wait, target, latency)
			}
			if read < 0 || !strings.HasPrefix(stmts[0], "-- wait") {
				t.Errorf("%s: the plan does not show the wait before the read:\n%s", o.Name, strings.Join(stmts, "\n"))
			}
			if slices.Contains(stmts, StopSessionSQL(SessionName(o))) {
				t.Errorf("%s: stops the session, which empties its %s, before reading it", o.Name, target)
			}
		}
	}
	for _, k := range countable {
		if kinds[k] == 0 {
			t.Errorf("no counted catalog session with a %s target", k)
		}
	}
	// INFINITE leaves the last buffers undispatched until the session
	// stops: refused for a counted ring_buffer or histogram.
	ring := observer.Observer{Name: "x", Engine: "sqlserver", Objects: observer.Objects{SourceXE: &XESession{
		Events: []XEEvent{{Name: "sqlserver.lock_acquired"}}, Targets: []XETarget{{Kind: "ring_buffer"}}, MaxDispatchLatency: "INFINITE"}},
		Events: &observer.EventCounter{Source: "xe", Match: "lock_acquired", Volume: true}}
	if err := checkXECount(ring); err == nil || !strings.Contains(err.Error(), "INFINITE") {
		t.Errorf("a counted ring_buffer with INFINITE latency: %v; want refused", err)
	}
	sessionOf(ring).MaxDispatchLatency = "5s"
	if err := checkXECount(ring); err != nil {
		t.Errorf("a counted ring_buffer with a 5s latency: %v", err)
	}
	if w := FlushWait(sessionOf(ring), "ring_buffer"); w != 6*time.Second {
		t.Errorf("wait %s for a 5s latency; want 6s", w)
	}
}

// Every target counts over one window: from the apply (its session or
// trace is new then) to the count. StartEvents reads none of them, so
// nothing between the apply and the run is subtracted from one target's
// count and left in another's.
func TestCountWindowIsTheSameForEveryTarget(t *testing.T) {
	cat := servertest.Catalog(t)
	for _, o := range cat.All("sqlserver") {
		for _, st := range startStatements(o) {
			for _, target := range []string{"sys.dm_xe_session_targets", "fn_xe_file_target_read_file", "fn_trace_gettable", "sys.dm_xe_sessions", "sys.traces"} {
				if strings.Contains(st, target) {
					t.Errorf("%s: StartEvents reads %s (%s): its count would start later than a file's", o.Name, target, st)
				}
			}
		}
	}
}

// "Transact-SQL Statements That Produce Showplans"
// (learn.microsoft.com/previous-versions/sql/sql-server-2008-r2/ms187886(v=sql.105))
// lists the statements that produce Showplan output for the Profiler's
// execute events: DML ("All DML (SELECT, INSERT, UPDATE, and DELETE)"),
// EXECUTE, and not transaction control. pgbench's BEGIN and END go out as
// BEGIN and COMMIT TRANSACTION, executed and counted by the driver, with
// no plan: a count of plan events says so beside its number, so that the
// two of seven statements of tpcb-like are not read as lost plans.
func TestPlanlessStatements(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"xe-plans-file", "trace-plans-file"} {
		o := servertest.CatalogObserver(t, "sqlserver", name)
		ec, err := (&Applied{obs: o, env: goldenEnv}).StartEvents(ctx, "obsbench-pgbench")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if notes := ec.(*EventCount).EventNotes(); !slices.Contains(notes, PlanlessNote) {
			t.Errorf("%s: notes %q; want the plan-less statements noted", name, notes)
		}
	}
	if notes := planNotes(servertest.CatalogObserver(t, "sqlserver", "xe-plans-file-no-loss")); !slices.Equal(notes, []string{PlanlessNote}) {
		t.Errorf("xe-plans-file-no-loss: notes %q; want PlanlessNote", notes)
	}
	for _, name := range []string{"xe-audit-file", "trace-activity-file", "xe-locks-file", "xe-statements-counter"} {
		if notes := planNotes(servertest.CatalogObserver(t, "sqlserver", name)); notes != nil {
			t.Errorf("%s counts statements, not plans, yet is noted: %q", name, notes)
		}
	}
	if !strings.Contains(Translate("END"), "COMMIT TRANSACTION") || !strings.Contains(PlanlessNote, "COMMIT TRANSACTION") {
		t.Errorf("the note names %q, not what pgbench's END becomes (%q)", PlanlessNote, Translate("END"))
	}
}
