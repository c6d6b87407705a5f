package sqlserver

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/obsbench/obsbench/internal/observer"
)

// SQL Server's observers are objects obsbench creates rather than
// settings it changes: Extended Events sessions and server-side SQL
// Traces. They are the catalog's sections xe: and trace:, which this
// package owns (engine.Info.Observers): the catalog decodes them into the
// types below, which check and describe themselves, and this package
// renders them as T-SQL. An availability group's commit mode
// (availability_group:) is a setting of an existing replica and is only
// ever switched, never created.

// The sections' keys; xe and trace are also events sources.
const (
	// SourceXE counts what the observer's Extended Events session
	// recorded, read from its first target that keeps events.
	SourceXE = "xe"
	// SourceTrace counts the rows of the observer's trace files.
	SourceTrace = "trace"
	// sectionAG switches the replicas' commit mode.
	sectionAG = "availability_group"
)

// sections are the catalog sections of SQL Server's observers, in the
// order an observer's summary and its apply take them.
var sections = []observer.Section{
	{Key: SourceXE, Label: "xe: (an Extended Events session)", EventsSource: true, New: func() observer.Object { return new(XESession) }},
	{Key: SourceTrace, Label: "trace: (a SQL Trace)", EventsSource: true, New: func() observer.Object { return new(Trace) }},
	{Key: sectionAG, Label: "availability_group:", New: func() observer.Object { return new(AvailabilityGroup) }},
}

// sessionOf is o's XE session, nil if it has none.
func sessionOf(o observer.Observer) *XESession {
	x, _ := o.Objects[SourceXE].(*XESession)
	return x
}

// traceOf is o's trace, nil if it has none.
func traceOf(o observer.Observer) *Trace {
	t, _ := o.Objects[SourceTrace].(*Trace)
	return t
}

// groupOf is the commit mode o switches its availability group's
// replicas to, nil if it switches none.
func groupOf(o observer.Observer) *AvailabilityGroup {
	ag, _ := o.Objects[sectionAG].(*AvailabilityGroup)
	return ag
}

// XE retention modes (CREATE EVENT SESSION ... WITH (EVENT_RETENTION_MODE)).
const (
	RetainSingleLoss   = "ALLOW_SINGLE_EVENT_LOSS"
	RetainMultipleLoss = "ALLOW_MULTIPLE_EVENT_LOSS"
	RetainNoLoss       = "NO_EVENT_LOSS"
)

// XETargetKinds are the XE target kinds (package0.<kind>).
var XETargetKinds = []string{"ring_buffer", "event_file", "event_counter", "histogram", "pair_matching"}

// XEDirPlaceholder stands, in a target option, for the directory the
// server writes its own logs to (read from SERVERPROPERTY('ErrorLogFileName')
// when the session is created): an event_file needs an absolute path that
// the server may write.
const XEDirPlaceholder = "{{xe_dir}}"

// DatabasePlaceholder stands, in a predicate or trace filter, for the
// database that holds obsbench's dataset.
const DatabasePlaceholder = "{{database}}"

// Placeholders filled when an observer is applied: the dataset
// database's id (DB_ID), an id no database on the server has (a filter
// that never matches, as the study's database_id = 77), and the client
// application name of the workload's sessions (a predicate that keeps
// only the workload's events).
const (
	DatabaseIDPlaceholder   = "{{database_id}}"
	NoDatabaseIDPlaceholder = "{{no_database_id}}"
	DriverAppPlaceholder    = "{{driver_app}}"
)

// XESession is an Extended Events session. obsbench creates it under the
// name "obsbench_" + the observer's name (dashes as underscores), starts
// it, and stops and drops it on revert.
type XESession struct {
	Events []XEEvent `yaml:"events" json:"events"`
	// Targets may be empty: a session whose events go nowhere (the cost
	// of firing and of the actions alone).
	Targets []XETarget `yaml:"targets" json:"targets,omitempty"`
	// Retention is EVENT_RETENTION_MODE; empty: the server's default
	// (ALLOW_SINGLE_EVENT_LOSS).
	Retention string `yaml:"retention" json:"retention,omitempty"`
	// MaxMemoryKB is the session's buffer memory (MAX_MEMORY); 0: default.
	MaxMemoryKB int `yaml:"max_memory_kb" json:"max_memory_kb,omitempty"`
	// MaxDispatchLatency is how long events may wait in the buffers
	// before they reach the targets: "INFINITE" or whole seconds ("30s");
	// empty: the default (30 seconds).
	MaxDispatchLatency string `yaml:"max_dispatch_latency" json:"max_dispatch_latency,omitempty"`
	TrackCausality     bool   `yaml:"track_causality" json:"track_causality,omitempty"`
}

