package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/poll"
	"github.com/obsbench/obsbench/internal/server"
)

// A server restarted under the counter counts each backend's
// instructions when it exits; the same statements cost the same count,
// whatever else the machine does: two pairs of sessions that differ by
// 1000 statements differ by the same count, to 0.1% (about 0.01% on an
// idle machine, 0.05% with both cores busy). A restart keeps the counter; CountInstructions(false) and a
// restart end it.
func TestCountInstructions(t *testing.T) {
	ctx := servertest.Within(t, 4*time.Minute)
	pg := servertest.Postgres(t)
	if err := pg.CountInstructions(true); err != nil {
		t.Fatal(err)
	}
	pg.ShiftStack(100)
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	settings(ctx, t, pg, "off", "0")
	pm, err := pg.PID()
	if err != nil {
		t.Fatal(err)
	}
	servertest.StackShifted(t, pm, 100)
	session := func(n int) (int, uint64) {
		t.Helper()
		conn, pid := connectPID(ctx, t, pg)
		for i := range n {
			if _, err := conn.Exec(ctx, "SELECT count(*) FROM pg_class WHERE relpages >= $1", i%3); err != nil {
				t.Fatal(err)
			}
		}
		conn.Close(ctx)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			counts, err := pg.Counts()
			if err != nil {
				t.Fatal(err)
			}
			if c, ok := counts[pid]; ok {
				return pid, c
			}
		}
		t.Fatalf("no count for backend %d a minute after it ended", pid)
		return 0, 0
	}
	session(50) // catalog caches and plans warmed in shared memory
	// Two pairs of sessions, 100 and 1100 statements: what the 1000 more
	// cost is what the method measures, and it must repeat. (A backend
	// flushes its statistics at most once a second: how many flushes a
	// session makes depends on how long it runs, a little noise per
	// session that 1000 statements dilute.)
	var per [2]float64
	for i := range per {
		_, short := session(100)
		_, long := session(1100)
		per[i] = float64(long-short) / 1000
	}
	t.Logf("instructions per statement: %.1f, then %.1f", per[0], per[1])
	if per[0] <= 0 || math.Abs(per[0]-per[1])/per[0] > 0.001 {
		t.Errorf("1000 more statements cost %.1f, then %.1f instructions each: want the same to 0.1%%", per[0], per[1])
	}
	// The helpers count when the server stops or restarts. They are
	// listed after the counts are cleared, twice a second apart: a
	// process that ended before (the last session's backend, an
	// autovacuum worker) wrote its count already, and the clearing
	// removed it; one that was ending as the counts were cleared is
	// still listed once but not a second later.
	if err := pg.ClearCounts(); err != nil {
		t.Fatal(err)
	}
	first, err := pg.Children()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	again, err := pg.Children()
	kids := slices.DeleteFunc(first, func(k int) bool { return !slices.Contains(again, k) })
	if err != nil || len(kids) < 3 {
		t.Errorf("children of the postmaster %v, %v; want its helpers", kids, err)
	}
	if err := pg.CountInstructions(false); err != nil {
		t.Fatal(err)
	}
	pm, err = pg.PID()
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	counts, err := pg.Counts()
	if err != nil {
		t.Fatal(err)
	}
	// The postmaster removes its pid file before valgrind writes its
	// count: the restart is over only when the count is there, or it
	// would land after the next ClearCounts, in the next lifetime's.
	if _, ok := counts[pm]; !ok {
		t.Errorf("the counted postmaster %d has no count when the restart returns (counts of %v)", pm, keys(counts))
	}
	for _, k := range kids {
		if _, ok := counts[k]; !ok {
			t.Errorf("helper %d has no count after the restart (counts of %v)", k, keys(counts))
		}
	}
	// The counter's settings end with it (a restart would pass them on).
	settings(ctx, t, pg, "on", "2")
	if err := pg.ClearCounts(); err != nil {
		t.Fatal(err)
	}
	pid, _ := sessionPID(ctx, t, pg)
	time.Sleep(500 * time.Millisecond)
	if counts, _ := pg.Counts(); len(counts) != 0 {
		t.Errorf("backend %d counted after the counter was switched off: %v", pid, counts)
	}
}

