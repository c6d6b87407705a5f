package sqlserver

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/observer"
)

// Rows as sys.traces and the session views return them on a server with
// its default trace, a Profiler attached, system_health and one session
// left by obsbench.
func TestFormatInspection(t *testing.T) {
	tests := []struct {
		got  string
		want []string
	}{
		{FormatTrace(TraceRow{ID: 1, Status: 1, Path: `C:\MSSQL\Log\log_12.trc`, Default: true, MaxSizeMB: 20, MaxFiles: 5, Rollover: true, Events: 48213, Dropped: -1}),
			[]string{`trace 1, running, default trace C:\MSSQL\Log\log_12.trc: 48213 events, no drop counter; 20 MB files, rollover, 5 kept`}},
		{FormatTrace(TraceRow{ID: 2, Status: 1, Rowset: true, Events: 1200, Dropped: 37, ReaderSPID: 61}),
			[]string{"trace 2, running, rowset trace (Profiler or SMO; reader session 61)", "1200 events, 37 dropped"}},
		{FormatSession(SessionRow{Name: "system_health", Running: true, Retention: "ALLOW_SINGLE_EVENT_LOSS", DispatchLatencyMS: 120000, Targets: "event_file,ring_buffer"}),
			[]string{"system_health (running): event_file,ring_buffer; ALLOW_SINGLE_EVENT_LOSS, max dispatch latency 120 s; dropped 0 events, 0 buffers", "[built in: part of the baseline]"}},
		{FormatSession(SessionRow{Name: "obsbench_xe_locks_no_target_no_loss", Running: true, Retention: "NO_EVENT_LOSS", DispatchLatencyMS: 30000, Causality: true, Blocked: 812}),
			[]string{"obsbench_xe_locks_no_target_no_loss (running): no target; NO_EVENT_LOSS", "causality tracking", "firing blocked 812 (blocked_event_fire_time, unit undocumented)"}},
		{FormatSession(SessionRow{Name: "obsbench_xe_statements_infinite_latency", Running: true, Retention: "ALLOW_SINGLE_EVENT_LOSS", DispatchLatencyMS: -1, Targets: "ring_buffer"}),
			[]string{"max dispatch latency infinite"}},
		{FormatSession(SessionRow{Name: "audit_old", Retention: "NO_EVENT_LOSS", Targets: "event_file"}),
			[]string{"audit_old (defined, stopped): event_file; NO_EVENT_LOSS"}},
	}
	for _, tt := range tests {
		for _, w := range tt.want {
			if !strings.Contains(tt.got, w) {
				t.Errorf("%q lacks %q", tt.got, w)
			}
		}
	}
	if s := FormatSession(SessionRow{Name: "obsbench_x", Running: true}); strings.Contains(s, "built in") {
		t.Errorf("obsbench's session marked as built in: %s", s)
	}
}

