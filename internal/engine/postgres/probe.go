package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/poll"
)

// activeWaitsSQL lists the client sessions that are running a statement
// now, with what they wait for. A session with no wait event is on CPU as
// far as PostgreSQL knows; a write to the logging collector's pipe is not
// instrumented and shows the same way.
const activeWaitsSQL = `SELECT pid, coalesce(wait_event_type || ':' || wait_event, '')
FROM pg_stat_activity
WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()`

// batchWaitsFunc samples as activeWaitsSQL does n times, the i-th due
// (i+1) periods (seconds) after it starts, inside the server: the client
// sends one request per batch (collect.BatchWaitSource). Each sample's
// rows carry when it was taken; a sample with no active session is one
// row with a NULL pid. pg_stat_clear_snapshot() makes each sample read the
// sessions anew; a transaction otherwise keeps its first view of them.
//
// With kernel, a session that reports no wait has its /proc/PID/wchan read
// after every session's wait was (read row by row, the later sessions'
// waits would be read when more of their statements have ended), and with
// sys /proc/PID/syscall when the wait channel is empty. pg_read_file needs
// a superuser, which obsbench is. A process that ends during the read
// fails the batch, which the sampler then drops: an exception block per
// sample to save it costs a subtransaction per sample, which raised the
// sampler's cost (bench/collectors/README.md).
//
// It is a temporary function, dropped with the sampler's session.
const batchWaitsFunc = `CREATE FUNCTION pg_temp.obsbench_waits(n int, period float8, kernel bool, sys bool)
RETURNS TABLE(k int, at float8, pid int, wait text, wchan text, syscall text) LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz := clock_timestamp();
  taken float8;
  pids int[];
  waits text[];
BEGIN
  FOR i IN 0..n-1 LOOP
    PERFORM pg_sleep(greatest(0, (i + 1) * period - extract(epoch FROM clock_timestamp() - t0)));
    taken := extract(epoch FROM clock_timestamp() - t0);
    PERFORM pg_stat_clear_snapshot();
    SELECT array_agg(a.pid), array_agg(coalesce(a.wait_event_type || ':' || a.wait_event, ''))
      INTO pids, waits
      FROM pg_stat_activity a
      WHERE a.backend_type = 'client backend' AND a.state = 'active' AND a.pid <> pg_backend_pid();
    IF pids IS NULL THEN
      RETURN QUERY SELECT i, taken, NULL::int, NULL::text, NULL::text, NULL::text;
      CONTINUE;
    END IF;
    RETURN QUERY SELECT i, taken, u.p, u.w, f.wchan,
        CASE WHEN sys AND btrim(f.wchan) IN ('0', '') THEN pg_read_file('/proc/' || u.p || '/syscall', 0, 256, true) END
      FROM unnest(pids, waits) AS u(p, w)
      CROSS JOIN LATERAL (SELECT CASE WHEN kernel AND u.w = ''
        THEN pg_read_file('/proc/' || u.p || '/wchan', 0, 128, true) END AS wchan) f;
  END LOOP;
END $$`

// WaitSource samples pg_stat_activity over a connection of its own.
type WaitSource struct {
	conn     *pgx.Conn
	buf      []collect.SessionWait
	batch    batchState
	syscalls bool // batches may read /proc/PID/syscall (syscallReadable)
}

// batchState says whether the source's session has batchWaitsFunc.
type batchState int

const (
	batchUnknown batchState = iota
	batchReady
	batchRefused
)

// OpenWaits opens a WaitSource; Close it when done.
func (s *Server) OpenWaits(ctx context.Context) (engine.WaitSource, error) {
	conn, err := s.connectAs(ctx, "obsbench-waits")
	if err != nil {
		return nil, err
	}
	return &WaitSource{conn: conn}, nil
}

