package sqlserver

import (
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/observer"
)

// A run needs, by the documentation of each statement it runs, more than
// the three permissions the ping used to check: CREATE DATABASE when the
// dataset's database is to be created, ALTER on each availability group
// whose commit mode it changes.
func TestNeededPermissions(t *testing.T) {
	cat := servertest.Catalog(t)
	lookup := func(name string) observer.Observer {
		o, err := cat.Lookup("sqlserver", name)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	grants := func(ps []Permission) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Grant)
		}
		return out
	}
	const vss = "VIEW SERVER STATE (SQL Server 2022 and later: or VIEW SERVER PERFORMANCE STATE)"
	for _, tt := range []struct {
		name      string
		observers []string
		dbExists  bool
		groups    []string
		want      []string
	}{
		{"collectors only", []string{"baseline"}, true, nil, []string{vss, "ALTER TRACE"}},
		{"database to create", []string{"baseline"}, false, nil, []string{vss, "ALTER TRACE", "CREATE ANY DATABASE"}},
		{"an XE session and a trace", []string{"xe-activity-file", "trace-activity-file"}, true, nil,
			[]string{vss, "ALTER TRACE", "ALTER ANY EVENT SESSION"}},
		{"commit modes", []string{"ag-asynchronous-commit"}, true, []string{"ag1"},
			[]string{vss, "ALTER TRACE", "ALTER ON AVAILABILITY GROUP::[ag1]"}},
	} {
		var obs []observer.Observer
		for _, n := range tt.observers {
			obs = append(obs, lookup(n))
		}
		if got := grants(NeededPermissions(obs, tt.dbExists, tt.groups)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v; want %v", tt.name, got, tt.want)
		}
	}
	all := NeededPermissions([]observer.Observer{lookup("xe-activity-file"), lookup("trace-activity-file"), lookup("ag-synchronous-commit")}, false, []string{"ag1"})
	checkGolden(t, filepath.Join("testdata", "golden", "permissions.sql.golden"), PermissionsSQL(all)+";\n")

	// One line names every permission missing, and what needs it.
	err := missing(all, []sql.NullInt64{{Int64: 1, Valid: true}, {Int64: 0, Valid: true}, {Int64: 0, Valid: true}, {Int64: 1, Valid: true}, {}})
	var pe *engine.PermissionError
	if !errors.As(err, &pe) || !slices.Equal(pe.Missing, []string{"ALTER TRACE", "CREATE ANY DATABASE", "ALTER ON AVAILABILITY GROUP::[ag1]"}) ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("missing = %v; want the three not granted, on one line", err)
	}
}

// AlterTrace: reading sys.traces needs ALTER TRACE: without it the select
// fails with Msg 8189 "You do not have permission to run 'SYS.TRACES'".
// The sys.traces page
// (learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-traces-transact-sql)
// gives only the catalog views' general visibility rule; the pages of the
// same trace metadata say it: sys.fn_trace_getinfo and
// sys.fn_trace_gettable, "Requires ALTER TRACE permission on the server",
// sp_trace_create, "User must have ALTER TRACE permission". Every run reads sys.traces in the
// settings compared before and after it, whatever its observers, so the
// check before a run asks for ALTER TRACE of every run: an XE-only
// least-privilege login is refused before anything changes, not at its
// first snapshot.
func TestAlterTraceAskedOfEveryRun(t *testing.T) {
	cat := servertest.Catalog(t)
	// The documented rule: a statement that names any of these needs the
	// permission.
	needs := map[string]string{"sys.traces": "ALTER TRACE", "sp_trace_": "ALTER TRACE", "fn_trace_": "ALTER TRACE"}
	var every []string // what every run reads, whatever its observers
	for _, q := range settingsQueries {
		every = append(every, q.sql)
	}
	readsTraces := false
	for _, names := range [][]string{{"baseline"}, {"xe-statements-counter"}, {"xe-activity-file", "xe-plans-ring-buffer"}, {"ag-synchronous-commit"}} {
		var obs []observer.Observer
		for _, n := range names {
			o, err := cat.Lookup("sqlserver", n)
			if err != nil {
				t.Fatal(err)
			}
			obs = append(obs, o)
		}
		var granted []string
		for _, p := range NeededPermissions(obs, true, []string{"ag1"}) {
			granted = append(granted, p.Grant)
		}
		for _, q := range every {
			for needle, perm := range needs {
				if strings.Contains(q, needle) {
					readsTraces = true
					if !slices.Contains(granted, perm) {
						t.Errorf("a run of %v reads %s (%q) and needs %s, but the check asks only for %v", names, needle, q, perm, granted)
					}
				}
			}
		}
	}
	if !readsTraces {
		t.Error("no statement of every run reads sys.traces: the settings snapshot no longer lists traces?")
	}
}

// The pages of the views a run reads say, from SQL Server 2022 on, "For
// SQL Server 2022 (16.x) and later versions, requires VIEW SERVER
// PERFORMANCE STATE permission on the server"
// (learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-session-wait-stats-transact-sql,
// sys-dm-hadr-database-replica-states-transact-sql,
// learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-server-event-session-events-transact-sql):
// a least-privilege login granted only that passes there, and the
// permission, which earlier versions do not have, is asked only of 16 or
// later.
func TestViewServerPerformanceState(t *testing.T) {
	check := permServerState.Check
	vss := strings.Index(check, "HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE') = 1 THEN 1")
	version := strings.Index(check, "CAST(SERVERPROPERTY('ProductMajorVersion') AS int) >= 16 AND HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER PERFORMANCE STATE') = 1 THEN 1")
	if vss < 0 || version < vss {
		t.Errorf("the check does not accept VIEW SERVER PERFORMANCE STATE on 2022 and later, after VIEW SERVER STATE: %s", check)
	}
	if !strings.Contains(permServerState.Grant, "VIEW SERVER PERFORMANCE STATE") {
		t.Errorf("a login missing it is told only %q", permServerState.Grant)
	}
}
