package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/internal/observer"
)

// EventCount counts the events an applied observer records during a run:
// those named in its counter's match that carry the workload's tag, in
// the first target of its session that keeps events, or in its trace's
// files.
type EventCount struct {
	a      *Applied
	source string // observer.SourceXE or observer.SourceTrace
	target string // event_file, ring_buffer or event_counter (xe)
	names  []string
	tag    string
	before int64
	lost0  int64
	lost   *int64 // read before a count that stops the session
	// Whole buffers dropped (ALLOW_MULTIPLE_EVENT_LOSS), the same way.
	lostBuf0 int64
	lostBuf  *int64
	// Time statements waited for a free buffer (NO_EVENT_LOSS only).
	blocks   bool
	blocked0 int64
	blocked  *int64
	volume   bool     // not one event per statement: count all, no tag
	notes    []string // what the last read could not tell
}

// countable are the targets whose contents can be counted, in the order
// one is chosen.
var countable = []string{"event_file", "ring_buffer", "event_counter", "histogram"}

// StartEvents begins counting; nil when the observer records no events.
func (a *Applied) StartEvents(ctx context.Context, tag string) (*EventCount, error) {
	ev := a.obs.Events
	if ev == nil {
		return nil, nil
	}
	e := &EventCount{a: a, source: ev.Source, names: strings.Split(ev.Match, ","), tag: tag, volume: ev.Volume}
	if e.volume {
		e.tag = "" // lock events carry no statement text
	}
	switch ev.Source {
	case observer.SourceXE:
		e.target = countableTarget(a.obs.XE)
		if e.target == "" {
			return nil, fmt.Errorf("observer %s: its session has no target that keeps events (%s) to count", a.obs.Name, strings.Join(countable, ", "))
		}
	case observer.SourceTrace:
	default:
		return nil, fmt.Errorf("events source %q is not available on sqlserver", ev.Source)
	}
	conn, done, err := a.s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	// A file target or trace is new with each apply (its name has the
	// apply's stamp) and holds none of the workload's tagged events yet:
	// it starts from 0, and is not read while the server may not have
	// made its first file. An in-memory target is read now.
	if e.source == observer.SourceXE && e.target != "event_file" {
		if e.before, err = e.read(ctx, conn); err != nil {
			return nil, err
		}
	}
	if e.lost0, e.lostBuf0, _, err = e.dropped(ctx, conn); err != nil {
		return nil, err
	}
	if e.source == observer.SourceXE && a.obs.XE.Retention == observer.RetainNoLoss {
		e.blocks = true
		if err := conn.QueryRowContext(ctx, BlockedSQL).Scan(&e.blocked0); err != nil {
			return nil, fmt.Errorf("read %s wait: %w", freeBufferWait, err)
		}
	}
	return e, nil
}

func countableTarget(x *observer.XESession) string {
	for _, kind := range countable {
		for _, t := range x.Targets {
			if t.Kind == kind {
				return kind
			}
		}
	}
	return ""
}

// Count returns the events recorded since StartEvents. A file target is
// read after its session (or trace) is stopped, which flushes the events
// still in memory (up to MAX_DISPATCH_LATENCY old): the revert that
// follows drops it anyway.
func (e *EventCount) Count(ctx context.Context) (int64, error) {
	conn, done, err := e.a.s.control(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	lost, buffers, has, err := e.dropped(ctx, conn)
	if err != nil {
		return 0, err
	}
	if has {
		d, b := lost-e.lost0, buffers-e.lostBuf0
		e.lost, e.lostBuf = &d, &b
	}
	if e.blocks {
		var ms int64
		if err := conn.QueryRowContext(ctx, BlockedSQL).Scan(&ms); err != nil {
			return 0, fmt.Errorf("read %s wait: %w", freeBufferWait, err)
		}
		d := ms - e.blocked0
		e.blocked = &d
	}
	switch {
	case e.source == observer.SourceTrace:
		if _, err := conn.ExecContext(ctx, StopTraceSQL(TracePath(e.a.obs, e.a.env))); err != nil {
			return 0, fmt.Errorf("stop trace to flush it: %w", err)
		}
	case e.target == "event_file":
		if _, err := conn.ExecContext(ctx, StopSessionSQL(SessionName(e.a.obs))); err != nil {
			return 0, fmt.Errorf("stop session to flush it: %w", err)
		}
	}
	n, err := e.read(ctx, conn)
	return n - e.before, err
}

// read counts what the target or trace holds now.
func (e *EventCount) read(ctx context.Context, conn *sql.Conn) (int64, error) {
	var q string
	switch {
	case e.source == observer.SourceTrace:
		q = traceCountSQL(TracePath(e.a.obs, e.a.env), e.names, e.tag)
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
			e.notes = RingNotes(st)
			return CountRingEvents(data.String, e.names, e.tag)
		case "histogram":
			e.notes = counterNotes(e.a.obs, e.names)
			slots, err := HistogramSlots(data.String)
			var n int64
			for _, c := range slots {
				n += c
			}
			return n, err
		}
		e.notes = counterNotes(e.a.obs, e.names)
		return CounterTotal(data.String, e.names)
	}
	if e.source == observer.SourceXE {
		if max := e.a.maxRolloverFiles(); max > 0 {
			var files int
			if err := conn.QueryRowContext(ctx, fileListSQL(e.a.filePattern())).Scan(&files); err != nil {
				return 0, fmt.Errorf("count event files: %w", err)
			}
			if note := RolloverNote(files, max); note != "" {
				e.notes = []string{note}
			}
		}
	}
	var n int64
	if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events: %w", err)
	}
	return n, nil
}