// ActiveWaits implements collect.WaitSource. The returned slice is reused
// by the next call.
func (w *WaitSource) ActiveWaits(ctx context.Context) ([]collect.SessionWait, error) {
	rows, err := w.conn.Query(ctx, activeWaitsSQL)
	if err != nil {
		return nil, fmt.Errorf("sample pg_stat_activity: %w", err)
	}
	w.buf = w.buf[:0]
	var pid int32
	var wait string
	_, err = pgx.ForEachRow(rows, []any{&pid, &wait}, func() error {
		w.buf = append(w.buf, collect.SessionWait{PID: int(pid), Wait: wait})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sample pg_stat_activity: %w", err)
	}
	return w.buf, nil
}

// BatchWaits implements collect.BatchWaitSource: n samples in one call,
// the server sleeping between them.
func (w *WaitSource) BatchWaits(ctx context.Context, n int, interval time.Duration, kernel bool) ([]collect.BatchSample, error) {
	switch w.batch {
	case batchRefused:
		return nil, collect.ErrNoBatches
	case batchUnknown:
		if _, err := w.conn.Exec(ctx, batchWaitsFunc); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			// No temporary objects allowed here, or no PL/pgSQL: one
			// sample per query instead.
			w.batch = batchRefused
			return nil, fmt.Errorf("%w: %v", collect.ErrNoBatches, err)
		}
		w.batch = batchReady
		w.syscalls = syscallReadable() // once: the machine's rule holds for the session
	}
	rows, err := w.conn.Query(ctx, "SELECT k, at, pid, wait, wchan, syscall FROM pg_temp.obsbench_waits($1, $2, $3, $4)",
		n, interval.Seconds(), kernel, kernel && w.syscalls)
	if err != nil {
		return nil, fmt.Errorf("sample pg_stat_activity: %w", err)
	}
	out := make([]collect.BatchSample, n)
	var k int32
	var at float64
	var pid *int32
	var wait, wchan, sys *string
	_, err = pgx.ForEachRow(rows, []any{&k, &at, &pid, &wait, &wchan, &sys}, func() error {
		if k < 0 || int(k) >= n {
			return fmt.Errorf("sample %d of a batch of %d", k, n)
		}
		out[k].After = time.Duration(at * float64(time.Second))
		if pid == nil {
			return nil // no session was active
		}
		out[k].Waits = append(out[k].Waits, collect.SessionWait{PID: int(*pid), Wait: deref(wait),
			Kernel: collect.KernelWaitOf(deref(wchan), deref(sys))})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sample pg_stat_activity: %w", err)
	}
	return out, nil
}

// syscallReadable says whether one server process may read another's
// /proc/PID/syscall, which needs the right to ptrace it: Yama's
// ptrace_scope 1 or more (Ubuntu's default) allows that only to an
// ancestor, and the read would fail.
func syscallReadable() bool {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	return err != nil || strings.TrimSpace(string(b)) == "0"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// BackendPID is the server process that answers the sampler's queries:
// its CPU time is the sampler's cost on the server.
func (w *WaitSource) BackendPID() int { return int(w.conn.PgConn().PID()) }

// Close closes the source's connection.
func (w *WaitSource) Close(ctx context.Context) error { return w.conn.Close(ctx) }

// counterQueries read PostgreSQL's cumulative counters. Every query returns
// one row of (name, value) pairs by column name; a query that fails (a view
// this version lacks, an extension not loaded) is skipped.
var counterQueries = []struct {
	name, sql string
	optional  bool
}{
	{"database", `SELECT xact_commit, xact_rollback, blks_read, blks_hit, temp_files, temp_bytes, tup_inserted, tup_updated, tup_deleted
		FROM pg_stat_database WHERE datname = current_database()`, false},
	{"wal", `SELECT wal_records, wal_fpi, wal_bytes::float8, wal_buffers_full, wal_write, wal_sync FROM pg_stat_wal`, true},
	{"bgwriter", `SELECT checkpoints_timed + checkpoints_req AS checkpoints, buffers_checkpoint, buffers_clean, buffers_backend, buffers_alloc FROM pg_stat_bgwriter`, true},
	{"statements", `SELECT sum(calls)::float8 AS statements FROM pg_stat_statements`, true},
	// Gauges (engine.GaugePrefix): how far the standbys are behind,
	// as the primary last measured it; no row without a standby, and no
	// value (NULL, left out) for a lag not measured lately. A logical
	// slot's reader is a walsender too, and no standby.
	{"replication", `SELECT (extract(epoch FROM max(write_lag)) * 1000)::float8 AS gauge_replica_write_lag_ms,
		(extract(epoch FROM max(flush_lag)) * 1000)::float8 AS gauge_replica_flush_lag_ms,
		(extract(epoch FROM max(replay_lag)) * 1000)::float8 AS gauge_replica_replay_lag_ms
		FROM pg_stat_replication WHERE pid NOT IN (SELECT active_pid FROM pg_replication_slots WHERE slot_type = 'logical' AND active_pid IS NOT NULL)
		HAVING count(*) > 0`, true},
	{"log", `SELECT coalesce(sum(size), 0)::float8 AS log_bytes FROM pg_ls_logdir()`, true},
	// Gauges of logical slots, no row without one: the WAL the server
	// keeps for their readers, from the oldest restart point (which moves
	// only at a running-transactions record, every 15 s or checkpoint),
	// and how far the furthest reader is behind, by what it confirmed.
	{"slots", `SELECT max(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn))::float8 AS gauge_slot_wal_retained_bytes,
		max(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn))::float8 AS gauge_slot_reader_behind_bytes
		FROM pg_replication_slots WHERE slot_type = 'logical' HAVING count(*) > 0`, true},
}

// Counters returns the server's cumulative activity counters by name
// (transactions, WAL, checkpoints and buffers, temp bytes, statements when
// pg_stat_statements is loaded, bytes in the log directory). Rates are
// differences of two calls. Backends publish their statistics at most once
// a second, so a difference over a short window may lag by up to a second.
func (s *Server) Counters(ctx context.Context) (map[string]float64, error) {
	conn, err := s.connectAs(ctx, "obsbench-counters")
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	// One transaction, optional queries under savepoints: a failed query
	// then counts as no rollback in the very counters being read.
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	out := map[string]float64{}
	for _, q := range counterQueries {
		if q.optional {
			if _, err := tx.Exec(ctx, "SAVEPOINT counter"); err != nil {
				return nil, err
			}
		}
		rows, err := tx.Query(ctx, q.sql)
		if err == nil {
			err = scanNamed(rows, out)
		}
		switch {
		case err != nil && !q.optional:
			return nil, fmt.Errorf("read %s counters: %w", q.name, err)
		case err != nil:
			if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT counter"); err != nil {
				return nil, err
			}
		}
	}
	return out, tx.Commit(ctx)
}

// WaitProfile returns pg_wait_sampling's cumulative profile (wait to sample
// count, over all processes) when that extension is loaded, else nil.
func (s *Server) WaitProfile(ctx context.Context) (map[string]int64, error) {
	conn, err := s.connectAs(ctx, "obsbench-counters")
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	// Checked first: a failed query would count as a rollback in the
	// counters read over the same window.
	var installed bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass('pg_wait_sampling_profile') IS NOT NULL").Scan(&installed); err != nil {
		return nil, fmt.Errorf("look for pg_wait_sampling: %w", err)
	}
	if !installed {
		return nil, nil
	}
	return readProfile(ctx, conn)
}

