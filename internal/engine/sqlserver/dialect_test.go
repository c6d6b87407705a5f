package sqlserver

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/workload"
)

func TestTranslate(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT a FROM t WHERE k = $1 AND j = $2", "SELECT a FROM t WHERE k = @p1 AND j = @p2"},
		{"SELECT a, b FROM t JOIN u ON u.k = t.k LIMIT 1 /* tag */", "SELECT TOP (1) a, b FROM t JOIN u ON u.k = t.k /* tag */"},
		{"SELECT a FROM t ORDER BY a LIMIT 20", "SELECT TOP (20) a FROM t ORDER BY a"},
		{"CREATE TABLE IF NOT EXISTS obsbench_inserts (v bigint NOT NULL)", "IF OBJECT_ID(N'obsbench_inserts', N'U') IS NULL CREATE TABLE obsbench_inserts (v bigint NOT NULL)"},
		{"BEGIN", "BEGIN TRANSACTION"},
		{" commit ", "COMMIT TRANSACTION"},
		{"INSERT INTO t (v) VALUES ($10)", "INSERT INTO t (v) VALUES (@p10)"},
		{"/* obsbench-pgbench */ BEGIN", "/* obsbench-pgbench */ BEGIN TRANSACTION"},
		{"/* obsbench-pgbench */ END", "/* obsbench-pgbench */ COMMIT TRANSACTION"},
		{"/* obsbench-pgbench */ SELECT abalance FROM pgbench_accounts WHERE aid = $1 LIMIT 1", "/* obsbench-pgbench */ SELECT TOP (1) abalance FROM pgbench_accounts WHERE aid = @p1"},
		{"/* a */ /* b */ CREATE TABLE IF NOT EXISTS h (a int)", "/* a */ /* b */ IF OBJECT_ID(N'h', N'U') IS NULL CREATE TABLE h (a int)"},
	}
	for _, tt := range tests {
		if got := Translate(tt.in); got != tt.want {
			t.Errorf("Translate(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// The T-SQL of every workload that runs on sqlserver, as its sessions
// would send it, is checked in under testdata/golden/workloads.sql.golden:
// go test ./internal/engine/sqlserver -run TestWorkloadsGolden -update.
func TestWorkloadsGolden(t *testing.T) {
	var b strings.Builder
	names := workload.Names()
	sort.Strings(names)
	n := 0
	for _, name := range names {
		m, err := workload.Lookup(name)
		if err != nil || !m.In(workload.TransactSQL) || m.New == nil {
			continue
		}
		n++
		stmts, err := WorkloadStatements(context.Background(), m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b.WriteString("-- " + name + "\n")
		for _, st := range m.SetupIn(workload.TransactSQL) {
			b.WriteString("-- set-up\n" + Translate(st) + ";\n")
		}
		for _, st := range stmts {
			b.WriteString(st + ";\n")
		}
		b.WriteString("\n")
	}
	if n < 4 {
		t.Fatalf("%d workloads run on sqlserver; want credit-top1, inserts-* and thousand-*", n)
	}
	checkGolden(t, filepath.Join("testdata", "golden", "workloads.sql.golden"), b.String())
}
