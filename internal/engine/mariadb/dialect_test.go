package mariadb

import "testing"

func TestTranslate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT abalance FROM pgbench_accounts WHERE aid = $1", "SELECT abalance FROM pgbench_accounts WHERE aid = ?"},
		{"UPDATE t SET a = a + $1 WHERE id = $2", "UPDATE t SET a = a + ? WHERE id = ?"},
		{"END", "COMMIT"},
		{"/* obsbench-pgbench */ END", "/* obsbench-pgbench */ COMMIT"},
		{"end;", "COMMIT"},
		{"END TRANSACTION", "COMMIT"},
		{"END WORK AND NO CHAIN", "COMMIT AND NO CHAIN"},
		{"end and chain", "COMMIT AND CHAIN"},
		{"COMMIT", "COMMIT"},
		{"BEGIN", "BEGIN"},
		// Not PostgreSQL's END: left alone.
		{"END IF", "END IF"},
		{"SELECT CASE WHEN $1 > 0 THEN 1 END", "SELECT CASE WHEN ? > 0 THEN 1 END"},
	} {
		if got := Translate(c.in); got != c.want {
			t.Errorf("Translate(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
