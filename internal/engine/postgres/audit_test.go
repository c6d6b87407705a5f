package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// Study 5's check on PostgreSQL: the audit trail, rotated into several
// files, holds exactly one record per statement executed, each with the
// study's fields; statements of the excluded system role leave none.
func TestAuditTrailCompleteAcrossRotations(t *testing.T) {
	ctx := context.Background()
	s, pg := newManaged(t)
	o := servertest.CatalogObserver(t, "postgres", "pgaudit-rotated")
	// Rotate every megabyte rather than every 10, so that a short run
	// fills several files.
	o = servertest.WithSetting(o, "log_rotation_size", "1024") // kB

	a, revert := servertest.Apply(t, s, o)
	defer revert()
	wl, _ := workload.Lookup("credit-top1")
	ev := servertest.StartEvents(t, a, wl.Tag)
	executed := servertest.RunUntilRotated(t, s.Dial, wl, ev)
	// The excluded system role's statements, tagged like the workload's,
	// are not audited.
	// The managed server authenticates every role: the test gives the
	// role a password to log in with.
	execSQL(t, s.DSN(), "ALTER ROLE obsbench_system PASSWORD 'x'")
	sys, err := pgx.Connect(ctx, strings.Replace(s.DSN(), "user=postgres", "user=obsbench_system password=x", 1))
	if err != nil {
		t.Fatalf("connect as the excluded role: %v", err)
	}
	if _, err := sys.Exec(ctx, "SELECT 1 /* "+wl.Tag+" */"); err != nil {
		t.Fatal(err)
	}
	sys.Close(ctx)

	files := servertest.AuditTrailComplete(t, ev, executed)
	for _, f := range files {
		if f.Records == 0 || f.Bytes == 0 {
			// What such a file holds says what started it.
			b, _ := os.ReadFile(filepath.Join(pg.DataDir(), "log", f.Name))
			t.Errorf("file %s: %d records, %d bytes; want some of each. It holds:\n%.4000s", f.Name, f.Records, f.Bytes, b)
		}
	}

	// Each record carries time, user, database, application, client and
	// the statement's text.
	dir := filepath.Join(pg.DataDir(), "log")
	b, err := os.ReadFile(filepath.Join(dir, files[len(files)-1].Name))
	if err != nil {
		t.Fatal(err)
	}
	var record string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "AUDIT: SESSION") && strings.Contains(line, wl.Tag) {
			record = line
			break
		}
	}
	for _, want := range []string{"user=postgres", "db=obsbench", "app=", "client=[local]", "READ,SELECT", "FROM payment p JOIN member m"} {
		if !strings.Contains(record, want) {
			t.Errorf("audit record %q lacks %q", record, want)
		}
	}
}
