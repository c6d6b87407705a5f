package mariadb_test

import (
	"slices"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// The documented scopes a split goes by are the server's own: each
// variable's VARIABLE_SCOPE in information_schema.SYSTEM_VARIABLES, with
// server_audit installed for its variables.
func TestVariableScopes(t *testing.T) {
	servertest.SkipShort(t)
	m := servertest.MariaDB(t, nil)
	db := servertest.OpenMariaDB(t, m, "")
	if _, err := db.Exec("INSTALL SONAME 'server_audit'"); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT LOWER(VARIABLE_NAME), VARIABLE_SCOPE FROM information_schema.SYSTEM_VARIABLES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var n, s string
		if err := rows.Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		got[n] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for name, s := range mariadb.VariableScopes() {
		if got[name] != s {
			t.Errorf("%s: documented scope %q; the server says %q", name, s, got[name])
		}
	}
}

// A session sets its part with SET SESSION, numbers bare, the rest
// quoted, in name order; a name that is no variable's is left out.
func TestSessionSQL(t *testing.T) {
	got := mariadb.Engine{}.SessionSQL(map[string]string{"long_query_time": "0", "sql_log_off": "ON", "log_slow_verbosity": "query_plan,explain", "x'; DROP": "1", "log_output": `it's\`})
	want := []string{`SET SESSION log_output = 'it''s\\'`, "SET SESSION log_slow_verbosity = 'query_plan,explain'", "SET SESSION long_query_time = 0", "SET SESSION sql_log_off = 'ON'"}
	if !slices.Equal(got, want) {
		t.Errorf("SessionSQL = %q; want %q", got, want)
	}
}

// The catalog's logs split: the general log by the other group opting
// out, the slow log by the observed group's threshold with the other
// group opting out; server_audit and performance_schema do not.
func TestSplitSessions(t *testing.T) {
	e := mariadb.Engine{}
	for _, c := range []struct {
		name                string
		session, unobserved []string
	}{
		{"general-log-file", nil, []string{"SET SESSION sql_log_off = 'ON'"}},
		{"slow-log-all", []string{"SET SESSION long_query_time = 0"}, []string{"SET SESSION slow_query_log = 'OFF'"}},
	} {
		p, err := e.SplitSessions(servertest.CatalogObserver(t, "mariadb", c.name))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := e.SessionSQL(p.Session); !slices.Equal(got, c.session) {
			t.Errorf("%s: the observed group sets %q; want %q", c.name, got, c.session)
		}
		if got := e.SessionSQL(p.Unobserved); !slices.Equal(got, c.unobserved) {
			t.Errorf("%s: the other group sets %q; want %q", c.name, got, c.unobserved)
		}
	}
	for _, name := range []string{"server-audit-file", "perf-schema", "flush-log-at-commit-0"} {
		if _, err := e.SplitSessions(servertest.CatalogObserver(t, "mariadb", name)); err == nil {
			t.Errorf("%s split; want it refused: none of its variables is a session's", name)
		}
	}
}
