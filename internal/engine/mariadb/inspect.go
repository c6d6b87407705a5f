package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/observer"
)

// Inspection is what observes a MariaDB server right now.
type Inspection struct {
	Version string
	// Settings are the observing variables that differ from their
	// defaults, with where the value came from (GLOBAL_VALUE_ORIGIN).
	Settings []Setting
	// Plugins are the audit, response-time and semi-sync plugins installed
	// (userstat's statistics tables are built in; the variable userstat
	// switches them).
	Plugins []string
	// Consumers are performance_schema's enabled consumers, Instruments
	// how many of its instruments are enabled; empty when it is off.
	Consumers   []string
	Instruments int
	// Replication lists semi-synchronous replication and connected
	// replicas.
	Replication []string
	// Lost are the lost-event counters that are not zero.
	Lost []string
	// Observers are the catalog entries fully in force.
	Observers []string
}

// Setting is a variable with where its value came from.
type Setting struct {
	Name, Value, Source string
}

// observingVariables are the variables that make a server record or wait
// for something: logs, audit, performance_schema, statistics, semi-sync.
const observingVariables = `SELECT LOWER(VARIABLE_NAME), COALESCE(GLOBAL_VALUE, ''), GLOBAL_VALUE_ORIGIN
FROM information_schema.SYSTEM_VARIABLES
WHERE COALESCE(GLOBAL_VALUE, '') <> COALESCE(DEFAULT_VALUE, '')
  AND (VARIABLE_NAME IN ('GENERAL_LOG', 'GENERAL_LOG_FILE', 'LOG_OUTPUT', 'SLOW_QUERY_LOG', 'SLOW_QUERY_LOG_FILE', 'LONG_QUERY_TIME',
       'LOG_SLOW_VERBOSITY', 'LOG_SLOW_RATE_LIMIT', 'LOG_SLOW_FILTER', 'LOG_QUERIES_NOT_USING_INDEXES', 'PERFORMANCE_SCHEMA',
       'QUERY_RESPONSE_TIME_STATS', 'USERSTAT', 'SQL_ERROR_LOG_FILENAME', 'LOG_BIN', 'SYNC_BINLOG', 'INNODB_FLUSH_LOG_AT_TRX_COMMIT')
    OR VARIABLE_NAME LIKE 'SERVER\_AUDIT\_%' OR VARIABLE_NAME LIKE 'RPL\_SEMI\_SYNC\_%'
    OR VARIABLE_NAME LIKE 'PERFORMANCE\_SCHEMA\_%HISTORY%')
ORDER BY 1`