// sp_trace_create
// (learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-trace-create-transact-sql),
// @stoptime: "If NULL, the trace runs until it is manually stopped or
// until the server shuts down". A trace obsbench creates stops of itself
// (a stop time of its own, past any run), and one a crashed obsbench left
// is found: the check before an apply refuses to add a second, and
// inspect names it as the observer in force.
func TestOrphanedTrace(t *testing.T) {
	plans := servertest.CatalogObserver(t, "sqlserver", "trace-plans-file")
	locks := servertest.CatalogObserver(t, "sqlserver", "trace-locks-file")
	lockless := servertest.CatalogObserver(t, "sqlserver", "trace-locks-file-filtered-out")
	sql := CreateTraceSQL(plans, goldenEnv)
	if strings.Contains(sql, "@stoptime = NULL") || !strings.Contains(sql, "@stoptime datetime = DATEADD(hour, 25, GETDATE())") || !strings.Contains(sql, "@stoptime = @stoptime") {
		t.Errorf("the trace has no stop time of its own:\n%s", sql)
	}
	if TraceLifetime <= 24*time.Hour {
		t.Errorf("TraceLifetime %s: a run of --duration 24h would outlive its trace", TraceLifetime)
	}

	base := TracePath(locks, goldenEnv)
	for path, want := range map[string]string{
		base + ".trc":    "trace-locks-file",
		base + "_12.trc": "trace-locks-file",
		TracePath(lockless, Env{LogDir: `C:\MSSQL\Log\`, Stamp: "20261122T000000"}) + "_1.trc": "trace-locks-file-filtered-out",
		`C:\MSSQL\Log\log_12.trc`:                              "", // the default trace
		"/var/opt/mssql/log/obsbench-trace-locks-file.trc":     "", // no stamp: not TracePath's
		"/var/opt/mssql/log/obsbench-trace-locks-file-x_1.trc": "",
	} {
		if got := TraceObserver(path); got != want {
			t.Errorf("TraceObserver(%q) = %q; want %q", path, got, want)
		}
	}

	left := []string{`C:\MSSQL\Log\log_12.trc`, base + "_3.trc"}
	if err := leftoverTrace(locks, left); err == nil || !strings.Contains(err.Error(), "obsbench restore") {
		t.Errorf("leftoverTrace(%s) = %v; want the trace left refused", locks.Name, err)
	}
	if err := leftoverTrace(lockless, left); err != nil {
		t.Errorf("leftoverTrace(%s) = %v; another observer's trace is not its own", lockless.Name, err)
	}

	traces := []TraceRow{{ID: 1, Status: 1, Path: `C:\MSSQL\Log\log_12.trc`, Default: true}, {ID: 2, Status: 1, Path: base + "_3.trc"}, {ID: 3, Status: 0, Path: TracePath(plans, goldenEnv) + ".trc"}}
	if got := observersInForce([]observer.Observer{plans, locks, lockless}, nil, traces); !slices.Equal(got, []string{"trace-locks-file"}) {
		t.Errorf("observersInForce = %v; want the running trace's observer only", got)
	}
	if line := FormatTrace(traces[1]); !strings.Contains(line, "[obsbench's, of observer trace-locks-file") {
		t.Errorf("FormatTrace = %q; want it marked as obsbench's", line)
	}
}

// Inspect shows how each server audit delivers: CREATE SERVER AUDIT
// (learn.microsoft.com/sql/t-sql/statements/create-server-audit-transact-sql),
// QUEUE_DELAY: "A value of 0 indicates synchronous delivery", and
// ON_FAILURE, from sys.server_audits' queue_delay and on_failure_desc.
func TestFormatAudit(t *testing.T) {
	for _, tt := range []struct {
		row  AuditRow
		want string
	}{
		{AuditRow{Name: "sox", Status: "STARTED", Path: `C:\audit\sox_0_1.sqlaudit`, QueueDelayMS: 0, OnFailure: "SHUTDOWN SERVER INSTANCE"},
			`server audit sox: started C:\audit\sox_0_1.sqlaudit; queue delay 0: synchronous delivery, each audited action waits for its record's write; on failure SHUTDOWN SERVER INSTANCE`},
		{AuditRow{Name: "logins", Status: "STARTED", QueueDelayMS: 1000, OnFailure: "CONTINUE"},
			"server audit logins: started; queue delay 1000 ms; on failure CONTINUE"},
		{AuditRow{Name: "hidden", Status: "STARTED", QueueDelayMS: -1},
			"server audit hidden: started; queue delay and on-failure not visible"},
	} {
		if got := FormatAudit(tt.row); !strings.HasPrefix(got, tt.want) {
			t.Errorf("FormatAudit(%+v) = %q; want %q", tt.row, got, tt.want)
		}
	}
	if !strings.Contains(InspectAuditsSQL, "a.queue_delay") || !strings.Contains(InspectAuditsSQL, "a.on_failure_desc") {
		t.Errorf("inspect does not read the audits' queue_delay and on_failure_desc:\n%s", InspectAuditsSQL)
	}
}
