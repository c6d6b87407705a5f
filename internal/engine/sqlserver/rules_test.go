package sqlserver

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/pgbench"
	"github.com/obsbench/obsbench/internal/workload"
)

// Every built-in sqlserver observer passes the documented rules, and a
// file observer that breaks one is refused at its line: the check runs
// when observers are parsed (engine.Info.Observers, registered from this package's
// init), so the catalog could not even load if an entry broke a rule.
func TestCatalogFollowsTheDocumentedRules(t *testing.T) {
	cat := servertest.Catalog(t)
	traces, sessions := 0, 0
	for _, o := range cat.All("sqlserver") {
		if field, err := CheckObserver(o); err != nil {
			t.Errorf("%s (%s): %s: %v", o.Name, o.Source, field, err)
		}
		if traceOf(o) != nil {
			traces++
			// Every filter value goes out in its column's type.
			for i, f := range traceOf(o).Filters {
				col, _ := traceColumnType(f.Column)
				sql := CreateTraceSQL(o, goldenEnv)
				if col.typ == "int" && !strings.Contains(sql, "DECLARE @f"+strconv.Itoa(i)+" int = ") {
					t.Errorf("%s: filter on int column %d is not sent as an int:\n%s", o.Name, f.Column, sql)
				}
			}
		}
		if sessionOf(o) != nil {
			sessions++
		}
	}
	if traces < 4 || sessions < 30 {
		t.Errorf("checked %d traces and %d sessions; want the studies' (4 and 30 or more)", traces, sessions)
	}
}

