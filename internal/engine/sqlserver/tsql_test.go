package sqlserver

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/observer"
)

// goldenEnv is a Linux server's log directory and a fixed stamp.
var goldenEnv = Env{Database: "obsbench", DatabaseID: 7, NoDatabaseID: 12, LogDir: "/var/opt/mssql/log/", Stamp: "20261122T000000"}

// goldenReplicas is an availability group with one synchronous and one
// asynchronous secondary, both with manual failover.
var goldenReplicas = []Replica{
	{Group: "ag1", Name: "SQL1", Mode: "SYNCHRONOUS_COMMIT", Failover: "MANUAL", Primary: true, Local: true},
	{Group: "ag1", Name: "SQL2", Mode: "SYNCHRONOUS_COMMIT", Failover: "MANUAL"},
	{Group: "ag1", Name: "SQL3", Mode: "ASYNCHRONOUS_COMMIT", Failover: "MANUAL"},
}

// renderObserver is the whole T-SQL of one catalog entry: what applying
// it runs, what reverting it runs, and how its events are counted.
func renderObserver(t *testing.T, o observer.Observer) string {
	t.Helper()
	steps, err := plan(o, goldenEnv, goldenReplicas)
	if err != nil {
		t.Fatalf("%s: %v", o.Name, err)
	}
	var b strings.Builder
	b.WriteString("-- " + o.Name + ": " + o.Description + "\n-- source: " + o.Source + "\n\n-- apply\n")
	for _, st := range steps {
		for _, s := range st.Do {
			b.WriteString(s + ";\n")
		}
		if st.Wait != "" {
			b.WriteString(waitComment + st.Wait + ";\n")
		}
	}
	b.WriteString("\n-- revert\n")
	for i := len(steps) - 1; i >= 0; i-- {
		for _, s := range steps[i].Undo {
			b.WriteString(s + ";\n")
		}
	}
	for _, st := range steps {
		if st.UndoWait != "" {
			b.WriteString(waitComment + st.UndoWait + ";\n")
		}
	}
	if ev := o.Events; ev != nil {
		b.WriteString("\n-- count events (" + ev.Source + ")\n")
		for _, st := range countStatements(o, goldenEnv, "obsbench-tag") {
			if strings.HasPrefix(st, "--") && !strings.Contains(st, "\n") {
				b.WriteString(st + "\n") // a comment: what Count does between statements
				continue
			}
			b.WriteString(st + ";\n")
		}
	}
	return b.String()
}

// Every catalog entry's T-SQL, and its revert, is checked in under
// testdata/golden/catalog: a change to the catalog or the renderer shows
// as a diff to review against the documented syntax.
// go test ./internal/engine/sqlserver -run TestCatalogGolden -update rewrites them.
func TestCatalogGolden(t *testing.T) {
	cat := servertest.Catalog(t)
	all := cat.All("sqlserver")
	if len(all) < 40 {
		t.Fatalf("%d sqlserver observers; want the studies' set (40 or more)", len(all))
	}
	dir := filepath.Join("testdata", "golden", "catalog")
	seen := map[string]bool{}
	for _, o := range all {
		name := o.Name + ".sql.golden"
		seen[name] = true
		got := renderObserver(t, o)
		checkGolden(t, filepath.Join(dir, name), got)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.sql.golden"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s: no catalog entry of that name any more; delete it", f)
		}
	}
}

