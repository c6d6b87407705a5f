package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/obsbench/obsbench/internal/observer"
)

// Study 1's advice: before measuring, list what already watches the
// server. These queries read the catalog and DMVs only.
// https://learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-traces-transact-sql
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-sessions-transact-sql
const (
	// InspectTracesSQL lists every trace: file traces and rowset traces
	// (Profiler), the default trace among them.
	InspectTracesSQL = `SELECT id, status, COALESCE(path, N''), is_rowset, is_default, COALESCE(max_size, 0), COALESCE(max_files, 0), is_rollover,
       COALESCE(event_count, 0), COALESCE(dropped_event_count, -1), COALESCE(reader_spid, 0), COALESCE(CONVERT(nvarchar(30), stop_time, 120), N'')
FROM sys.traces ORDER BY id`
	// InspectSessionsSQL lists every XE session defined or running, with
	// its retention mode and, when running, what it dropped and how long
	// firing threads were blocked (NO_EVENT_LOSS).
	InspectSessionsSQL = `SELECT COALESCE(es.name, xs.name), CASE WHEN xs.name IS NULL THEN 0 ELSE 1 END,
       COALESCE(es.event_retention_mode_desc, N''), COALESCE(es.max_dispatch_latency, 0), -- ms; -1: INFINITE
       COALESCE(CAST(es.track_causality AS int), 0),
       COALESCE(xs.dropped_event_count, 0), COALESCE(xs.dropped_buffer_count, 0), COALESCE(xs.blocked_event_fire_time, 0),
       COALESCE(STUFF((SELECT N',' + t.name FROM sys.server_event_session_targets t WHERE t.event_session_id = es.event_session_id ORDER BY t.name FOR XML PATH('')), 1, 1, N''), N'')
FROM sys.server_event_sessions es FULL JOIN sys.dm_xe_sessions xs ON xs.name = es.name
ORDER BY 1`
	// InspectAuditsSQL lists SQL Server Audits, their state, and from
	// sys.server_audits how each delivers its records: queue_delay "If 0,
	// the audit will guarantee a write before an event can continue", and
	// on_failure. A login without ALTER ANY SERVER AUDIT or VIEW ANY
	// DEFINITION sees no row there (-1 and "" then).
	// https://learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-server-audits-transact-sql
	InspectAuditsSQL = `SELECT s.name, s.status_desc, COALESCE(s.audit_file_path, N''), COALESCE(a.queue_delay, -1), COALESCE(a.on_failure_desc, N'')
FROM sys.dm_server_audit_status s LEFT JOIN sys.server_audits a ON a.audit_id = s.audit_id ORDER BY s.name`
)

// builtinSessions are observers SQL Server runs by default: baseline
// conditions, not the user's.
var builtinSessions = map[string]bool{"system_health": true, "AlwaysOn_health": true, "telemetry_xevents": true, "sp_server_diagnostics session": true, "hkenginexesession": true}

// TraceRow is one row of InspectTracesSQL.
type TraceRow struct {
	ID, Status                  int
	Path                        string
	Rowset, Default             bool
	MaxSizeMB, MaxFiles         int64
	Rollover                    bool
	Events, Dropped, ReaderSPID int64
	StopTime                    string // the server's local time; "": none
}

// SessionRow is one row of InspectSessionsSQL.
type SessionRow struct {
	Name                          string
	Running                       bool
	Retention                     string
	DispatchLatencyMS             int64
	Causality                     bool
	DroppedEvents, DroppedBuffers int64
	Blocked                       int64  // blocked_event_fire_time: no unit documented
	Targets                       string // comma list; empty: none
}

// Inspection is what inspect shows.
type Inspection struct {
	Version   string
	Observers []string // catalog observers in force (sessions and traces obsbench left)
	Traces    []string
	Sessions  []string
	Audits    []string
	Replicas  []string
	Lost      []string // sessions and traces that dropped events
}

