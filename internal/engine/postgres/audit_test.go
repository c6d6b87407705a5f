package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/workload"
)

// Study 5's check on PostgreSQL: the audit trail, rotated into several
// files, holds exactly one record per statement executed, each with the
// study's fields; statements of the excluded system role leave none.
func TestAuditTrailCompleteAcrossRotations(t *testing.T) {
	ctx := context.Background()
	s, pg := newManaged(t)
	cat, err := observer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	o, err := cat.Lookup("postgres", "pgaudit-rotated")
	if err != nil {
		t.Fatal(err)
	}
	// Rotate every megabyte rather than every 10, so that a short run
	// fills several files.
	settings := map[string]string{"log_rotation_size": "1024"} // kB
	for k, v := range o.Settings {
		if k != "log_rotation_size" {
			settings[k] = v
		}
	}
	o.Settings = settings

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
	var res driver.Result
	// Until the trail has rotated at least once (a loaded machine writes
	// less per second).
	for i := 0; i < 5; i++ {
		r, err := driver.Run(ctx, driver.Config{Clients: 4, Duration: 2 * time.Second}, dial, wl.New())
		if err != nil {
			t.Fatalf("driver.Run: %v", err)
		}
		res.Executed += r.Executed
		if files, _ := ev.(experiment.FileCounter).CountFiles(ctx); len(files) >= 3 {
			break
		}
	}
	// The excluded system role's statements, tagged like the workload's,
	// are not audited.
	// The managed server authenticates every role: the test gives the
	// role a password to log in with.
	exec(t, s.DSN(), "ALTER ROLE obsbench_system PASSWORD 'x'")
	sys, err := pgx.Connect(ctx, strings.Replace(s.DSN(), "user=postgres", "user=obsbench_system password=x", 1))
	if err != nil {
		t.Fatalf("connect as the excluded role: %v", err)
	}
	if _, err := sys.Exec(ctx, "SELECT 1 /* "+wl.Tag+" */"); err != nil {
		t.Fatal(err)
	}
	sys.Close(ctx)

	files, err := ev.(experiment.FileCounter).CountFiles(ctx)
	if err != nil {
		t.Fatalf("CountFiles: %v", err)
	}
	var total int64
	for _, f := range files {
		total += f.Records
		if f.Records == 0 || f.Bytes == 0 {
			// What such a file holds says what started it.
			b, _ := os.ReadFile(filepath.Join(pg.DataDir(), "log", f.Name))
			t.Errorf("file %s: %d records, %d bytes; want some of each. It holds:\n%.4000s", f.Name, f.Records, f.Bytes, b)
		}
	}
	if len(files) < 2 {
		t.Errorf("records in %d file(s); want the trail rotated into at least 2", len(files))
	}
	if total != res.Executed || total == 0 {
		t.Errorf("audit records = %d in %d files; want %d (statements executed)", total, len(files), res.Executed)
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
