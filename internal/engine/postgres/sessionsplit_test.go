package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// The documented contexts a split goes by are the server's own: each
// setting's pg_settings.context, with the libraries loaded whose
// settings the table lists.
func TestSessionContexts(t *testing.T) {
	pg := servertest.PostgresWith(t, map[string]string{"shared_preload_libraries": "'auto_explain,pgaudit,pg_stat_statements'"})
	ctx := context.Background()
	conn := servertest.Connect(ctx, t, pg.DSN("postgres"))
	want := postgres.SessionContexts()
	rows, err := conn.Query(ctx, "SELECT name, context FROM pg_settings")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var n, c string
		if err := rows.Scan(&n, &c); err != nil {
			t.Fatal(err)
		}
		got[n] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for name, c := range want {
		if got[name] != c {
			t.Errorf("%s: documented context %q; the server says %q", name, c, got[name])
		}
	}
}

// A session sets its part with SET, values quoted, in name order.
func TestSessionSQL(t *testing.T) {
	got := postgres.Engine{}.SessionSQL(map[string]string{"pgaudit.log": "read, write", "log_statement": "all", "x'; DROP": "1", "log_line_prefix": "it's"})
	want := []string{"SET log_line_prefix TO 'it''s'", "SET log_statement TO 'all'", "SET pgaudit.log TO 'read, write'"}
	if !slices.Equal(got, want) {
		t.Errorf("SessionSQL = %q; want %q", got, want)
	}
}
