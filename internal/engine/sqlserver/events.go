package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/poll"
)

// EventCount counts the events an applied observer records during a run:
// those named in its counter's match that carry the workload's tag, in
// the first target of its session that keeps events, or in its trace's
// files.
//
// Every figure counts over one window, from the apply to the count: the
// session or trace is new with each apply, so its targets, files and
// counters (dropped events and buffers, blocked time) all start from zero
// there, and nothing is subtracted from any of them. The dataset check
// and any other statement between the apply and the run are in every
// target's count alike.
type EventCount struct {
	a      *Applied
	source string // SourceXE or SourceTrace
	target string // event_file, ring_buffer, event_counter or histogram (xe)
	names  []string
	tag    string
	// The session's own counters, read at the count (a trace has only
	// dropped events).
	lost, lostBuf, blocked *int64
	// blocks: a NO_EVENT_LOSS session; serverWait0 is the server-wide
	// wait for a free buffer at StartEvents, context for blocked.
	blocks      bool
	serverWait0 int64
	volume      bool     // not one event per statement: count all, no tag
	notes       []string // what the last read could not tell
}

// countable are the targets whose contents can be counted, in the order
// one is chosen.
var countable = []string{"event_file", "ring_buffer", "event_counter", "histogram"}

// StartEvents begins counting; nil when the observer records no events.
// It reads nothing of the session (see EventCount), only the server-wide
// wait that a NO_EVENT_LOSS session's note compares with.
func (a *Applied) StartEvents(ctx context.Context, tag string) (engine.EventCounter, error) {
	ev := a.obs.Events
	if ev == nil {
		return nil, nil
	}
	e := &EventCount{a: a, source: ev.Source, names: strings.Split(ev.Match, ","), tag: tag, volume: ev.Volume, notes: planNotes(a.obs)}
	if e.volume {
		e.tag = "" // lock events carry no statement text
	}
	switch ev.Source {
	case SourceXE:
		e.target = countableTarget(sessionOf(a.obs))
		if e.target == "" {
			return nil, fmt.Errorf("observer %s: its session has no target that keeps events (%s) to count", a.obs.Name, strings.Join(countable, ", "))
		}
		e.blocks = sessionOf(a.obs).Retention == RetainNoLoss
	case SourceTrace:
	default:
		return nil, fmt.Errorf("events source %q is not available on sqlserver", ev.Source)
	}
	stmts := startStatements(a.obs)
	if len(stmts) == 0 {
		return e, nil
	}
	conn, done, err := a.s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := conn.QueryRowContext(ctx, stmts[0]).Scan(&e.serverWait0); err != nil {
		return nil, fmt.Errorf("read %s wait: %w", freeBufferWait, err)
	}
	return e, nil
}

// startStatements are what StartEvents reads: the server-wide wait of a
// NO_EVENT_LOSS session's note, and nothing of the session, its targets
// or a trace (EventCount's one window).
func startStatements(o observer.Observer) []string {
	if o.Events != nil && o.Events.Source == SourceXE && sessionOf(o).Retention == RetainNoLoss {
		return []string{ServerWaitSQL}
	}
	return nil
}

func countableTarget(x *XESession) string {
	for _, kind := range countable {
		for _, t := range x.Targets {
			if t.Kind == kind {
				return kind
			}
		}
	}
	return ""
}