// The faults the documentation review found, each as the catalog had it:
// each must be refused, with the reason the documentation gives.
func TestTraceRulesRefuseWhatTheDocsForbid(t *testing.T) {
	locks := []int{24, 23}
	cases := []struct {
		name  string
		trace Trace
		want  string
	}{
		{"filter on DatabaseName, which lock events do not carry (the filtered-out trace that recorded everything)",
			Trace{Events: locks, Columns: []int{3, 12}, Filters: []TraceFilter{{Column: 35, Op: "=", Value: "obsbench_no_such_database"}}, MaxFileSizeMB: 100},
			"does not carry it"},
		{"column set on an event that lacks it (DatabaseName on Lock:Acquired)",
			Trace{Events: locks, Columns: []int{1, 3, 12, 35}, MaxFileSizeMB: 100},
			"is not a data column of event 24"},
		{"Duration is Lock:Acquired's only",
			Trace{Events: locks, Columns: []int{3, 13}, MaxFileSizeMB: 100},
			"is not a data column of event 23 (Lock:Released)"},
		{"= on DatabaseName (LIKE and NOT LIKE only)",
			Trace{Events: []int{146}, Columns: []int{1, 35}, Filters: []TraceFilter{{Column: 35, Op: "=", Value: "{{database}}"}}, MaxFileSizeMB: 100},
			"DatabaseName takes LIKE, NOT LIKE, not ="},
		{"a text value for the int DatabaseID",
			Trace{Events: locks, Columns: []int{3}, Filters: []TraceFilter{{Column: 3, Op: "=", Value: "obsbench"}}, MaxFileSizeMB: 100},
			"not a whole number, and DatabaseID is int"},
		{"a number for the text DatabaseName",
			Trace{Events: []int{41}, Columns: []int{35}, Filters: []TraceFilter{{Column: 35, Op: "LIKE", Value: "{{database_id}}"}}, MaxFileSizeMB: 100},
			"is a number, and DatabaseName is nvarchar"},
		{"a column not filterable (BinaryData of Showplan XML Statistics Profile)",
			Trace{Events: []int{146}, Columns: []int{2}, Filters: []TraceFilter{{Column: 2, Op: "=", Value: "1"}}, MaxFileSizeMB: 100},
			"not filterable"},
		{"filters on one column split by another",
			Trace{Events: locks, Columns: []int{3, 60}, Filters: []TraceFilter{{Column: 3, Op: ">=", Value: "5"}, {Column: 60, Op: "=", Value: "0"}, {Column: 3, Op: "<=", Value: "9"}}, MaxFileSizeMB: 100},
			"not together"},
		{"an event whose columns obsbench does not have",
			Trace{Events: []int{137}, Columns: []int{3}, MaxFileSizeMB: 100},
			"event 137 is not among"},
	}
	for _, c := range cases {
		err := CheckTrace(&c.trace)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: CheckTrace = %v; want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestXERulesRefuseWhatTheDocsForbid(t *testing.T) {
	lock := []XEEvent{{Name: "sqlserver.lock_acquired"}, {Name: "sqlserver.lock_released"}}
	cases := []struct {
		name string
		xe   XESession
		want string
	}{
		{"an ANSI string in a predicate", XESession{Events: []XEEvent{{Name: "sqlserver.sql_statement_completed", Where: "sqlserver.username <> 'sa'"}}},
			"'sa' is not N'...'"},
		{"MAX_MEMORY of 2 GB", XESession{Events: lock, MaxMemoryKB: 2048 * 1024}, "less than 2048 MB"},
		{"a latency of 0 s", XESession{Events: lock, MaxDispatchLatency: "0s"}, "write INFINITE"},
		{"an option the ring_buffer does not take", XESession{Events: lock, Targets: []XETarget{{Kind: "ring_buffer", Set: map[string]string{"max_event_limit": "10"}}}},
			`option "max_event_limit" is not one of its options`},
		{"an event_counter with options", XESession{Events: lock, Targets: []XETarget{{Kind: "event_counter", Set: map[string]string{"slots": "16"}}}},
			"is not one of its options ()"},
		{"an event_file without .xel", XESession{Events: lock, Targets: []XETarget{{Kind: "event_file", Set: map[string]string{"filename": "/tmp/x.log"}}}},
			".xel must be the extension"},
		{"an event_file without a filename", XESession{Events: lock, Targets: []XETarget{{Kind: "event_file", Set: map[string]string{"max_file_size": "10"}}}},
			"option filename is required"},
		{"an event_file smaller than the buffers", XESession{Events: lock, MaxMemoryKB: 8192, Targets: []XETarget{{Kind: "event_file", Set: map[string]string{"filename": "x.xel", "max_file_size": "4"}}}},
			"larger than the session's buffers"},
		{"a histogram of an event not in the session", XESession{Events: lock, Targets: []XETarget{{Kind: "histogram", Set: map[string]string{"filtering_event_name": "sqlserver.lock_escalation", "source": "mode"}}}},
			"not an event of the session"},
		{"a histogram source_type of 2", XESession{Events: lock, Targets: []XETarget{{Kind: "histogram", Set: map[string]string{"source": "mode", "source_type": "2"}}}},
			"is 0 or 1"},
		{"pair_matching columns of different lengths", XESession{Events: lock, Targets: []XETarget{{Kind: "pair_matching", Set: map[string]string{
			"begin_event": "sqlserver.lock_acquired", "end_event": "sqlserver.lock_released", "begin_matching_columns": "resource_0, database_id", "end_matching_columns": "resource_0"}}}},
			"must be the same sequence"},
	}
	for _, c := range cases {
		err := CheckXE(&c.xe)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: CheckXE = %v; want an error containing %q", c.name, err, c.want)
		}
	}
	if lit, ok := ansiLiteral("a = N'it''s' AND b = N'x'"); ok {
		t.Errorf("ansiLiteral found %s in a predicate of N'...' strings only", lit)
	}
}

// How an observer's events are counted must fit its target.
func TestXECountRules(t *testing.T) {
	lock := []XEEvent{{Name: "sqlserver.lock_acquired"}, {Name: "sqlserver.lock_released"}}
	histogram := XETarget{Kind: "histogram", Set: map[string]string{"filtering_event_name": "sqlserver.lock_acquired", "source": "mode", "source_type": "0"}}
	cases := []struct {
		name   string
		xe     XESession
		events observer.EventCounter
		want   string // "" for no error
	}{
		{"histogram, its filtering event, as volume", XESession{Events: lock, Targets: []XETarget{histogram}},
			observer.EventCounter{Source: "xe", Match: "lock_acquired", Volume: true}, ""},
		{"histogram of both events", XESession{Events: lock, Targets: []XETarget{histogram}},
			observer.EventCounter{Source: "xe", Match: "lock_acquired,lock_released", Volume: true}, "count it with volume: true and match: lock_acquired"},
		{"ring volume of one event of two", XESession{Events: lock, Targets: []XETarget{{Kind: "ring_buffer"}}},
			observer.EventCounter{Source: "xe", Match: "lock_acquired", Volume: true}, "match must name all of"},
		{"an event the session lacks", XESession{Events: lock, Targets: []XETarget{{Kind: "event_file", Set: map[string]string{"filename": "x.xel"}}}},
			observer.EventCounter{Source: "xe", Match: "lock_escalation", Volume: true}, "not an event of the session"},
		{"pair_matching only", XESession{Events: lock, Targets: []XETarget{{Kind: "pair_matching"}}},
			observer.EventCounter{Source: "xe", Match: "lock_acquired", Volume: true}, "no target that keeps events"},
	}
	for _, c := range cases {
		xe, ev := c.xe, c.events
		err := checkXECount(observer.Observer{Name: "x", Engine: "sqlserver", Objects: observer.Objects{SourceXE: &xe}, Events: &ev})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: checkXECount = %v; want an error containing %q", c.name, err, c.want)
		}
	}
}

