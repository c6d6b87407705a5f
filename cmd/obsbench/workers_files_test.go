package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/result"
)

// The user's own files on workers: a pgbench script and a capture, which
// the workers get from the coordinator with the spec (they read no file
// of their own). Session ids stay global: the script's :client_id takes
// every value from 0 to clients-1 across the two workers, and each
// captured session is replayed exactly once per run, by one worker.
func TestWorkersRunUserFiles(t *testing.T) {
	needServers(t)
	asWorkers(t)
	dsn, _ := externalServer(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE seen (who text)"); err != nil {
		t.Fatal(err)
	}
	seen := func() map[string]int {
		t.Helper()
		rows, err := conn.Query(ctx, "SELECT who, count(*) FROM seen GROUP BY who")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]int{}
		for rows.Next() {
			var who string
			var n int
			rows.Scan(&who, &n)
			m[who] = n
		}
		if _, err := conn.Exec(ctx, "TRUNCATE seen"); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tmp := privateTemp(t)
	run1 := func(name string, args ...string) []result.Run {
		t.Helper()
		out := filepath.Join(tmp, name)
		var stdout, stderr bytes.Buffer
		args = append([]string{"run", "--dsn", dsn, "--workers", "2", "--observers", "baseline", "--method", "rounds", "--rounds", "2", "--seed", "5", "--out", out}, args...)
		if code := run(ctx, args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%s: exit %d\n%s", name, code, stderr.String())
		}
		runs := readRuns(t, out)
		for _, r := range runs {
			if r.Error != "" || len(r.Driver.Workers) != 2 {
				t.Errorf("%s: run %d: error %q, %d workers; want none, 2", name, r.Seq, r.Error, len(r.Driver.Workers))
			}
		}
		return runs
	}

	script := filepath.Join(tmp, "client.sql")
	os.WriteFile(script, []byte("INSERT INTO seen VALUES ('client ' || :client_id);\n"), 0o644)
	run1("pgbench", "--workload", "pgbench", "--script", script, "--clients", "5", "--duration", "2s", "--warmup", "500ms")
	got := seen()
	t.Logf("pgbench script on 2 workers: %v", got)
	if len(got) != 5 {
		t.Errorf("pgbench script on 2 workers: :client_id took %d values (%v); want 0 to 4", len(got), got)
	}
	for i := range 5 {
		if got[fmt.Sprintf("client %d", i)] == 0 {
			t.Errorf("pgbench script on 2 workers: no statement with :client_id %d (%v)", i, got)
		}
	}

	const sessions, each = 4, 30
	capPath := filepath.Join(tmp, "four.obsc")
	f, err := os.Create(capPath)
	if err != nil {
		t.Fatal(err)
	}
	w := capture.NewWriter(f, capture.Header{Engine: "postgres", Source: "csvlog"})
	start := time.Now()
	for k := range each {
		for s := range sessions {
			w.Write(capture.Record{Session: fmt.Sprint(s), Kind: capture.Statement, SQL: fmt.Sprintf("INSERT INTO seen VALUES ('session %d')", s)},
				start.Add(time.Duration(k*sessions+s)*time.Millisecond))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	runs := run1("replay", "--workload", "replay", "--capture", capPath, "--replay-passes", "1")
	got = seen()
	for s := range sessions {
		if n := got[fmt.Sprintf("session %d", s)]; n != each*len(runs) {
			t.Errorf("captured session %d replayed %d statements in %d runs; want %d: once per run", s, n, len(runs), each*len(runs))
		}
	}
	if len(got) != sessions {
		t.Errorf("replayed sessions %v; want %d", got, sessions)
	}
	for _, r := range runs {
		if r.Driver.Workers[0].Sessions+r.Driver.Workers[1].Sessions != sessions || r.Driver.Executed != sessions*each {
			t.Errorf("replay run %d: workers %+v, %d statements; want %d sessions, %d statements", r.Seq, r.Driver.Workers, r.Driver.Executed, sessions, sessions*each)
		}
	}
	t.Logf("replayed on 2 workers, %d runs: %v", len(runs), got)
}
