package mariadb_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/server/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// Study 5's check on MariaDB: server_audit's files, rotated several times,
// hold exactly one record per statement executed; the excluded system
// user's statements leave none.
func TestAuditTrailCompleteAcrossRotations(t *testing.T) {
	ctx := context.Background()
	s, m := newManaged(t)
	cat, err := observer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	o, err := cat.Lookup("mariadb", "server-audit-rotated")
	if err != nil {
		t.Fatal(err)
	}
	// Rotate every megabyte rather than every 10, so that a short run
	// fills several files.
	settings := map[string]string{"server_audit_file_rotate_size": "1048576"}
	for k, v := range o.Settings {
		if _, set := settings[k]; !set {
			settings[k] = v
		}
	}
	o.Settings = settings
	db := servertest.OpenMariaDB(t, m, "")
	if _, err := db.ExecContext(ctx, "CREATE USER obsbench_system@localhost IDENTIFIED BY 'x'"); err != nil {
		t.Fatal(err)
	}

	a, err := s.Apply(ctx, o)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	defer func() {
		if err := a.Revert(ctx); err != nil {
			t.Errorf("Revert: %v", err)
		}
	}()
	wl, _ := workload.Lookup("credit-top1")
	ev, err := a.StartEvents(ctx, wl.Tag)
	if err != nil || ev == nil {
		t.Fatalf("StartEvents = %v, %v", ev, err)
	}
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	var executed int64
	for i := 0; i < 5; i++ {
		r, err := driver.Run(ctx, driver.Config{Clients: 4, Duration: 2 * time.Second}, dial, wl.New())
		if err != nil {
			t.Fatalf("driver.Run: %v", err)
		}
		executed += r.Executed
		if files, _ := ev.(experiment.FileCounter).CountFiles(ctx); len(files) >= 3 {
			break
		}
	}
	sys, err := sql.Open("mysql", "obsbench_system:x@unix("+m.Socket()+")/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sys.ExecContext(ctx, "SELECT 1 /* "+wl.Tag+" */"); err != nil {
		t.Fatalf("as the excluded user: %v", err)
	}
	sys.Close()

	files, err := ev.(experiment.FileCounter).CountFiles(ctx)
	if err != nil {
		t.Fatalf("CountFiles: %v", err)
	}
	var total int64
	for _, f := range files {
		total += f.Records
	}
	if len(files) < 2 {
		t.Errorf("records in %d file(s); want the trail rotated into at least 2", len(files))
	}
	if total != executed || total == 0 {
		t.Errorf("audit records = %d in %d files %v; want %d (statements executed)", total, len(files), files, executed)
	}
}
