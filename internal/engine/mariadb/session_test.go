package mariadb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// The driver's session reads every row of a result, reports the server's
// errors, and fails (does not hang or pass) once the server killed it.
func TestSessionRowsErrorsAndKill(t *testing.T) {
	ctx := context.Background()
	s, m := newManaged(t)
	sess := servertest.Session(t, s)
	if _, err := sess.Prepare(ctx, "SELECT nosuchcolumn FROM member"); err == nil || !strings.Contains(err.Error(), "nosuchcolumn") {
		t.Errorf("Prepare of a bad statement = %v; want the server's error naming the column", err)
	}
	st := servertest.Prepare(t, sess, "SELECT member_no FROM member WHERE member_no <= ?")
	// A result left unread would put the next command out of sync.
	for range 3 {
		if err := st.Exec(ctx, 5000); err != nil {
			t.Fatal(err)
		}
	}
	db := servertest.OpenMariaDB(t, m, "")
	// The session is the one connection on the dataset database (the
	// killer's has none).
	var id int64
	if err := db.QueryRow("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = 'obsbench' AND ID <> CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatalf("find the session: %v", err)
	}
	if _, err := db.Exec("KILL ?", id); err != nil {
		t.Fatal(err)
	}
	if err := st.Exec(ctx, 1); err == nil {
		t.Error("Exec on a killed session succeeded")
	}
}

// QueryRows returns a result's columns and rows as text, NULL as nil (a
// pgbench script's \gset on MariaDB).
func TestSessionQueryRows(t *testing.T) {
	s, _ := newManaged(t)
	st := servertest.Prepare(t, servertest.Session(t, s), "SELECT ? + 0 AS a, NULL AS b, 'x' AS c UNION ALL SELECT 2, 'y', NULL")
	cols, got := servertest.RowsText(t, st, 7)
	if strings.Join(cols, " ")+" | "+strings.Join(got, " ") != "a b c | 7 NULL x 2 y NULL" {
		t.Errorf("QueryRows = %v %v", cols, got)
	}
}