// Count returns the events recorded since the apply. An asynchronous
// in-memory target is read after the session's dispatch latency has
// passed (FlushWait); a file target after its session (or trace) is
// stopped, which flushes the events still in memory: the revert that
// follows drops it anyway.
func (e *EventCount) Count(ctx context.Context) (int64, error) {
	if e.source == SourceXE {
		if err := poll.Sleep(ctx, FlushWait(sessionOf(e.a.obs), e.target)); err != nil {
			return 0, err
		}
	}
	conn, done, err := e.a.s.control(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	if err := e.counters(ctx, conn); err != nil {
		return 0, err
	}
	switch {
	case e.source == SourceTrace:
		if _, err := conn.ExecContext(ctx, StopTraceSQL(TracePath(e.a.obs, e.a.env))); err != nil {
			return 0, fmt.Errorf("stop trace to flush it: %w", err)
		}
	case e.target == "event_file":
		if _, err := conn.ExecContext(ctx, StopSessionSQL(SessionName(e.a.obs))); err != nil {
			return 0, fmt.Errorf("stop session to flush it: %w", err)
		}
	}
	return e.read(ctx, conn)
}

// FlushWait is how long after a run the count of an XE session's target
// waits before it reads the target. Only event_counter is synchronous:
// ring_buffer and histogram receive events from the session's buffers,
// which are dispatched when full or after MAX_DISPATCH_LATENCY (default
// 30 seconds), so a read sooner misses up to a MAX_MEMORY of events
// ("Targets for Extended Events", create-event-session-transact-sql).
// Stopping the session would flush them but empties those in-memory
// targets (SQL Server Extended Events Targets, 2008 R2), so the count
// waits the latency out, and one second more. An event_file is
// flushed by stopping its session instead (0 here). INFINITE is refused
// for a counted asynchronous target (checkXECount): nothing but a stop
// would dispatch its buffers.
func FlushWait(x *XESession, target string) time.Duration {
	if target != "ring_buffer" && target != "histogram" {
		return 0
	}
	latency := defaultDispatchLatency
	if x.MaxDispatchLatency != "" && x.MaxDispatchLatency != "INFINITE" {
		if d, err := time.ParseDuration(x.MaxDispatchLatency); err == nil {
			latency = d
		}
	}
	return latency + time.Second
}

// defaultDispatchLatency is MAX_DISPATCH_LATENCY when a session does not
// set it (create-event-session-transact-sql: "By default, this value is
// set to 30 seconds").
const defaultDispatchLatency = 30 * time.Second

// counters reads what the session or trace says it dropped, and, for a
// NO_EVENT_LOSS session, how long firing was blocked; the server-wide wait
// becomes a note.
func (e *EventCount) counters(ctx context.Context, conn *sql.Conn) error {
	var c sessionCounters
	var err error
	if c.lost, c.lostBuf, c.blocked, c.has, err = e.dropped(ctx, conn); err != nil {
		return err
	}
	if e.blocks {
		if err := conn.QueryRowContext(ctx, ServerWaitSQL).Scan(&c.serverWait); err != nil {
			return fmt.Errorf("read %s wait: %w", freeBufferWait, err)
		}
	}
	e.take(c)
	return nil
}

// sessionCounters are what counters read at the end of a run.
type sessionCounters struct {
	lost, lostBuf, blocked int64 // the session's or trace's own, since the apply
	has                    bool  // the session or trace was found
	serverWait             int64 // server-wide free-buffer wait, ms (NO_EVENT_LOSS only)
}

// take keeps what counters read: the session's own figures as the
// observer's, the server's wait only as a note next to them.
func (e *EventCount) take(c sessionCounters) {
	if c.has {
		e.lost, e.lostBuf = &c.lost, &c.lostBuf
		if e.blocks {
			e.blocked = &c.blocked
		}
	}
	if e.blocks {
		e.notes = append(e.notes, ServerWaitNote(c.serverWait-e.serverWait0))
	}
}

// ServerWaitNote is the server-wide wait for free XE buffers over the
// run, labelled as the server's: any other NO_EVENT_LOSS session or audit
// adds to it.
func ServerWaitNote(ms int64) string {
	return fmt.Sprintf("server-wide, tasks waited %d ms for a free event buffer (%s, sys.dm_os_wait_stats) over the run, this session's blocking and any other NO_EVENT_LOSS session's or audit's", ms, freeBufferWait)
}

// read counts what the target or trace holds now.
func (e *EventCount) read(ctx context.Context, conn *sql.Conn) (int64, error) {
	var q string
	switch {
	case e.source == SourceTrace:
		first, err := e.traceFirstFile(ctx, conn)
		if err != nil {
			return 0, err
		}
		q = traceCountSQL(first, e.names, e.tag)
	case e.target == "event_file":
		q = fileCountSQL(e.a.filePattern(), e.names, e.tag)
	default:
		var data sql.NullString
		err := conn.QueryRowContext(ctx, TargetDataSQL(SessionName(e.a.obs), e.target)).Scan(&data)
		if err != nil {
			return 0, fmt.Errorf("read %s target of %s: %w", e.target, SessionName(e.a.obs), err)
		}
		switch e.target {
		case "ring_buffer":
			st, err := ParseRingBuffer(data.String)
			if err != nil {
				return 0, err
			}
			if e.volume {
				// Every event the target received, also those a full
				// ring pushed out: lock events fill 1,000 slots at once.
				return st.TotalProcessed, nil
			}
			e.notes = append(e.notes, RingNotes(st)...)
			return CountRingEvents(data.String, e.names, e.tag)
		case "histogram":
			e.notes = append(e.notes, counterNotes(e.a.obs, e.names)...)
			slots, err := HistogramSlots(data.String)
			var n int64
			for _, c := range slots {
				n += c
			}
			if note := HistogramNote(len(slots), HistogramSlotCount(e.a.targetOption("histogram", "slots"))); note != "" {
				e.notes = append(e.notes, note)
			}
			return n, err
		}
		e.notes = append(e.notes, counterNotes(e.a.obs, e.names)...)
		return CounterTotal(data.String, e.names)
	}
	if e.source == SourceXE {
		if max := e.a.maxRolloverFiles(); max > 0 {
			var files int
			if err := conn.QueryRowContext(ctx, fileListSQL(e.a.filePattern())).Scan(&files); err != nil {
				return 0, fmt.Errorf("count event files: %w", err)
			}
			if note := RolloverNote(files, max); note != "" {
				e.notes = append(e.notes, note)
			}
		}
	}
	var n int64
	if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events: %w", err)
	}
	return n, nil
}