// collectorStartWait bounds how long readProfile waits for
// pg_wait_sampling's collector, a background worker the postmaster starts
// after the server accepts connections: a read just after a restart (an
// observer applied) can come before it.
const collectorStartWait = 30 * time.Second

// readProfile reads the profile, waiting for the collector to start. It
// waits by looking for the collector among the server's processes, so
// that no failed read counts as a rollback in the counters read beside
// it; a read that still comes before the collector is ready is tried
// again.
func readProfile(ctx context.Context, conn *pgx.Conn) (map[string]int64, error) {
	deadline := time.Now().Add(collectorStartWait)
	for {
		var running bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE backend_type = 'pg_wait_sampling collector')`).Scan(&running); err != nil {
			return nil, fmt.Errorf("look for pg_wait_sampling's collector: %w", err)
		}
		if running || time.Now().After(deadline) {
			break
		}
		if err := poll.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
	for {
		out := map[string]int64{}
		var k string
		var n int64
		rows, err := conn.Query(ctx, `SELECT coalesce(event_type || ':' || event, 'CPU'), sum(count)::int8
			FROM pg_wait_sampling_profile GROUP BY 1`)
		if err == nil {
			_, err = pgx.ForEachRow(rows, []any{&k, &n}, func() error { out[k] = n; return nil })
		}
		if err == nil {
			return out, nil
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || !strings.Contains(pgErr.Message, "collector wasn't started") || time.Now().After(deadline) {
			return nil, fmt.Errorf("read pg_wait_sampling_profile: %w", err)
		}
		if err := poll.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

func scanNamed(rows pgx.Rows, out map[string]float64) error {
	defer rows.Close()
	if !rows.Next() {
		return rows.Err()
	}
	vals, err := rows.Values()
	if err != nil {
		return err
	}
	for i, fd := range rows.FieldDescriptions() {
		switch v := vals[i].(type) {
		case int64:
			out[fd.Name] = float64(v)
		case int32:
			out[fd.Name] = float64(v)
		case float64:
			out[fd.Name] = v
		}
	}
	rows.Close()
	return rows.Err()
}