// Inspect lists the observers active on the server now, matching them with
// the catalog entries in candidates. Per-session settings of other
// sessions cannot be seen from here.
func (s *Server) Inspect(ctx context.Context, candidates []observer.Observer) (Inspection, error) {
	var in Inspection
	conn, done, err := s.control(ctx)
	if err != nil {
		return in, err
	}
	defer done()
	if err := conn.QueryRowContext(ctx, "SELECT VERSION()").Scan(&in.Version); err != nil {
		return in, fmt.Errorf("inspect: %w", err)
	}
	rows, err := conn.QueryContext(ctx, observingVariables)
	if err != nil {
		return in, fmt.Errorf("inspect variables: %w", err)
	}
	for rows.Next() {
		var st Setting
		if err := rows.Scan(&st.Name, &st.Value, &st.Source); err != nil {
			rows.Close()
			return in, err
		}
		in.Settings = append(in.Settings, st)
	}
	rows.Close()
	lists := []struct {
		dst *[]string
		sql string
	}{
		{&in.Plugins, `SELECT CONCAT(PLUGIN_NAME, ' (', PLUGIN_TYPE, ', ', COALESCE(LOAD_OPTION, ''), ')') FROM information_schema.PLUGINS
			WHERE PLUGIN_STATUS = 'ACTIVE' AND (PLUGIN_TYPE = 'AUDIT' OR PLUGIN_NAME LIKE 'QUERY\_RESPONSE%' OR PLUGIN_NAME LIKE 'rpl\_semi%') ORDER BY 1`},
		{&in.Replication, `SELECT CONCAT(VARIABLE_NAME, ' = ', VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS
			WHERE VARIABLE_NAME IN ('RPL_SEMI_SYNC_MASTER_STATUS', 'RPL_SEMI_SYNC_MASTER_CLIENTS', 'SLAVES_CONNECTED') AND VARIABLE_VALUE NOT IN ('0', 'OFF') ORDER BY 1`},
		{&in.Lost, `SELECT CONCAT(VARIABLE_NAME, ' = ', VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS
			WHERE (VARIABLE_NAME LIKE 'PERFORMANCE\_SCHEMA\_%LOST' OR VARIABLE_NAME = 'SERVER_AUDIT_WRITES_FAILED') AND VARIABLE_VALUE <> '0' ORDER BY 1`},
	}
	for _, l := range lists {
		if *l.dst, err = strings1(ctx, conn, l.sql); err != nil {
			return in, fmt.Errorf("inspect: %w", err)
		}
	}
	var ps bool
	if err := conn.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&ps); err != nil {
		return in, err
	}
	if ps {
		if in.Consumers, err = strings1(ctx, conn, "SELECT NAME FROM performance_schema.setup_consumers WHERE ENABLED = 'YES' ORDER BY 1"); err != nil {
			return in, err
		}
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM performance_schema.setup_instruments WHERE ENABLED = 'YES'").Scan(&in.Instruments); err != nil {
			return in, err
		}
	}
	in.Observers, err = activeObservers(ctx, conn, candidates)
	return in, err
}

// strings1 runs a query of one string column.
func strings1(ctx context.Context, conn *sql.Conn, query string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// activeObservers returns the candidates fully in force: every plugin
// installed, every variable at the observer's value, and at least one of
// them not the server's default. Observers with a sink, or switched on by
// statements (enable_sql), are not looked for.
func activeObservers(ctx context.Context, conn *sql.Conn, candidates []observer.Observer) ([]string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT LOWER(VARIABLE_NAME), COALESCE(GLOBAL_VALUE, ''), COALESCE(DEFAULT_VALUE, '') FROM information_schema.SYSTEM_VARIABLES")
	if err != nil {
		return nil, fmt.Errorf("inspect variables: %w", err)
	}
	values, defaults := map[string]string{}, map[string]string{}
	for rows.Next() {
		var n, v, d string
		if err := rows.Scan(&n, &v, &d); err != nil {
			rows.Close()
			return nil, err
		}
		values[n], defaults[n] = v, d
	}
	rows.Close()
	var out []string
	for _, o := range candidates {
		if o.Name == observer.Baseline || o.Sink != nil || len(o.EnableSQL) > 0 {
			continue
		}
		inForce, distinct := true, len(o.Extensions) > 0
		for _, p := range o.Extensions {
			ok, err := pluginInstalled(ctx, conn, p)
			if err != nil {
				return nil, err
			}
			inForce = inForce && ok
		}
		for n, want := range o.Settings {
			got, ok := values[n]
			inForce = inForce && ok && (sameValue(got, want) || strings.HasSuffix(got, "/"+want))
			distinct = distinct || !sameValue(got, defaults[n])
		}
		if inForce && distinct {
			out = append(out, o.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// ChangedSettings are the global variables set by an option file, the
// command line or SET GLOBAL rather than compiled-in or sized
// automatically: what a reader needs to reproduce a measurement.
func (s *Server) ChangedSettings(ctx context.Context) (map[string]string, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	rows, err := conn.QueryContext(ctx, `SELECT LOWER(VARIABLE_NAME), COALESCE(GLOBAL_VALUE, '') FROM information_schema.SYSTEM_VARIABLES
		WHERE GLOBAL_VALUE_ORIGIN IN ('CONFIG', 'COMMAND-LINE', 'SQL')`)
	if err != nil {
		return nil, fmt.Errorf("read changed variables: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		out[name] = value
	}
	return out, rows.Err()
}