// filePattern matches every rollover file of the session's event_file:
// the server inserts a sequence before the .xel extension.
func (a *Applied) filePattern() string {
	for _, t := range a.obs.XE.Targets {
		if t.Kind == "event_file" {
			f := a.env.fill(t.Set["filename"])
			return strings.TrimSuffix(f, ".xel") + "*.xel"
		}
	}
	return ""
}

// dropped is the engine's own count of what it did not record: an XE
// session's dropped_event_count and dropped_buffer_count (under
// ALLOW_MULTIPLE_EVENT_LOSS whole buffers go and the event count may stay
// 0: sys-dm-xe-sessions-transact-sql), a trace's dropped_event_count
// (NULL for a file trace, which never drops; it has no buffer count).
func (e *EventCount) dropped(ctx context.Context, conn *sql.Conn) (n, buffers int64, has bool, err error) {
	var v, b sql.NullInt64
	if e.source == observer.SourceTrace {
		err = conn.QueryRowContext(ctx, "SELECT dropped_event_count FROM sys.traces WHERE path LIKE @p1", likePrefix(TracePath(e.a.obs, e.a.env))).Scan(&v)
	} else {
		err = conn.QueryRowContext(ctx, DroppedSQL(SessionName(e.a.obs))).Scan(&v, &b)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	return v.Int64, b.Int64, v.Valid, err
}

// EngineLostBuffers is the growth of the session's dropped_buffer_count
// over the run (experiment.BufferLostCounter); a trace has none.
func (e *EventCount) EngineLostBuffers(ctx context.Context) (int64, bool, error) {
	if e.source == observer.SourceTrace {
		return 0, false, nil
	}
	if e.lostBuf != nil {
		return *e.lostBuf, true, nil
	}
	conn, done, err := e.a.s.control(ctx)
	if err != nil {
		return 0, false, err
	}
	defer done()
	_, b, has, err := e.dropped(ctx, conn)
	return b - e.lostBuf0, has, err
}

// EngineBlocked is how long statements waited for a free buffer over the
// run (experiment.BlockedCounter): only a NO_EVENT_LOSS session blocks.
func (e *EventCount) EngineBlocked(ctx context.Context) (int64, bool, error) {
	if e.blocked == nil {
		return 0, false, nil
	}
	return *e.blocked, true, nil
}

// Volume says the count is not one per statement (experiment.VolumeCounter).
func (e *EventCount) Volume() bool { return e.volume }

// counterNotes label a count kept by a synchronous target (event_counter,
// histogram), which keeps no event to match with the workload's tag: it
// holds every event its predicate let through, unless the predicate of
// each counted event keeps only the workload's sessions.
func counterNotes(o observer.Observer, names []string) []string {
	for _, ev := range o.XE.Events {
		_, name, _ := strings.Cut(ev.Name, ".")
		if slices.Contains(names, name) && !strings.Contains(ev.Where, observer.DriverAppPlaceholder) {
			return []string{CounterNote}
		}
	}
	return nil
}

// EventNotes say what the count could not tell (experiment.EventNoter).
func (e *EventCount) EventNotes() []string { return e.notes }

// maxRolloverFiles is the event_file target's max_rollover_files, 0 if
// unset.
func (a *Applied) maxRolloverFiles() int {
	for _, t := range a.obs.XE.Targets {
		if t.Kind == "event_file" {
			n, _ := strconv.Atoi(t.Set["max_rollover_files"])
			return n
		}
	}
	return 0
}

// fileListSQL counts the files of an event_file target.
func fileListSQL(pattern string) string {
	return fmt.Sprintf("SELECT COUNT(DISTINCT file_name) FROM sys.fn_xe_file_target_read_file(%s, NULL, NULL, NULL)", quoteString(pattern))
}

// EngineLost is the growth of the engine's dropped-events counter over
// the run.
func (e *EventCount) EngineLost(ctx context.Context) (int64, bool, error) {
	if e.lost != nil {
		return *e.lost, true, nil
	}
	conn, done, err := e.a.s.control(ctx)
	if err != nil {
		return 0, false, err
	}
	defer done()
	n, _, has, err := e.dropped(ctx, conn)
	return n - e.lost0, has, err
}

// countStatements are the statements that count o's events at the end of
// a run, in order (the same are read at its start, without the stop).
func countStatements(o observer.Observer, env Env, tag string) []string {
	ev := o.Events
	if ev == nil {
		return nil
	}
	names := strings.Split(ev.Match, ",")
	a := &Applied{obs: o, env: env}
	switch {
	case ev.Source == observer.SourceTrace:
		path := TracePath(o, env)
		if ev.Volume {
			tag = ""
		}
		return []string{StopTraceSQL(path), traceCountSQL(path, names, tag)}
	case ev.Source != observer.SourceXE:
		return nil
	case countableTarget(o.XE) == "event_file":
		if ev.Volume {
			tag = ""
		}
		stmts := []string{DroppedSQL(SessionName(o)), StopSessionSQL(SessionName(o)), fileCountSQL(a.filePattern(), names, tag)}
		if o.XE.Retention == observer.RetainNoLoss {
			stmts = append(stmts[:1], append([]string{BlockedSQL}, stmts[1:]...)...)
		}
		if a.maxRolloverFiles() > 0 {
			stmts = append(stmts, fileListSQL(a.filePattern()))
		}
		return stmts
	default:
		stmts := []string{DroppedSQL(SessionName(o)), TargetDataSQL(SessionName(o), countableTarget(o.XE))}
		if o.XE.Retention == observer.RetainNoLoss {
			stmts = append(stmts, BlockedSQL)
		}
		return stmts
	}
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
