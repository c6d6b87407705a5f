package sqlserver

import (
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
)

// A run needs, by the documentation of each statement it runs, more than
// the three permissions the ping used to check: CREATE DATABASE when the
// dataset's database is to be created, ALTER on each availability group
// whose commit mode it changes.
func TestNeededPermissions(t *testing.T) {
	cat, err := observer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
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
	for _, tt := range []struct {
		name      string
		observers []string
		dbExists  bool
		groups    []string
		want      []string
	}{
		{"collectors only", []string{"baseline"}, true, nil, []string{"VIEW SERVER STATE"}},
		{"database to create", []string{"baseline"}, false, nil, []string{"VIEW SERVER STATE", "CREATE ANY DATABASE"}},
		{"an XE session and a trace", []string{"xe-activity-file", "trace-activity-file"}, true, nil,
			[]string{"VIEW SERVER STATE", "ALTER ANY EVENT SESSION", "ALTER TRACE"}},
		{"commit modes", []string{"ag-asynchronous-commit"}, true, []string{"ag1"},
			[]string{"VIEW SERVER STATE", "ALTER ON AVAILABILITY GROUP::[ag1]"}},
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
	checkGolden(t, filepath.Join("testdata", "golden", "permissions.sql"), PermissionsSQL(all)+";\n")

	// One line names every permission missing, and what needs it.
	err = missing(all, []sql.NullInt64{{Int64: 1, Valid: true}, {Int64: 0, Valid: true}, {Int64: 1, Valid: true}, {}, {Int64: 0, Valid: true}})
	var pe *engine.PermissionError
	if !errors.As(err, &pe) || !slices.Equal(pe.Missing, []string{"CREATE ANY DATABASE", "ALTER TRACE", "ALTER ON AVAILABILITY GROUP::[ag1]"}) ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("missing = %v; want the three not granted, on one line", err)
	}
}
