package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/engine"
)

// activeWaitsSQL lists the client sessions running a statement now, with
// their OS thread (TID) and state. MariaDB has no wait column without
// performance_schema; a state that says the session waits is the nearest,
// and the sampler reads the thread's kernel wait for the rest.
const activeWaitsSQL = `SELECT TID, COALESCE(STATE, '') FROM information_schema.PROCESSLIST
WHERE COMMAND IN ('Query', 'Execute') AND ID <> CONNECTION_ID()`

// WaitSource samples information_schema.PROCESSLIST over a connection of
// its own; it never turns performance_schema on.
type WaitSource struct {
	conn *sql.Conn
	done func() error // closes conn and its pool
	tid  int
	buf  []collect.SessionWait
}

// OpenWaits opens a WaitSource; Close it when done.
func (s *Server) OpenWaits(ctx context.Context) (engine.WaitSource, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	w := &WaitSource{conn: conn, done: done}
	if err := conn.QueryRowContext(ctx, "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()").Scan(&w.tid); err != nil {
		w.Close(ctx)
		return nil, fmt.Errorf("find the sampler's thread: %w", err)
	}
	return w, nil
}

// ActiveWaits implements collect.WaitSource. The returned slice is reused
// by the next call.
func (w *WaitSource) ActiveWaits(ctx context.Context) ([]collect.SessionWait, error) {
	rows, err := w.conn.QueryContext(ctx, activeWaitsSQL)
	if err != nil {
		return nil, fmt.Errorf("sample processlist: %w", err)
	}
	defer rows.Close()
	w.buf = w.buf[:0]
	for rows.Next() {
		var tid int
		var state string
		if err := rows.Scan(&tid, &state); err != nil {
			return nil, err
		}
		w.buf = append(w.buf, collect.SessionWait{PID: tid, Wait: waitOfState(state)})
	}
	return w.buf, rows.Err()
}

// waitOfState is the wait a thread state names ("Waiting for table
// metadata lock"), or "" for a state that is work, which the sampler
// counts as CPU unless the kernel has the thread blocked.
func waitOfState(state string) string {
	if strings.HasPrefix(state, "Waiting") || strings.HasSuffix(state, "lock") || state == "User sleep" {
		return "State:" + state
	}
	return ""
}

// IdleKernelWait implements collect.IdleKernelWaiter: a thread between two
// statements of its session polls or reads its client's socket.
func (w *WaitSource) IdleKernelWait(kernel string) bool {
	for _, p := range []string{"poll_schedule_timeout", "do_sys_poll", "syscall:poll", "syscall:ppoll", "syscall:recvfrom", "sk_wait_data", "unix_stream_read_generic"} {
		if strings.HasPrefix(kernel, p) {
			return true
		}
	}
	return false
}

// BackendPID is the OS thread that answers the sampler's queries: its CPU
// time is the sampler's cost on the server.
func (w *WaitSource) BackendPID() int { return w.tid }

// Close closes the source's connection.
func (w *WaitSource) Close(context.Context) error {
	return w.done()
}

// statusCounters are the SHOW GLOBAL STATUS counters read as rates: client
// statements, by kind, transactions, redo log flushes and bytes, row
// operations, temporary tables, and the lost-event counters of the
// engine's observers.
var statusCounters = []string{
	"Questions", "Queries", "Com_select", "Com_insert", "Com_update", "Com_delete", "Com_commit", "Com_rollback",
	"Com_stmt_prepare", "Com_stmt_execute", "Innodb_os_log_fsyncs", "Innodb_os_log_written", "Innodb_data_fsyncs",
	"Created_tmp_tables", "Created_tmp_disk_tables", "Bytes_sent", "Bytes_received", "Server_audit_writes_failed",
	"Binlog_commits", "Binlog_bytes_written", "Rpl_semi_sync_master_yes_tx", "Rpl_semi_sync_master_no_tx",
}

// logFileSettings name the files MariaDB's logs and server_audit write.
var logFileSettings = []string{"general_log_file", "slow_query_log_file", "server_audit_file_path"}

// Counters returns the server's cumulative activity counters by name:
// those of statusCounters, every Handler_* counter, the sum of the
// Performance_schema_*_lost counters, and log_bytes, the size of the
// general log, slow log and audit files (rotated ones included) when they
// are on this machine.
func (s *Server) Counters(ctx context.Context) (map[string]float64, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := statusCounts(ctx, conn)
	if err != nil {
		return nil, err
	}
	if n, ok := logBytes(ctx, conn); ok {
		out["log_bytes"] = n
	}
	return out, nil
}

// logBytes sums the sizes of the log files named by logFileSettings; ok is
// false when the data directory is not on this machine.
func logBytes(ctx context.Context, conn *sql.Conn) (float64, bool) {
	var data string
	if err := conn.QueryRowContext(ctx, "SELECT @@datadir").Scan(&data); err != nil {
		return 0, false
	}
	if _, err := os.Stat(data); err != nil {
		return 0, false
	}
	var total float64
	for _, name := range logFileSettings {
		var path string
		if err := conn.QueryRowContext(ctx, "SELECT @@GLOBAL."+name).Scan(&path); err != nil {
			continue // server_audit not installed
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(data, path)
		}
		for _, f := range rotatedFiles(path) {
			total += float64(f.size)
		}
	}
	return total, true
}

func statusCounts(ctx context.Context, conn *sql.Conn) (map[string]float64, error) {
	rows, err := conn.QueryContext(ctx, "SHOW GLOBAL STATUS")
	if err != nil {
		return nil, fmt.Errorf("read global status: %w", err)
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, n := range statusCounters {
		want[n] = true
	}
	out := map[string]float64{}
	for rows.Next() {
		var name string
		var value sql.NullFloat64
		if err := rows.Scan(&name, &value); err != nil || !value.Valid {
			continue // a non-numeric status value
		}
		switch {
		case want[name], strings.HasPrefix(name, "Handler_"):
			out[strings.ToLower(name)] = value.Float64
		case strings.HasPrefix(name, "Performance_schema_") && strings.HasSuffix(name, "_lost"):
			out["performance_schema_lost"] += value.Float64
		case name == "Rpl_semi_sync_master_tx_avg_wait_time" && value.Float64 > 0:
			// A gauge: the mean wait for the replica's acknowledgement
			// since the server started, which a managed server does
			// before every run.
			out["gauge_semi_sync_wait_ms"] = value.Float64 / 1000 // a gauge (engine.GaugePrefix)
		}
	}
	return out, rows.Err()
}

// WaitProfile returns performance_schema's cumulative wait times (event
// name to microseconds; idle, the wait for the client, left out) when
// performance_schema is on, else nil: the
// profile is never collected by turning it on, which would make the
// collector an observer.
func (s *Server) WaitProfile(ctx context.Context) (map[string]int64, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	var on bool
	if err := conn.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
		return nil, fmt.Errorf("read performance_schema: %w", err)
	}
	if !on {
		return nil, nil
	}
	rows, err := conn.QueryContext(ctx, `SELECT EVENT_NAME, SUM_TIMER_WAIT DIV 1000000
		FROM performance_schema.events_waits_summary_global_by_event_name WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'`)
	if err != nil {
		return nil, fmt.Errorf("read wait summary: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var us int64
		if err := rows.Scan(&name, &us); err != nil {
			return nil, err
		}
		out[name] = us
	}
	return out, rows.Err()
}
