package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/observer"
)

// Inspection is what observes a server right now.
type Inspection struct {
	Version string
	// Settings are the observing settings that differ from the defaults.
	Settings []Setting
	// Preload and SessionPreload are the libraries loaded into every
	// server process and every new session.
	Preload, SessionPreload []string
	// Extensions are those of the inspected database, plpgsql aside.
	Extensions []string
	// Processes are observing background processes: the logging
	// collector, WAL senders, pg_wait_sampling's collector.
	Processes []string
	// Slots are the replication slots; Standbys the connected standbys
	// with their sync state.
	Slots, Standbys []string
	// Observers are the catalog entries in force, all of their settings,
	// libraries and extensions included.
	Observers []string
}

// Setting is a server setting with where its value came from.
type Setting struct {
	Name, Value, Source string
}

// observingSettings are the settings that make a server record or wait
// for something: logging, plan capture, audit, statistics, sampling and
// synchronous replication.
const observingSettings = `SELECT name, coalesce(setting, ''), source FROM pg_settings
WHERE source <> 'default' AND (name ~ '^(log_|auto_explain\.|pgaudit\.|pg_stat_statements\.|pg_wait_sampling\.|pg_stat_monitor\.|track_)'
   OR name IN ('logging_collector', 'compute_query_id', 'synchronous_standby_names', 'synchronous_commit', 'debug_print_plan', 'debug_print_parse'))
ORDER BY name`

// Inspect lists the observers active on the server now, matching them with
// the catalog entries in candidates. A LOAD or SET done inside another
// session cannot be seen from here.
func (s *Server) Inspect(ctx context.Context, candidates []observer.Observer) (Inspection, error) {
	var in Inspection
	conn, err := s.connect(ctx)
	if err != nil {
		return in, err
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&in.Version); err != nil {
		return in, fmt.Errorf("inspect: %w", err)
	}
	in.Version, _, _ = strings.Cut(in.Version, " ")
	rows, err := conn.Query(ctx, observingSettings)
	if err != nil {
		return in, fmt.Errorf("inspect settings: %w", err)
	}
	var st Setting
	if _, err := pgx.ForEachRow(rows, []any{&st.Name, &st.Value, &st.Source}, func() error {
		in.Settings = append(in.Settings, st)
		return nil
	}); err != nil {
		return in, fmt.Errorf("inspect settings: %w", err)
	}
	var preload, session string
	if err := conn.QueryRow(ctx, "SELECT current_setting('shared_preload_libraries'), current_setting('session_preload_libraries')").Scan(&preload, &session); err != nil {
		return in, fmt.Errorf("inspect libraries: %w", err)
	}
	in.Preload, in.SessionPreload = splitLibraries(preload), splitLibraries(session)
	lists := []struct {
		dst *[]string
		sql string
	}{
		{&in.Extensions, "SELECT extname || ' ' || extversion FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY 1"},
		// The logging collector has no entry in pg_stat_activity; the file it
		// writes says it runs.
		{&in.Processes, `SELECT 'logging collector writing ' || f FROM pg_current_logfile() f WHERE f IS NOT NULL
			UNION ALL
			SELECT backend_type || ' (pid ' || pid || ')' FROM pg_stat_activity
			WHERE backend_type = 'walsender' OR backend_type ILIKE '%sampl%' ORDER BY 1`},
		{&in.Slots, `SELECT slot_name || ' (' || slot_type || CASE WHEN active THEN ', active' ELSE ', inactive' END ||
			coalesce(', wal ' || wal_status, '') || ')' FROM pg_replication_slots ORDER BY 1`},
		{&in.Standbys, "SELECT application_name || ' (' || sync_state || ', ' || state || ')' FROM pg_stat_replication ORDER BY 1"},
	}
	for _, l := range lists {
		rows, err := conn.Query(ctx, l.sql)
		if err != nil {
			return in, fmt.Errorf("inspect: %w", err)
		}
		if *l.dst, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return in, fmt.Errorf("inspect: %w", err)
		}
	}
	if in.Observers, err = s.activeObservers(ctx, conn, candidates, in); err != nil {
		return in, err
	}
	return in, nil
}

// activeObservers returns the candidates fully in force: every preload
// loaded, every extension created, every setting at the observer's value,
// and at least one of them not the server's default (else an observer
// made only of defaults would always be "active"). Observers with a sink
// are obsbench's own set-ups and are not looked for.
func (s *Server) activeObservers(ctx context.Context, conn *pgx.Conn, candidates []observer.Observer, in Inspection) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT name, coalesce(setting, ''), source <> 'default' FROM pg_settings")
	if err != nil {
		return nil, fmt.Errorf("inspect settings: %w", err)
	}
	values, changed := map[string]string{}, map[string]bool{}
	var name, value string
	var nonDefault bool
	if _, err := pgx.ForEachRow(rows, []any{&name, &value, &nonDefault}, func() error {
		values[name], changed[name] = value, nonDefault
		return nil
	}); err != nil {
		return nil, fmt.Errorf("inspect settings: %w", err)
	}
	exts := map[string]bool{}
	for _, e := range in.Extensions {
		n, _, _ := strings.Cut(e, " ")
		exts[n] = true
	}
	var out []string
	for _, o := range candidates {
		if o.Name == observer.Baseline || o.Sink != nil {
			continue
		}
		inForce, distinct := true, len(o.Preload) > 0 || len(o.Extensions) > 0
		for _, l := range o.Preload {
			inForce = inForce && slices.Contains(in.Preload, l)
		}
		for _, e := range o.Extensions {
			inForce = inForce && exts[e]
		}
		for n, v := range o.Settings {
			got, ok := values[n]
			inForce = inForce && ok && got == v
			distinct = distinct || changed[n]
		}
		if inForce && distinct {
			out = append(out, o.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

func splitLibraries(list string) []string {
	var out []string
	for _, l := range strings.Split(list, ",") {
		if l = strings.Trim(strings.TrimSpace(l), `"`); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// ChangedSettings are the settings not at their built-in defaults, as set
// by configuration files, the command line or ALTER SYSTEM/DATABASE/ROLE:
// what a reader needs to reproduce a measurement on this server.
func (s *Server) ChangedSettings(ctx context.Context) (map[string]string, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT name, coalesce(setting, '') FROM pg_settings
		WHERE source NOT IN ('default', 'override', 'client', 'session')`)
	if err != nil {
		return nil, fmt.Errorf("read changed settings: %w", err)
	}
	out := map[string]string{}
	var name, value string
	_, err = pgx.ForEachRow(rows, []any{&name, &value}, func() error { out[name] = value; return nil })
	return out, err
}