// settings checks the two settings a counted server runs with: no
// autovacuum and no parallel query (PostgreSQL's defaults: on and 2).
func settings(ctx context.Context, t *testing.T, pg *postgres.Instance, autovacuum, parallel string) {
	t.Helper()
	conn := servertest.Connect(ctx, t, pg.DSN("postgres"))
	defer conn.Close(ctx)
	var av, par string
	if err := conn.QueryRow(ctx, "SELECT current_setting('autovacuum'), current_setting('max_parallel_workers_per_gather')").Scan(&av, &par); err != nil {
		t.Fatal(err)
	}
	if av != autovacuum || par != parallel {
		t.Errorf("autovacuum = %s, max_parallel_workers_per_gather = %s; want %s and %s", av, par, autovacuum, parallel)
	}
}

func sessionPID(ctx context.Context, t *testing.T, pg *postgres.Instance) (int, error) {
	conn, pid := connectPID(ctx, t, pg)
	return pid, conn.Close(ctx)
}

// connectPID opens a session and reads its backend's process id.
func connectPID(ctx context.Context, t *testing.T, pg *postgres.Instance) (*pgx.Conn, int) {
	t.Helper()
	conn := servertest.Connect(ctx, t, pg.DSN("postgres"))
	var pid int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return conn, pid
}

func keys(m map[int]uint64) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Without valgrind, counting is refused with what to install.
func TestCountInstructionsNeedsValgrind(t *testing.T) {
	pg := servertest.Postgres(t)
	t.Setenv("PATH", "/nonexistent")
	err := pg.CountInstructions(true)
	if !errors.Is(err, server.ErrNoValgrind) {
		t.Errorf("CountInstructions without valgrind: %v; want ErrNoValgrind", err)
	}
}

// A server that counts its statements apart writes each backend's count
// in parts, one per statement from its start to the next's: the parts
// add up to the backend's count, there is one more part than statements
// (the first, up to the first statement), and the statement that does
// more work counts more, the same each time it runs after its first.
func TestCountStatementsApart(t *testing.T) {
	ctx := servertest.Within(t, 4*time.Minute)
	pg := servertest.Postgres(t)
	pg.SplitStatements(true)
	if err := pg.CountInstructions(true); err != nil {
		t.Fatal(err)
	}
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	conn, pid := connectPID(ctx, t, pg)
	// Prepared, as obsbench's sessions run their statements: a statement
	// is then Bind, Execute and Sync, and its part begins at its Bind.
	if _, err := conn.Prepare(ctx, "light", "SELECT $1::int"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prepare(ctx, "heavy", "SELECT count(*) FROM generate_series(1, $1::int)"); err != nil {
		t.Fatal(err)
	}
	order := []string{"light", "heavy", "light", "heavy", "light", "heavy", "light"}
	for _, name := range order {
		if _, err := conn.Exec(ctx, name, 10000); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	var parts []uint64
	var total uint64
	if err := poll.Until(ctx, time.Minute, 50*time.Millisecond, func() (bool, error) {
		counts, err := pg.Counts()
		total = counts[pid]
		parts = pg.StatementCounts(pid)
		return err == nil && total > 0, err
	}, func() error { return fmt.Errorf("no count for backend %d a minute after it ended", pid) }); err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, p := range parts {
		sum += p
	}
	t.Logf("backend %d: %d instructions in parts %v", pid, total, parts)
	// The first part, the backend's start; then pg_backend_pid(); then
	// the statements in order; the last part holds the last statement and
	// the backend's exit.
	if sum != total || len(parts) != 2+len(order) {
		t.Fatalf("%d parts adding up to %d of %d; want %d adding up to the backend's count", len(parts), sum, total, 2+len(order))
	}
	// A statement's first execution also looks up its plan's catalog
	// entries: from the second on, the same statement counts the same,
	// to 1% and the few thousand instructions of the statistics flush an
	// idle backend makes at most once a second (pgstat_report_stat),
	// which a slow machine's timing puts in one statement or another.
	of := parts[2 : len(parts)-1]
	for i := 4; i < len(of); i++ {
		if d := math.Abs(float64(of[i]) - float64(of[i-2])); d > 0.01*float64(of[i])+statsFlush {
			t.Errorf("statement %d (%s) counted %d, %d before: want the same to 1%% and %d", i+1, order[i], of[i], of[i-2], statsFlush)
		}
	}
	if of[1] < 10*of[0] {
		t.Errorf("the heavy statement counted %d, the light one %d: want it far more", of[1], of[0])
	}
	if err := pg.CountInstructions(false); err != nil {
		t.Fatal(err)
	}
	pg.SplitStatements(false)
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
}

// statsFlush bounds the instructions of an idle backend's statistics
// flush, which may fall in any statement's count: about 5,000, and more
// where it meets a lock another process holds and spins for it.
const statsFlush = 10000