// traceFirstFile is the oldest file of the trace that the server kept,
// found from the file it wrote last (sys.traces.path); a note says how
// many older ones it deleted.
func (e *EventCount) traceFirstFile(ctx context.Context, conn *sql.Conn) (string, error) {
	base := TracePath(e.a.obs, e.a.env)
	var current string
	if err := conn.QueryRowContext(ctx, CurrentTraceFileSQL(base)).Scan(&current); err != nil {
		return "", fmt.Errorf("find the trace's current file: %w", err)
	}
	first, deleted, err := TraceFirstFile(base, current, traceOf(e.a.obs).MaxFiles)
	if err != nil {
		return "", err
	}
	if deleted > 0 {
		e.notes = append(e.notes, TraceRolloverNote(deleted, traceOf(e.a.obs).MaxFiles))
	}
	return first, nil
}

// filePattern matches every rollover file of the session's event_file:
// the server inserts a sequence before the .xel extension.
func (a *Applied) filePattern() string {
	for _, t := range sessionOf(a.obs).Targets {
		if t.Kind == "event_file" {
			f := a.env.fill(t.Set["filename"])
			return strings.TrimSuffix(f, ".xel") + "*.xel"
		}
	}
	return ""
}

// dropped is the engine's own count of what it did not record since the
// apply: an XE session's dropped_event_count and dropped_buffer_count
// (under ALLOW_MULTIPLE_EVENT_LOSS whole buffers go and the event count
// may stay 0: sys-dm-xe-sessions-transact-sql) and its
// blocked_event_fire_time, a trace's dropped_event_count (NULL for a file
// trace, which never drops; it has no buffer count).
func (e *EventCount) dropped(ctx context.Context, conn *sql.Conn) (n, buffers, blocked int64, has bool, err error) {
	var v, b, bl sql.NullInt64
	if e.source == SourceTrace {
		err = conn.QueryRowContext(ctx, TraceDroppedSQL(TracePath(e.a.obs, e.a.env))).Scan(&v)
	} else {
		err = conn.QueryRowContext(ctx, SessionCountersSQL(SessionName(e.a.obs))).Scan(&v, &b, &bl)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, 0, false, nil
	}
	return v.Int64, b.Int64, bl.Int64, v.Valid, err
}

// EngineLostBuffers is the session's dropped_buffer_count over the
// window (engine.BufferLostCounter); a trace has none.
func (e *EventCount) EngineLostBuffers(ctx context.Context) (int64, bool, error) {
	if e.source == SourceTrace || e.lostBuf == nil {
		return 0, false, nil
	}
	return *e.lostBuf, true, nil
}

// EngineBlocked is how long the session's event firing was blocked
// waiting for a free buffer over the window, its own
// blocked_event_fire_time (engine.BlockedCounter): only a
// NO_EVENT_LOSS session blocks.
func (e *EventCount) EngineBlocked(ctx context.Context) (int64, bool, error) {
	if e.blocked == nil {
		return 0, false, nil
	}
	return *e.blocked, true, nil
}

// Volume says the count is not one per statement (engine.VolumeCounter).
func (e *EventCount) Volume() bool { return e.volume }

// counterNotes label a count kept by a synchronous target (event_counter,
// histogram), which keeps no event to match with the workload's tag: it
// holds every event its predicate let through, unless the predicate of
// each counted event keeps only the workload's sessions.
func counterNotes(o observer.Observer, names []string) []string {
	for _, ev := range sessionOf(o).Events {
		_, name, _ := strings.Cut(ev.Name, ".")
		if slices.Contains(names, name) && !strings.Contains(ev.Where, DriverAppPlaceholder) {
			return []string{CounterNote}
		}
	}
	return nil
}