// FormatTrace describes one trace for a DBA.
func FormatTrace(t TraceRow) string {
	kind := "file trace " + t.Path
	switch {
	case t.Rowset:
		kind = fmt.Sprintf("rowset trace (Profiler or SMO; reader session %d): drops events after waiting up to 20 s when its reader lags", t.ReaderSPID)
	case t.Default:
		kind = "default trace " + t.Path
	}
	state := "stopped"
	if t.Status == 1 {
		state = "running"
	}
	var opts []string
	if !t.Rowset {
		opts = append(opts, fmt.Sprintf("%d MB files", t.MaxSizeMB))
		if t.Rollover {
			opts = append(opts, fmt.Sprintf("rollover, %d kept", t.MaxFiles))
		}
		opts = append(opts, "the file provider blocks rather than drop (waits show as SQLTRACE_FILE_BUFFER)")
	}
	dropped := "no drop counter"
	if t.Dropped >= 0 {
		dropped = fmt.Sprintf("%d dropped", t.Dropped)
	}
	line := fmt.Sprintf("trace %d, %s, %s: %d events, %s", t.ID, state, kind, t.Events, dropped)
	if len(opts) > 0 {
		line += "; " + strings.Join(opts, ", ")
	}
	if t.StopTime != "" {
		line += "; stops at " + t.StopTime
	}
	if name := TraceObserver(t.Path); name != "" {
		line += " [obsbench's, of observer " + name + ": left by an obsbench that crashed? obsbench restore removes it]"
	}
	return line
}

// FormatSession describes one XE session for a DBA.
func FormatSession(s SessionRow) string {
	state := "defined, stopped"
	if s.Running {
		state = "running"
	}
	targets := s.Targets
	if targets == "" {
		targets = "no target"
	}
	mode := s.Retention
	if mode == "" {
		mode = "retention unknown (not in sys.server_event_sessions)"
	}
	line := fmt.Sprintf("%s (%s): %s; %s", s.Name, state, targets, mode)
	switch {
	case s.DispatchLatencyMS < 0:
		line += ", max dispatch latency infinite"
	case s.DispatchLatencyMS > 0:
		line += fmt.Sprintf(", max dispatch latency %d s", s.DispatchLatencyMS/1000)
	}
	if s.Causality {
		line += ", causality tracking"
	}
	if s.Running {
		line += fmt.Sprintf("; dropped %d events, %d buffers; firing blocked %d (blocked_event_fire_time, unit undocumented)", s.DroppedEvents, s.DroppedBuffers, s.Blocked)
	}
	if builtinSessions[s.Name] {
		line += " [built in: part of the baseline]"
	}
	return line
}

// Inspect reads what observes the server: traces, XE sessions, audits,
// and the dataset database's availability-group replicas; candidates are
// the catalog's observers, found in force when obsbench's session or trace
// for one is running.
func (s *Server) Inspect(ctx context.Context, candidates []observer.Observer) (*Inspection, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	in := &Inspection{}
	if in.Version, err = s.Version(ctx); err != nil {
		return nil, err
	}
	traces, err := readTraces(ctx, conn)
	if err != nil {
		return nil, err
	}
	for _, t := range traces {
		in.Traces = append(in.Traces, FormatTrace(t))
		if t.Dropped > 0 {
			in.Lost = append(in.Lost, fmt.Sprintf("trace %d dropped %d events", t.ID, t.Dropped))
		}
	}
	sessions, err := readSessions(ctx, conn)
	if err != nil {
		return nil, err
	}
	running := map[string]bool{}
	for _, x := range sessions {
		in.Sessions = append(in.Sessions, FormatSession(x))
		running[x.Name] = x.Running
		if x.DroppedEvents > 0 || x.DroppedBuffers > 0 {
			in.Lost = append(in.Lost, fmt.Sprintf("XE session %s dropped %d events and %d buffers", x.Name, x.DroppedEvents, x.DroppedBuffers))
		}
	}
	in.Observers = observersInForce(candidates, running, traces)
	if in.Audits, err = readAudits(ctx, conn); err != nil {
		return nil, err
	}
	replicas, err := s.replicas(ctx, conn)
	if err != nil {
		return nil, err
	}
	for _, r := range replicas {
		role := "secondary"
		if r.Primary {
			role = "primary"
		}
		in.Replicas = append(in.Replicas, fmt.Sprintf("%s: %s (%s), %s, failover %s", r.Group, r.Name, role, r.Mode, r.Failover))
	}
	return in, nil
}

