package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/engine"
)

// ActiveWaitsSQL lists the workload's requests running now with their
// wait: NULL (running, or runnable waiting for a scheduler) counts as CPU.
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-requests-transact-sql
const ActiveWaitsSQL = `SELECT COALESCE(r.wait_type, N'') FROM sys.dm_exec_requests r
JOIN sys.dm_exec_sessions s ON s.session_id = r.session_id
WHERE s.program_name = N'` + driverApp + `' AND r.session_id <> @@SPID`

// WaitSource samples sys.dm_exec_requests over a connection of its own.
type WaitSource struct {
	conn *sql.Conn
	done func() error // closes conn and its pool
	buf  []collect.SessionWait
}

// OpenWaits opens a WaitSource; Close it when done.
func (s *Server) OpenWaits(ctx context.Context) (engine.WaitSource, error) {
	conn, done, err := engine.SQLConn(ctx, s.open(""), "sqlserver")
	if err != nil {
		return nil, err
	}
	return &WaitSource{conn: conn, done: done}, nil
}

// ActiveWaits implements collect.WaitSource. The returned slice is reused
// by the next call.
func (w *WaitSource) ActiveWaits(ctx context.Context) ([]collect.SessionWait, error) {
	rows, err := w.conn.QueryContext(ctx, ActiveWaitsSQL)
	if err != nil {
		return nil, fmt.Errorf("sample sys.dm_exec_requests: %w", err)
	}
	defer rows.Close()
	w.buf = w.buf[:0]
	for rows.Next() {
		var wait string
		if err := rows.Scan(&wait); err != nil {
			return nil, err
		}
		w.buf = append(w.buf, collect.SessionWait{Wait: wait})
	}
	return w.buf, rows.Err()
}

// BackendPID is 0: the server's threads are not this machine's.
func (w *WaitSource) BackendPID() int { return 0 }

// Close closes the source's connection.
func (w *WaitSource) Close(context.Context) error {
	return w.done()
}

// Counters reads the performance counters (cumulative ones under their
// names, levels as gauges; the runner turns them into rates) and, as a
// gauge, SQL Server's own CPU from the scheduler monitor's last minute:
// the server is not a process of this machine whose CPU obsbench could
// read.
func (s *Server) Counters(ctx context.Context) (map[string]float64, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	rows, err := queryStrings(ctx, conn, PerfCountersSQL(s.database))
	if err != nil {
		return nil, fmt.Errorf("read sys.dm_os_performance_counters: %w", err)
	}
	cs, err := ParsePerfCounters(rows)
	if err != nil {
		return nil, err
	}
	out := CounterMap(cs, s.database)
	cpu, err := s.schedulerCPU(ctx, conn)
	if err != nil {
		return nil, err
	}
	if cpu >= 0 {
		out["gauge_server_cpu_pct"] = cpu
	}
	return out, nil
}

// schedulerCPU is SQL Server's process CPU % over the last minute's
// scheduler-monitor records; -1 when there are none.
func (s *Server) schedulerCPU(ctx context.Context, conn *sql.Conn) (float64, error) {
	rows, err := queryStrings(ctx, conn, SchedulerCPUSQL)
	if err != nil {
		return 0, fmt.Errorf("read the scheduler monitor: %w", err)
	}
	samples, err := ParseSchedulerRows(rows)
	if err != nil {
		return 0, err
	}
	pct, _, ok := ServerCPU(samples, time.Minute)
	if !ok {
		return -1, nil
	}
	return pct, nil
}

// WaitProfile returns sys.dm_os_wait_stats as cumulative microseconds by
// wait type; the runner diffs the start and end of each window. The
// server's statistics are never cleared.
func (s *Server) WaitProfile(ctx context.Context) (map[string]int64, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	rows, err := queryStrings(ctx, conn, WaitStatsSQL)
	if err != nil {
		return nil, fmt.Errorf("read sys.dm_os_wait_stats: %w", err)
	}
	stats, err := ParseWaitStats(rows)
	if err != nil {
		return nil, err
	}
	return WaitProfile(stats), nil
}

// PlanReads are the queries the collectors run in every measured window
// (--dry-run prints them).
func (s *Server) PlanReads() []string {
	return []string{PerfCountersSQL(s.database), SchedulerCPUSQL, WaitStatsSQL, ActiveWaitsSQL}
}

// queryStrings runs q and returns its rows as text: the parsers take
// rows as recorded, so that tests can feed them recorded rows.
func queryStrings(ctx context.Context, conn *sql.Conn, q string) ([][]string, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	return out, rows.Err()
}
