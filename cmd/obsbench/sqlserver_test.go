package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// obsbench against a live SQL Server: the dry run prints the complete
// T-SQL of a study and changes nothing, inspect lists the server's
// observers, and a short run measures one observer end to end. CI here has
// no SQL Server: these run only where OBSBENCH_TEST_MSSQL names one.
func TestSQLServerLive(t *testing.T) {
	dsn := os.Getenv("OBSBENCH_TEST_MSSQL")
	if dsn == "" {
		t.Skip("CI here has no SQL Server: set OBSBENCH_TEST_MSSQL=sqlserver://user:password@host:1433 to run obsbench against one")
	}
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"study", "targets", "--engine", "sqlserver", "--dsn", dsn, "--dry-run"}, &stdout, &stderr); code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"CREATE EVENT SESSION [obsbench_xe_locks_pair_matching] ON SERVER", "DROP EVENT SESSION", "sp_trace_create", "SELECT TOP (1)", "sys.dm_os_wait_stats"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("dry run lacks %q", want)
		}
	}
	stdout.Reset()
	if code := run(ctx, []string{"inspect", "--engine", "sqlserver", "--dsn", dsn}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "Extended Events sessions") {
		t.Fatalf("inspect: exit %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	out := t.TempDir()
	code := run(ctx, []string{"run", "--engine", "sqlserver", "--dsn", dsn, "--allow-changes", "--observers", "xe-statements-counter",
		"--rounds", "2", "--duration", "2s", "--warmup", "500ms", "--clients", "4", "--out", out}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "xe-statements-counter") {
		t.Fatalf("run: exit %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	t.Log(stdout.String())
}