// The rendering's own rules, each on a small observer.
func TestRenderRules(t *testing.T) {
	xe := func(x XESession) observer.Observer {
		return observer.Observer{Name: "t-x", Engine: "sqlserver", Objects: observer.Objects{SourceXE: &x}}
	}
	tests := []struct {
		name string
		got  string
		want []string // substrings, in order
	}{
		{"session name prefixed, dashes as underscores", SessionName(observer.Observer{Name: "xe-plans-file"}), []string{"obsbench_xe_plans_file"}},
		{"no target: no ADD TARGET, no trailing comma",
			CreateSessionSQL(xe(XESession{Events: []XEEvent{{Name: "sqlserver.lock_acquired"}}}), goldenEnv),
			[]string{"CREATE EVENT SESSION [obsbench_t_x] ON SERVER\nADD EVENT sqlserver.lock_acquired\nWITH (EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF)"}},
		{"two events, SET before ACTION before WHERE, numbers in parentheses",
			CreateSessionSQL(xe(XESession{Events: []XEEvent{
				{Name: "sqlserver.a", Set: map[string]string{"collect_x": "1"}, Actions: []string{"sqlserver.session_id"}, Where: "sqlserver.database_name = N'{{database}}'"},
				{Name: "sqlserver.b"}},
				Targets:   []XETarget{{Kind: "event_file", Set: map[string]string{"filename": "{{xe_dir}}f_{{stamp}}.xel", "max_file_size": "10"}}, {Kind: "event_counter"}},
				Retention: RetainNoLoss, MaxDispatchLatency: "5s", MaxMemoryKB: 4096, TrackCausality: true}), goldenEnv),
			[]string{"ADD EVENT sqlserver.a(SET collect_x = (1)\n    ACTION(sqlserver.session_id)\n    WHERE (sqlserver.database_name = N'obsbench')),",
				"ADD EVENT sqlserver.b\n",
				"ADD TARGET package0.event_file(SET filename = N'/var/opt/mssql/log/f_20261122T000000.xel', max_file_size = (10)),\n",
				"ADD TARGET package0.event_counter\n",
				"WITH (MAX_MEMORY = 4096 KB, EVENT_RETENTION_MODE = NO_EVENT_LOSS, MAX_DISPATCH_LATENCY = 5 SECONDS, TRACK_CAUSALITY = ON, STARTUP_STATE = OFF)"}},
		{"infinite latency", CreateSessionSQL(xe(XESession{Events: []XEEvent{{Name: "sqlserver.a"}}, MaxDispatchLatency: "INFINITE"}), goldenEnv),
			[]string{"MAX_DISPATCH_LATENCY = INFINITE"}},
		{"drop is guarded twice", DropSessionSQL("obsbench_x"),
			[]string{"IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_x') ALTER EVENT SESSION [obsbench_x] ON SERVER STATE = STOP;\n",
				"IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_x') DROP EVENT SESSION [obsbench_x] ON SERVER"}},
		{"quotes doubled", quoteString("it's") + quoteName("a]b"), []string{"N'it''s'[a]]b]"}},
		{"trace found by an escaped path prefix", DropTraceSQL(`C:\log\obsbench_t_1`), []string{`path LIKE N'C:\log\obsbench[_]t[_]1%'`, "sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2"}},
		{"trace file named with dashes", TracePath(observer.Observer{Name: "trace-x"}, goldenEnv), []string{"/var/opt/mssql/log/obsbench-trace-x-20261122T000000"}},
		{"commas between events and between targets, not between the lists",
			CreateSessionSQL(xe(XESession{Events: []XEEvent{{Name: "sqlserver.a"}, {Name: "sqlserver.b"}}, Targets: []XETarget{{Kind: "event_counter"}, {Kind: "ring_buffer"}}}), goldenEnv),
			[]string{"ADD EVENT sqlserver.a,\nADD EVENT sqlserver.b\nADD TARGET package0.event_counter,\nADD TARGET package0.ring_buffer\nWITH"}},
		{"trace without rollover: options 0, no file count",
			CreateTraceSQL(observer.Observer{Name: "t", Objects: observer.Objects{SourceTrace: &Trace{Events: []int{41}, Columns: []int{1}, MaxFileSizeMB: 5}}}, goldenEnv),
			[]string{"@maxfilesize bigint = 5, @stoptime datetime = DATEADD(hour, 25, GETDATE()), @on bit = 1", "@options = 0, @tracefile = N'/var/opt/mssql/log/obsbench-t-20261122T000000', @maxfilesize = @maxfilesize, @stoptime = @stoptime, @filecount = NULL",
				"EXEC @rc = sp_trace_setevent @id, 41, 1, @on;\nIF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 41, 1 failed with code %d', 16, 1, @rc); RETURN; END;",
				"EXEC @rc = sp_trace_setstatus @id, 1;\n", "SELECT @id"}},
		{"trace filter OR and NOT LIKE",
			CreateTraceSQL(observer.Observer{Name: "t", Objects: observer.Objects{SourceTrace: &Trace{Events: []int{41}, Columns: []int{1}, MaxFileSizeMB: 5,
				Filters: []TraceFilter{{Column: 10, Or: true, Op: "NOT LIKE", Value: "SQLAgent%"}}}}}, goldenEnv),
			[]string{"EXEC @rc = sp_trace_setfilter @id, 10, 1, 7, N'SQLAgent%';"}},
		{"tag wildcards escaped in counts", fileCountSQL("/l/x*.xel", []string{"a"}, "obsbench_t%"), []string{"event_data LIKE N'%obsbench[_]t[%]%'"}},
		{"Windows log directory", logDir(`C:\Program Files\MSSQL16\MSSQL\Log\ERRORLOG`), []string{`C:\Program Files\MSSQL16\MSSQL\Log\`}},
		{"Linux log directory", logDir("/var/opt/mssql/log/errorlog"), []string{"/var/opt/mssql/log/"}},
	}
	for _, tt := range tests {
		rest := tt.got
		for _, w := range tt.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: missing (or out of order) %q in:\n%s", tt.name, w, tt.got)
				break
			}
			rest = rest[i+len(w):]
		}
	}
}

// An availability-group observer switches only the secondaries whose mode
// differs, back on revert; it refuses without a group, and refuses to go
// asynchronous under automatic failover.
func TestAvailabilityGroupPlan(t *testing.T) {
	async := observer.Observer{Name: "ag-asynchronous-commit", Engine: "sqlserver", Objects: observer.Objects{sectionAG: &AvailabilityGroup{Mode: "ASYNCHRONOUS_COMMIT"}}}
	steps, err := plan(async, goldenEnv, goldenReplicas)
	if err != nil || len(steps) != 1 || steps[0].Do[0] != "ALTER AVAILABILITY GROUP [ag1] MODIFY REPLICA ON N'SQL2' WITH (AVAILABILITY_MODE = ASYNCHRONOUS_COMMIT)" ||
		steps[0].Undo[0] != "ALTER AVAILABILITY GROUP [ag1] MODIFY REPLICA ON N'SQL2' WITH (AVAILABILITY_MODE = SYNCHRONOUS_COMMIT)" {
		t.Errorf("async plan = %+v, %v; want SQL2 switched and back", steps, err)
	}
	if _, err := plan(async, goldenEnv, nil); err == nil || !strings.Contains(err.Error(), "never creates one") {
		t.Errorf("without a group: %v; want NoAvailabilityGroupError", err)
	}
	auto := []Replica{goldenReplicas[0], {Group: "ag1", Name: "SQL2", Mode: "SYNCHRONOUS_COMMIT", Failover: "AUTOMATIC"}}
	if _, err := plan(async, goldenEnv, auto); err == nil || !strings.Contains(err.Error(), "fails over automatically") {
		t.Errorf("automatic failover: %v; want a refusal", err)
	}
}

// What the documentation of ALTER AVAILABILITY GROUP says a plan must
// respect: MODIFY REPLICA runs on the primary, and a configuration-only
// replica has no commit mode to switch.
func TestAvailabilityGroupPlanFollowsTheDocs(t *testing.T) {
	async := servertest.CatalogObserver(t, "sqlserver", "ag-asynchronous-commit")
	withConfigOnly := append(slices.Clone(goldenReplicas), Replica{Group: "ag1", Name: "WITNESS", Mode: "CONFIGURATION_ONLY", Failover: "MANUAL"})
	steps, err := plan(async, goldenEnv, withConfigOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if strings.Contains(strings.Join(st.Do, " "), "WITNESS") {
			t.Errorf("plan alters the configuration-only replica: %v", st.Do)
		}
	}
	onSecondary := slices.Clone(goldenReplicas)
	onSecondary[0].Local, onSecondary[1].Local = false, true
	var np *NotPrimaryError
	if _, err := plan(async, goldenEnv, onSecondary); !errors.As(err, &np) || np.Group != "ag1" {
		t.Errorf("connected to a secondary: %v; want a NotPrimaryError for ag1", err)
	}
}

// "Differences between availability modes for an Always On availability
// group"
// (learn.microsoft.com/sql/database-engine/availability-groups/windows/availability-modes-always-on-availability-groups):
// "If the primary replica is configured for asynchronous-commit mode, it
// does not wait for any secondary replica", and "for synchronous commit to
// occur, both the current primary replica and the secondary replica in
// question must be configured for synchronous commit". A synchronous
// observer on an asynchronous primary switches the primary too, first,
// and back last; an asynchronous observer leaves the primary alone.
func TestPrimaryAvailabilityMode(t *testing.T) {
	sync := servertest.CatalogObserver(t, "sqlserver", "ag-synchronous-commit")
	async := servertest.CatalogObserver(t, "sqlserver", "ag-asynchronous-commit")
	asyncPrimary := slices.Clone(goldenReplicas)
	asyncPrimary[0].Mode = "ASYNCHRONOUS_COMMIT"
	steps, err := plan(sync, goldenEnv, asyncPrimary)
	if err != nil {
		t.Fatal(err)
	}
	var do, undo []string
	for _, st := range steps {
		do = append(do, st.Do...)
		undo = append(slices.Clone(st.Undo), undo...)
	}
	wantDo := []string{
		"ALTER AVAILABILITY GROUP [ag1] MODIFY REPLICA ON N'SQL1' WITH (AVAILABILITY_MODE = SYNCHRONOUS_COMMIT)",
		"ALTER AVAILABILITY GROUP [ag1] MODIFY REPLICA ON N'SQL3' WITH (AVAILABILITY_MODE = SYNCHRONOUS_COMMIT)",
	}
	wantUndo := []string{
		"ALTER AVAILABILITY GROUP [ag1] MODIFY REPLICA ON N'SQL3' WITH (AVAILABILITY_MODE = ASYNCHRONOUS_COMMIT)",
		"ALTER AVAILABILITY GROUP [ag1] MODIFY REPLICA ON N'SQL1' WITH (AVAILABILITY_MODE = ASYNCHRONOUS_COMMIT)",
	}
	if !slices.Equal(do, wantDo) || !slices.Equal(undo, wantUndo) {
		t.Errorf("synchronous observer on an asynchronous primary: apply %q, revert %q;\nwant apply %q, revert %q", do, undo, wantDo, wantUndo)
	}
	steps, err = plan(async, goldenEnv, asyncPrimary)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if strings.Contains(strings.Join(st.Do, " "), "N'SQL1'") {
			t.Errorf("asynchronous observer switches the primary: %v", st.Do)
		}
	}
}

// The same page: a secondary switched to synchronous commit is
// PARTIALLY_HEALTHY "until all of its databases are in the SYNCHRONIZED
// synchronization state", which it enters "as soon as every log record has
// been hardened"; sys.dm_hadr_database_replica_states
// (learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-hadr-database-replica-states-transact-sql)
// gives synchronization_state_desc, SYNCHRONIZED among them. The apply of
// a synchronous observer, and the revert of an asynchronous one, wait
// until every synchronous secondary's copy of the dataset reads
// SYNCHRONIZED, and fail when it never does.
func TestWaitsForSynchronized(t *testing.T) {
	sync := servertest.CatalogObserver(t, "sqlserver", "ag-synchronous-commit")
	async := servertest.CatalogObserver(t, "sqlserver", "ag-asynchronous-commit")
	steps, err := plan(sync, goldenEnv, goldenReplicas)
	if err != nil || len(steps) != 1 {
		t.Fatalf("plan = %+v, %v; want SQL3 switched", steps, err)
	}
	for _, want := range []string{"sys.dm_hadr_database_replica_states", "<> N'SYNCHRONIZED'", "IN (N'SQL2', N'SQL3')", "database_name = N'obsbench'"} {
		if !strings.Contains(steps[0].Wait, want) {
			t.Errorf("the apply's wait lacks %q:\n%s", want, steps[0].Wait)
		}
	}
	if steps[0].UndoWait != "" {
		t.Errorf("the revert to asynchronous commit waits: %s", steps[0].UndoWait)
	}
	steps, err = plan(async, goldenEnv, goldenReplicas)
	if err != nil || len(steps) != 1 {
		t.Fatalf("plan = %+v, %v; want SQL2 switched", steps, err)
	}
	if steps[0].Wait != "" || !strings.Contains(steps[0].UndoWait, "IN (N'SQL2')") {
		t.Errorf("asynchronous observer: wait %q, undo wait %q; want only the revert to wait, for SQL2", steps[0].Wait, steps[0].UndoWait)
	}

	ctx := context.Background()
	behind := []int{2, 1, 0}
	calls := 0
	read := func() (int, error) { calls++; n := behind[0]; behind = behind[1:]; return n, nil }
	if err := awaitZero(ctx, read, time.Second, time.Millisecond); err != nil || calls != 3 {
		t.Errorf("awaitZero = %v after %d reads; want nil after 3 (2 and 1 behind, then none)", err, calls)
	}
	stuck := func() (int, error) { return 1, nil }
	if err := awaitZero(ctx, stuck, 5*time.Millisecond, time.Millisecond); err == nil || !strings.Contains(err.Error(), "not SYNCHRONIZED") {
		t.Errorf("awaitZero on a replica that never catches up = %v; want an error naming SYNCHRONIZED", err)
	}
}