// A user's observer file with the filtered-out trace as the catalog had it
// is refused when it is parsed, at the trace's line.
func TestObserverFileWithAFilterTheEventLacksIsRefused(t *testing.T) {
	file := `- name: my-lock-trace
  engine: sqlserver
  description: lock trace filtered on the database name
  trace:
    events: [24, 23]
    columns: [3, 12]
    filters:
      - {column: 35, op: "=", value: "{{database}}"}
    max_file_size_mb: 100
`
	_, err := observer.Parse("mine.yaml", []byte(file))
	if err == nil || !strings.Contains(err.Error(), "mine.yaml:4:") || !strings.Contains(err.Error(), "does not carry it") {
		t.Fatalf("Parse = %v; want the trace's line and that Lock:Acquired does not carry column 35", err)
	}
}

// The counted targets' volume: a ring's is what it received, also what a
// full ring pushed out; a histogram's, the sum of its slots; a count of
// every session's events is labelled for what it is unless the predicate
// keeps only the workload's sessions.
func TestVolumeCounts(t *testing.T) {
	st, err := ParseRingBuffer(readXML(t, "ring_buffer_truncated.xml"))
	if err != nil || st.TotalProcessed != 184233 {
		t.Fatalf("ParseRingBuffer = %+v, %v", st, err)
	}
	slots, err := HistogramSlots(readXML(t, "histogram.xml"))
	var n int64
	for _, c := range slots {
		n += c
	}
	if err != nil || n != 91822+20417+311 {
		t.Errorf("histogram volume %d, %v; want the sum of its slots", n, err)
	}
	cat := servertest.Catalog(t)
	counter, _ := cat.Lookup("sqlserver", "xe-statements-counter")
	if notes := counterNotes(counter, []string{"sql_statement_completed", "sp_statement_completed"}); notes != nil {
		t.Errorf("xe-statements-counter keeps only the workload's sessions, yet is noted: %v", notes)
	}
	locks, _ := cat.Lookup("sqlserver", "xe-locks-counter")
	if notes := counterNotes(locks, []string{"lock_acquired", "lock_released"}); len(notes) != 1 {
		t.Errorf("xe-locks-counter counts every session's lock events, yet has notes %v", notes)
	}
}

