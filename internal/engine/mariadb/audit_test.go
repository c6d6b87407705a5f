package mariadb_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// Study 5's check on MariaDB: server_audit's files, rotated several times,
// hold exactly one record per statement executed; the excluded system
// user's statements leave none.
func TestAuditTrailCompleteAcrossRotations(t *testing.T) {
	ctx := context.Background()
	s, m := newManaged(t)
	o := servertest.CatalogObserver(t, "mariadb", "server-audit-rotated")
	// Rotate every megabyte rather than every 10, so that a short run
	// fills several files.
	o = servertest.WithSetting(o, "server_audit_file_rotate_size", "1048576")
	db := servertest.OpenMariaDB(t, m, "")
	if _, err := db.ExecContext(ctx, "CREATE USER obsbench_system@localhost IDENTIFIED BY 'x'"); err != nil {
		t.Fatal(err)
	}

	a, revert := servertest.Apply(t, s, o)
	defer revert()
	wl, _ := workload.Lookup("credit-top1")
	ev := servertest.StartEvents(t, a, wl.Tag)
	executed := servertest.RunUntilRotated(t, s.Dial, wl, ev)
	sys, err := sql.Open("mysql", "obsbench_system:x@unix("+m.Socket()+")/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sys.ExecContext(ctx, "SELECT 1 /* "+wl.Tag+" */"); err != nil {
		t.Fatalf("as the excluded user: %v", err)
	}
	sys.Close()

	servertest.AuditTrailComplete(t, ev, executed)
}