// XEEvent is one event of a session, with the actions that run when it
// fires and the predicate that decides whether it fires.
type XEEvent struct {
	Name    string   `yaml:"name" json:"name"`                 // package.event, e.g. sqlserver.sql_statement_completed
	Actions []string `yaml:"actions" json:"actions,omitempty"` // package.action
	// Set are the event's customizable fields (SET collect_statement = 1).
	Set map[string]string `yaml:"set" json:"set,omitempty"`
	// Where is the predicate, in the syntax of CREATE EVENT SESSION's
	// WHERE clause, e.g. "sqlserver.database_name = N'{{database}}'".
	Where string `yaml:"where" json:"where,omitempty"`
}

// XETarget is where a session's events go.
type XETarget struct {
	Kind string `yaml:"kind" json:"kind"`
	// Set are the target's options (max_events_limit, max_file_size,
	// filtering_event_name, ...). A value that is an integer is written
	// as one, any other as an N'...' string.
	Set map[string]string `yaml:"set" json:"set,omitempty"`
}

// Trace is a server-side SQL Trace writing to a file (sp_trace_create).
// obsbench names its file obsbench-<observer>-<time> in the server's log
// directory, starts it, and on revert stops it and deletes its
// definition (sp_trace_setstatus 0, then 2). The file stays.
type Trace struct {
	// Events are trace event ids (41 SQL:StmtCompleted, 146 Showplan XML
	// Statistics Profile, ...), each recorded with every column of Columns.
	Events  []int `yaml:"events" json:"events"`
	Columns []int `yaml:"columns" json:"columns"`
	// EventColumns are further columns recorded only for the event they
	// are listed under: events of one trace do not all carry the same
	// columns (Lock:Acquired has Duration, Lock:Released has not), and a
	// column is never set on an event that does not carry it.
	EventColumns map[int][]int `yaml:"event_columns" json:"event_columns,omitempty"`
	Filters      []TraceFilter `yaml:"filters" json:"filters,omitempty"`
	// MaxFileSizeMB is the size of one file; with Rollover a new file is
	// begun when it is full, and MaxFiles (0: no limit) caps how many are
	// kept: the oldest is deleted.
	MaxFileSizeMB int  `yaml:"max_file_size_mb" json:"max_file_size_mb"`
	Rollover      bool `yaml:"rollover" json:"rollover,omitempty"`
	MaxFiles      int  `yaml:"max_files" json:"max_files,omitempty"`
}

// TraceFilter is one sp_trace_setfilter call.
type TraceFilter struct {
	Column int `yaml:"column" json:"column"`
	// Or joins this filter with OR (logical operator 1); default AND (0).
	Or bool `yaml:"or" json:"or,omitempty"`
	// Op is the comparison: = <> > < >= <= LIKE "NOT LIKE".
	Op string `yaml:"op" json:"op"`
	// Value is sent in the column's own type (sp_trace_setfilter
	// requires it): a number for an int or bigint column, a string for a
	// character column.
	Value string `yaml:"value" json:"value"`
}

// TraceComparisons maps a filter's Op to sp_trace_setfilter's
// @comparison_operator.
var TraceComparisons = map[string]int{"=": 0, "<>": 1, ">": 2, "<": 3, ">=": 4, "<=": 5, "LIKE": 6, "NOT LIKE": 7}

// AvailabilityGroup is the commit mode of the secondary replicas of an
// existing availability group that holds the dataset's database.
type AvailabilityGroup struct {
	// Mode is SYNCHRONOUS_COMMIT or ASYNCHRONOUS_COMMIT.
	Mode string `yaml:"mode" json:"mode"`
}

var (
	xeNameRE   = regexp.MustCompile(`^[a-z0-9_]+\.[a-z0-9_]+$`)
	xeOptionRE = regexp.MustCompile(`^[a-z_]+$`)
	latencyRE  = regexp.MustCompile(`^(INFINITE|[0-9]+s)$`)
	// eventListRE is an events match: for source xe or trace, a comma
	// list of event names (without package) or trace event ids.
	eventListRE = regexp.MustCompile(`^[a-z0-9_]+(,[a-z0-9_]+)*$`)
)

// Check checks the session's names and modes (observer.Object); the
// documented rules of its targets and sizes are CheckXE's.
func (x *XESession) Check() error {
	if len(x.Events) == 0 {
		return errors.New("an XE session needs at least one event (events: [{name: sqlserver.sql_statement_completed}])")
	}
	for _, e := range x.Events {
		if err := e.check(); err != nil {
			return err
		}
	}
	for _, t := range x.Targets {
		if err := t.check(); err != nil {
			return err
		}
	}
	switch x.Retention {
	case "", RetainSingleLoss, RetainMultipleLoss, RetainNoLoss:
	default:
		return fmt.Errorf("retention %q is not one of %s, %s, %s", x.Retention, RetainSingleLoss, RetainMultipleLoss, RetainNoLoss)
	}
	if x.MaxDispatchLatency != "" && !latencyRE.MatchString(x.MaxDispatchLatency) {
		return fmt.Errorf("max_dispatch_latency %q is INFINITE or whole seconds like 30s", x.MaxDispatchLatency)
	}
	if x.MaxMemoryKB < 0 {
		return errors.New("max_memory_kb must be positive")
	}
	return nil
}