// sp_trace_create
// (learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-trace-create-transact-sql):
// "max_rollover_files is int, greater than one. This parameter is valid
// only if the TRACE_FILE_ROLLOVER option is specified." A max_files the
// server would refuse at run time is refused when the observer is parsed.
func TestMaxRolloverFiles(t *testing.T) {
	trace := func(rollover bool, maxFiles int) *Trace {
		return &Trace{Events: []int{41}, Columns: []int{1}, MaxFileSizeMB: 5, Rollover: rollover, MaxFiles: maxFiles}
	}
	for _, tt := range []struct {
		name  string
		trace *Trace
		want  string // "" for no error
	}{
		{"no limit", trace(true, 0), ""},
		{"two files", trace(true, 2), ""},
		{"one file", trace(true, 1), "greater than one"},
		{"a negative count", trace(true, -3), "greater than one"},
		{"a count without rollover", trace(false, 10), "valid only with TRACE_FILE_ROLLOVER"},
	} {
		err := CheckTrace(tt.trace)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: CheckTrace = %v; want nil", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: CheckTrace = %v; want an error containing %q", tt.name, err, tt.want)
		}
	}
	file := `- name: one-file-trace
  engine: sqlserver
  description: a trace that keeps one file
  trace:
    events: [41]
    columns: [1]
    max_file_size_mb: 5
    rollover: true
    max_files: 1
`
	if _, err := observer.Parse("mine.yaml", []byte(file)); err == nil || !strings.Contains(err.Error(), "greater than one") {
		t.Errorf("Parse = %v; want max_files 1 refused at load", err)
	}
}

// An event_counter keeps counts, not events ("Event Counter Target",
// learn.microsoft.com/previous-versions/sql/sql-server-2016/ff878025(v=sql.130):
// "The event counter target counts all events that occur during an
// Extended Events session"), so nothing read from it can be matched with
// the workload's tag afterwards. inserts-batched sends BEGIN and COMMIT TRANSACTION untagged,
// and the driver counts only its INSERTs: whether those statements fire
// sql_statement_completed or not, the count is right only if the session's
// predicate keeps the tagged statements alone. A counter without that
// predicate is refused; the catalog's has it, and every workload's tag
// starts with the prefix it matches.
func TestUntaggedStatements(t *testing.T) {
	counter := servertest.CatalogObserver(t, "sqlserver", "xe-statements-counter")
	if field, err := CheckObserver(counter); err != nil {
		t.Errorf("xe-statements-counter: %s: %v", field, err)
	}
	sql := CreateSessionSQL(counter, goldenEnv)
	if n := strings.Count(sql, "WHERE (sqlserver.database_id = 7 AND sqlserver.client_app_name = N'obsbench-driver' AND "+tagPredicate+")"); n != len(sessionOf(counter).Events) {
		t.Errorf("%d of %d events filtered on the tag:\n%s", n, len(sessionOf(counter).Events), sql)
	}
	untagged := counter
	x := *sessionOf(counter)
	x.Events = slices.Clone(x.Events)
	for i := range x.Events {
		x.Events[i].Where = "sqlserver.database_id = {{database_id}} AND sqlserver.client_app_name = N'{{driver_app}}'"
	}
	untagged.Objects = observer.Objects{SourceXE: &x}
	if _, err := CheckObserver(untagged); err == nil || !strings.Contains(err.Error(), "untagged statements") {
		t.Errorf("an event_counter without the tag predicate: %v; want it refused", err)
	}
	for _, name := range workload.Names() {
		m, err := workload.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(m.Tag, TagPrefix) {
			t.Errorf("workload %s's tag %q does not start with %q: the counter's predicate would leave its statements out", name, m.Tag, TagPrefix)
		}
	}
	for _, tag := range []string{pgbench.Tag, pgbench.SQLTag} {
		if !strings.HasPrefix(tag, TagPrefix) {
			t.Errorf("pgbench tag %q does not start with %q", tag, TagPrefix)
		}
	}
}