// observersInForce are the candidates whose session (by its name) or
// trace (by its file's) is running, in name order.
func observersInForce(candidates []observer.Observer, sessions map[string]bool, traces []TraceRow) []string {
	traced := map[string]bool{}
	for _, t := range traces {
		if t.Status == 1 {
			traced[TraceObserver(t.Path)] = true
		}
	}
	var out []string
	for _, o := range candidates {
		if sessionOf(o) != nil && sessions[SessionName(o)] || traceOf(o) != nil && traced[o.Name] {
			out = append(out, o.Name)
		}
	}
	sort.Strings(out)
	return out
}

func readTraces(ctx context.Context, conn *sql.Conn) ([]TraceRow, error) {
	rows, err := conn.QueryContext(ctx, InspectTracesSQL)
	if err != nil {
		return nil, fmt.Errorf("read sys.traces: %w", err)
	}
	defer rows.Close()
	var out []TraceRow
	for rows.Next() {
		var t TraceRow
		if err := rows.Scan(&t.ID, &t.Status, &t.Path, &t.Rowset, &t.Default, &t.MaxSizeMB, &t.MaxFiles, &t.Rollover, &t.Events, &t.Dropped, &t.ReaderSPID, &t.StopTime); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func readSessions(ctx context.Context, conn *sql.Conn) ([]SessionRow, error) {
	rows, err := conn.QueryContext(ctx, InspectSessionsSQL)
	if err != nil {
		return nil, fmt.Errorf("read XE sessions: %w", err)
	}
	defer rows.Close()
	var out []SessionRow
	for rows.Next() {
		var x SessionRow
		var running, causality int
		if err := rows.Scan(&x.Name, &running, &x.Retention, &x.DispatchLatencyMS, &causality, &x.DroppedEvents, &x.DroppedBuffers, &x.Blocked, &x.Targets); err != nil {
			return nil, err
		}
		x.Running, x.Causality = running == 1, causality == 1
		out = append(out, x)
	}
	return out, rows.Err()
}

func readAudits(ctx context.Context, conn *sql.Conn) ([]string, error) {
	rows, err := conn.QueryContext(ctx, InspectAuditsSQL)
	if err != nil {
		return nil, fmt.Errorf("read sys.dm_server_audit_status: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a AuditRow
		if err := rows.Scan(&a.Name, &a.Status, &a.Path, &a.QueueDelayMS, &a.OnFailure); err != nil {
			return nil, err
		}
		out = append(out, FormatAudit(a))
	}
	return out, rows.Err()
}

// AuditRow is one row of InspectAuditsSQL.
type AuditRow struct {
	Name, Status, Path string
	QueueDelayMS       int64  // -1: not visible to the login
	OnFailure          string // CONTINUE, SHUTDOWN SERVER INSTANCE, FAIL_OPERATION; "": not visible
}

// FormatAudit describes one server audit for a DBA. CREATE SERVER AUDIT,
// QUEUE_DELAY: "A value of 0 indicates synchronous delivery", each
// audited action waiting for its record's write, the costly case.
// https://learn.microsoft.com/sql/t-sql/statements/create-server-audit-transact-sql
func FormatAudit(a AuditRow) string {
	line := strings.TrimSpace(fmt.Sprintf("server audit %s: %s %s", a.Name, strings.ToLower(a.Status), a.Path))
	switch {
	case a.QueueDelayMS < 0:
		return line + "; queue delay and on-failure not visible (sys.server_audits needs ALTER ANY SERVER AUDIT or VIEW ANY DEFINITION)"
	case a.QueueDelayMS == 0:
		line += "; queue delay 0: synchronous delivery, each audited action waits for its record's write"
	default:
		line += fmt.Sprintf("; queue delay %d ms", a.QueueDelayMS)
	}
	return line + "; on failure " + a.OnFailure
}