func (e XEEvent) check() error {
	if !xeNameRE.MatchString(e.Name) {
		return fmt.Errorf("event %q must be package.event, e.g. sqlserver.sql_statement_completed", e.Name)
	}
	for _, a := range e.Actions {
		if !xeNameRE.MatchString(a) {
			return fmt.Errorf("action %q must be package.action, e.g. sqlserver.sql_text", a)
		}
	}
	for k := range e.Set {
		if !xeOptionRE.MatchString(k) {
			return fmt.Errorf("event field %q is not a field name", k)
		}
	}
	if strings.Contains(e.Where, ";") {
		return errors.New("a predicate is one expression; it may not contain ';'")
	}
	return nil
}

func (t XETarget) check() error {
	if !slices.Contains(XETargetKinds, t.Kind) {
		return fmt.Errorf("target kind %q is not one of %s", t.Kind, strings.Join(XETargetKinds, ", "))
	}
	for k, v := range t.Set {
		if !xeOptionRE.MatchString(k) {
			return fmt.Errorf("target option %q is not an option name", k)
		}
		if strings.Contains(v, "'") {
			return fmt.Errorf("target option %s: a value may not contain a quote", k)
		}
	}
	return nil
}

// Summary is the session's events, targets and loss mode.
func (x *XESession) Summary() string {
	var events, targets []string
	for _, e := range x.Events {
		events = append(events, e.Name)
	}
	for _, t := range x.Targets {
		targets = append(targets, t.Kind)
	}
	if len(targets) == 0 {
		targets = []string{"no target"}
	}
	mode := x.Retention
	if mode == "" {
		mode = RetainSingleLoss
	}
	return fmt.Sprintf("XE session: %s -> %s, %s", strings.Join(events, ","), strings.Join(targets, ","), mode)
}

// Check checks the trace's sizes and filters' operators
// (observer.Object); the documented rules of its events and columns are
// CheckTrace's.
func (t *Trace) Check() error {
	if len(t.Events) == 0 || len(t.Columns) == 0 {
		return errors.New("a trace needs events: and columns: (trace event and column ids)")
	}
	if t.MaxFileSizeMB <= 0 {
		return errors.New("a trace needs max_file_size_mb: (the size of one file)")
	}
	if t.MaxFiles > 0 && !t.Rollover {
		return errors.New("max_files needs rollover: true")
	}
	for ev := range t.EventColumns {
		if !slices.Contains(t.Events, ev) {
			return fmt.Errorf("event_columns names event %d, which is not among the events", ev)
		}
	}
	for _, f := range t.Filters {
		if _, ok := TraceComparisons[f.Op]; !ok {
			ops := make([]string, 0, len(TraceComparisons))
			for op := range TraceComparisons {
				ops = append(ops, op)
			}
			sort.Strings(ops)
			return fmt.Errorf("filter op %q is not one of %s", f.Op, strings.Join(ops, ", "))
		}
	}
	return nil
}

// Summary is the trace's size.
func (t *Trace) Summary() string {
	return fmt.Sprintf("SQL Trace to file: %d event(s), %d MB files", len(t.Events), t.MaxFileSizeMB)
}

// Check checks the mode (observer.Object).
func (ag *AvailabilityGroup) Check() error {
	if ag.Mode != "SYNCHRONOUS_COMMIT" && ag.Mode != "ASYNCHRONOUS_COMMIT" {
		return fmt.Errorf("mode %q is SYNCHRONOUS_COMMIT or ASYNCHRONOUS_COMMIT", ag.Mode)
	}
	return nil
}

// Summary is the mode.
func (ag *AvailabilityGroup) Summary() string { return "availability group replicas " + ag.Mode }

// checkSource checks events counted from a section of o's: o has that
// section, and match lists the events that count.
func checkSource(o observer.Observer) error {
	ev := o.Events
	if ev == nil || ev.Source != SourceXE && ev.Source != SourceTrace {
		return nil
	}
	if ev.Source == SourceXE && sessionOf(o) == nil {
		return errors.New("events source xe counts what the observer's xe: session recorded; it has none")
	}
	if ev.Source == SourceTrace && traceOf(o) == nil {
		return errors.New("events source trace counts what the observer's trace: recorded; it has none")
	}
	if !eventListRE.MatchString(ev.Match) {
		return fmt.Errorf("events source %s needs match: the events that count, one per statement (xe: event names like sql_statement_completed,sp_statement_completed; trace: event ids like 41)", ev.Source)
	}
	return nil
}
