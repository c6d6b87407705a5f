// Package postgres is obsbench's PostgreSQL engine: it applies and reverts
// observers from the catalog, counts the events they record, loads datasets
// and opens the driver's sessions, all through pgx.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/poll"
)

// Server is a PostgreSQL server under test, managed or external.
type Server struct {
	dsn     string // the dataset database
	restart func(ctx context.Context) error
	host    Host
	journal engine.Journal
	schema  string

	// local: the backends of a server obsbench does not manage are
	// processes of this machine (onThisMachine), checked once.
	localOnce sync.Once
	local     bool
}

// setSearchPath puts the dataset's schema first for every connection.
func (s *Server) setSearchPath(params map[string]string) {
	if s.schema != "" {
		params["search_path"] = pgx.Identifier{s.schema}.Sanitize() + ", public"
	}
}

// Options configure a Server.
type Options struct {
	// Restart restarts the server; nil for servers obsbench may not restart,
	// which then refuse observers that need one.
	Restart func(ctx context.Context) error
	// Host provides observers' sinks; nil for a server obsbench does not
	// manage, which then refuses observers with a sink.
	Host Host
	// Journal, if set, records every change before it is made.
	Journal engine.Journal
	// Schema, if set, is where the dataset lives: a schema obsbench
	// creates in the DSN's database and that is first in every
	// connection's search_path. For external servers, whose databases
	// hold the user's data.
	Schema string
}

// New returns the server reached by dsn. The database named in dsn is where
// datasets are loaded and extensions created.
func New(dsn string, opts Options) *Server {
	return &Server{dsn: dsn, restart: opts.Restart, host: opts.Host, journal: opts.Journal, schema: opts.Schema}
}

// DSN is the connection string of the dataset database.
func (s *Server) DSN() string { return s.dsn }

// connect opens a control connection. Each operation uses a fresh one, since
// restarts break connections and new sessions see reloaded settings.
func (s *Server) connect(ctx context.Context) (*pgx.Conn, error) {
	return s.connectAs(ctx, "obsbench-control")
}

// connectAs opens a connection named app in pg_stat_activity.
func (s *Server) connectAs(ctx context.Context, app string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(s.dsn)
	if err != nil {
		return nil, fmt.Errorf("parse dsn: %w", err)
	}
	cfg.RuntimeParams["application_name"] = app
	s.setSearchPath(cfg.RuntimeParams)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	return conn, nil
}

// Ping checks the server can be reached and obsbench is a superuser there,
// which applying observers needs.
func (s *Server) Ping(ctx context.Context) error {
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var super bool
	if err := conn.QueryRow(ctx, "SELECT usesuper FROM pg_user WHERE usename = current_user").Scan(&super); err != nil {
		return fmt.Errorf("check privileges: %w", err)
	}
	if !super {
		return errors.New("the user in the dsn is not a superuser; observers are changed with ALTER SYSTEM, which needs one")
	}
	return nil
}

// Version is the server's version string, e.g. "15.18".
func (s *Server) Version(ctx context.Context) (string, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var v string
	err = conn.QueryRow(ctx, "SHOW server_version").Scan(&v)
	v, _, _ = strings.Cut(v, " ")
	return v, err
}

// Settings returns every setting as a fresh session sees it, name to value.
// Comparing the map before an observer is applied and after it is reverted
// proves the revert complete.
func (s *Server) Settings(ctx context.Context) (map[string]string, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT name, coalesce(setting, '') FROM pg_settings")
	if err != nil {
		return nil, fmt.Errorf("read pg_settings: %w", err)
	}
	out := map[string]string{}
	var name, value string
	_, err = pgx.ForEachRow(rows, []any{&name, &value}, func() error {
		out[name] = value
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read pg_settings: %w", err)
	}
	// application_name is the reading session's own.
	delete(out, "application_name")
	return out, nil
}

// waitReload signals a configuration reload and waits until new sessions
// see it: pg_reload_conf only signals the postmaster, which rereads the files
// asynchronously, and a session forked before that would run with the old
// settings.
func waitReload(ctx context.Context, conn *pgx.Conn, dsn string) error {
	var before time.Time
	if err := conn.QueryRow(ctx, "SELECT pg_conf_load_time()").Scan(&before); err != nil {
		return fmt.Errorf("read pg_conf_load_time: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("reload configuration: %w", err)
	}
	return poll.Until(ctx, 30*time.Second, 20*time.Millisecond, func() (bool, error) {
		fresh, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			return false, fmt.Errorf("connect after reload: %w", err)
		}
		res := fresh.ExecParams(ctx, "SELECT pg_conf_load_time() > $1", [][]byte{[]byte(before.Format(time.RFC3339Nano))}, nil, nil, nil).Read()
		fresh.Close(ctx)
		if res.Err != nil {
			return false, fmt.Errorf("check reload: %w", res.Err)
		}
		return len(res.Rows) == 1 && string(res.Rows[0][0]) == "t", nil
	}, func() error {
		return errors.New("the server did not reload its configuration within 30s")
	})
}

// listSettings take a list of values. ALTER SYSTEM writes a single quoted
// 'a,b' as one element named "a,b", so their elements are quoted one by one.
var listSettings = map[string]bool{
	"shared_preload_libraries": true, "session_preload_libraries": true, "local_preload_libraries": true,
	"search_path": true, "temp_tablespaces": true, "unix_socket_directories": true,
}

// settingValue is value as the right-hand side of ALTER SYSTEM SET name.
func settingValue(name, value string) string {
	if !listSettings[name] {
		return quoteLiteral(value)
	}
	var parts []string
	for _, p := range strings.Split(value, ",") {
		if p = strings.Trim(strings.TrimSpace(p), `"`); p != "" {
			parts = append(parts, quoteLiteral(p))
		}
	}
	if len(parts) == 0 {
		return "''"
	}
	return strings.Join(parts, ", ")
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