// planEvents are the events that carry a statement's actual plan: XE's
// query_post_execution_showplan and SQL Trace's Showplan XML Statistics
// Profile (146).
var planEvents = []string{"query_post_execution_showplan", "146"}

// PlanlessNote labels a count of plan events. "Transact-SQL Statements
// That Produce Showplans" lists the statements that have one (DML:
// SELECT, INSERT, UPDATE, DELETE; EXECUTE), not transaction control:
// BEGIN and COMMIT TRANSACTION, which pgbench's BEGIN and END become, are
// executed statements that fire no plan event.
// https://learn.microsoft.com/previous-versions/sql/sql-server-2008-r2/ms187886(v=sql.105)
const PlanlessNote = "plan events: a statement without a query plan (BEGIN and COMMIT TRANSACTION, which pgbench's BEGIN and END become; SET) fires none, so the workload's transaction-control statements read as lost in this count: compare the plans recorded with the statements that have one"

// planNotes are the notes of a count of o's events: PlanlessNote when
// they are plan events compared with the statements executed.
func planNotes(o observer.Observer) []string {
	ev := o.Events
	if ev == nil || ev.Volume {
		return nil
	}
	for _, name := range strings.Split(ev.Match, ",") {
		if slices.Contains(planEvents, name) {
			return []string{PlanlessNote}
		}
	}
	return nil
}

// EventNotes say what the count could not tell (engine.EventNoter).
func (e *EventCount) EventNotes() []string { return e.notes }

// maxRolloverFiles is the event_file target's max_rollover_files, 0 if
// unset.
func (a *Applied) maxRolloverFiles() int {
	n, _ := strconv.Atoi(a.targetOption("event_file", "max_rollover_files"))
	return n
}

// targetOption is option of the session's target of kind, "" if unset.
func (a *Applied) targetOption(kind, option string) string {
	for _, t := range sessionOf(a.obs).Targets {
		if t.Kind == kind {
			return t.Set[option]
		}
	}
	return ""
}

// fileListSQL counts the files of an event_file target.
func fileListSQL(pattern string) string {
	return fmt.Sprintf("SELECT COUNT(DISTINCT file_name) FROM sys.fn_xe_file_target_read_file(%s, NULL, NULL, NULL)", quoteString(pattern))
}

// EngineLost is the engine's dropped-events counter over the window.
func (e *EventCount) EngineLost(ctx context.Context) (int64, bool, error) {
	if e.lost == nil {
		return 0, false, nil
	}
	return *e.lost, true, nil
}

// countStatements are the statements that count o's events at the end of
// a run, in order, as Count runs them; a wait for the session's buffers
// to be dispatched shows as a comment.
func countStatements(o observer.Observer, env Env, tag string) []string {
	ev := o.Events
	if ev == nil {
		return nil
	}
	names := strings.Split(ev.Match, ",")
	if ev.Volume {
		tag = ""
	}
	a := &Applied{obs: o, env: env}
	switch {
	case ev.Source == SourceTrace:
		path := TracePath(o, env)
		return []string{TraceDroppedSQL(path), StopTraceSQL(path), CurrentTraceFileSQL(path),
			"-- from the oldest file the server kept: " + path + ".trc until it rolls over past max_files\n" + traceCountSQL(path+".trc", names, tag)}
	case ev.Source != SourceXE:
		return nil
	}
	x := sessionOf(o)
	target := countableTarget(x)
	var stmts []string
	if d := FlushWait(x, target); d > 0 {
		stmts = append(stmts, fmt.Sprintf("-- wait %s after the run: the session's buffers reach the %s within its MAX_DISPATCH_LATENCY", d, target))
	}
	stmts = append(stmts, SessionCountersSQL(SessionName(o)))
	if x.Retention == RetainNoLoss {
		stmts = append(stmts, ServerWaitSQL)
	}
	if target != "event_file" {
		return append(stmts, TargetDataSQL(SessionName(o), target))
	}
	stmts = append(stmts, StopSessionSQL(SessionName(o)))
	if a.maxRolloverFiles() > 0 {
		stmts = append(stmts, fileListSQL(a.filePattern()))
	}
	return append(stmts, fileCountSQL(a.filePattern(), names, tag))
}

// PlanEvents lists the statements that count o's events at the end of
// each run: what --dry-run prints.
func (s *Server) PlanEvents(ctx context.Context, o observer.Observer, tag string) ([]string, error) {
	if o.Events == nil {
		return nil, nil
	}
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	env, err := s.env(ctx, conn)
	if err != nil {
		return nil, err
	}
	return countStatements(o, env, tag), nil
}
