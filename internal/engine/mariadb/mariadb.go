// Package mariadb is obsbench's MariaDB engine: it applies and reverts
// observers from the catalog (global variables, plugins, startup options
// on a managed server), counts the events they record, loads datasets and
// opens the driver's sessions, through go-sql-driver/mysql.
package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/slowfs"
)

// Server is a MariaDB server under test, managed or external.
type Server struct {
	cfg      *mysql.Config // the dataset database's
	startup  Startup
	host     Host
	journal  engine.Journal
	database string

	// local: the threads of a server obsbench does not manage are this
	// machine's (onThisMachine), checked once.
	localOnce sync.Once
	local     bool
}

// Startup is a server obsbench manages: its startup options can be set,
// and it can be restarted for them to take effect (performance_schema and
// its sizes are startup options only).
type Startup interface {
	// Option is a startup option's value, if set.
	Option(name string) (string, bool)
	// SetOption sets a startup option for the next start; nil removes it.
	SetOption(name string, value *string) error
	Restart(ctx context.Context) error
}

// Host provides observers' sinks on a managed server: a directory on a
// slow I/O path.
type Host interface {
	SinkDir() string
	MountSlowDir(ctx context.Context, dev slowfs.Device) (release func() error, err error)
}

// Options configure a Server.
type Options struct {
	// Startup is nil for servers obsbench may not restart, which then
	// refuse observers that need a startup option.
	Startup Startup
	// Host is nil for a server obsbench does not manage, which then
	// refuses observers with a sink.
	Host Host
	// Journal, if set, records every change before it is made.
	Journal engine.Journal
	// Database, if set, is the database the dataset is loaded into,
	// instead of the DSN's: obsbench creates it and marks it as its own.
	Database string
	// Password, if set, is the password to connect with instead of the
	// DSN's: a managed server's, which is kept out of every DSN's text.
	Password string
}

// New returns the server reached by dsn, a go-sql-driver/mysql DSN
// ("user:password@unix(/run/mysqld/mysqld.sock)/db" or
// "user:password@tcp(127.0.0.1:3306)/db").
func New(dsn string, opts Options) (*Server, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("dsn: %w (want user:password@tcp(host:port)/database or user@unix(/path/to/socket)/database)", err)
	}
	cfg.ParseTime = true
	cfg.InterpolateParams = false
	// The driver would also print connection errors it returns (a session
	// the server closed); they reach the user through the run's result.
	cfg.Logger = log.New(io.Discard, "", 0)
	if opts.Database != "" {
		cfg.DBName = opts.Database
	}
	if opts.Password != "" {
		cfg.Passwd = opts.Password
	}
	return &Server{cfg: cfg, startup: opts.Startup, host: opts.Host, journal: opts.Journal, database: cfg.DBName}, nil
}

// DSN is the DSN of the dataset database, password included.
func (s *Server) DSN() string { return s.cfg.FormatDSN() }

// open opens a pool of at most one control connection. Each operation
// opens its own, since restarts break connections.
func (s *Server) open(db string) *sql.DB {
	cfg := s.cfg.Clone()
	cfg.DBName = db
	c, _ := mysql.NewConnector(cfg) // cannot fail: cfg was parsed
	pool := sql.OpenDB(c)
	pool.SetMaxOpenConns(1)
	return pool
}

// control opens a control connection, on the dataset database when it
// exists.
func (s *Server) control(ctx context.Context) (*sql.Conn, func() error, error) {
	return engine.SQLConn(ctx, s.open(""), "mariadb")
}

// Ping checks the server can be reached and the DSN's user may change
// global variables and install plugins, which applying observers needs.
func (s *Server) Ping(ctx context.Context) error {
	conn, done, err := s.control(ctx)
	if err != nil {
		return err
	}
	defer done()
	rows, err := conn.QueryContext(ctx, "SHOW GRANTS")
	if err != nil {
		return fmt.Errorf("check privileges: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return err
		}
		if strings.HasPrefix(g, "GRANT ALL PRIVILEGES ON *.*") {
			return rows.Err()
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return errors.New("the user in the dsn lacks ALL PRIVILEGES ON *.*; observers are changed with SET GLOBAL and INSTALL SONAME, which need them")
}

// Version is the server's version, e.g. "10.11.19-MariaDB".
func (s *Server) Version(ctx context.Context) (string, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	var v string
	err = conn.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v)
	v, _, _ = strings.Cut(v, "-MariaDB")
	return v, err
}

// volatileVariables change by themselves as the server works, not by any
// observer's doing.
var volatileVariables = map[string]bool{
	"gtid_binlog_pos": true, "gtid_binlog_state": true, "gtid_current_pos": true, "gtid_slave_pos": true,
	"timestamp": true, "last_insert_id": true, "insert_id": true, "rand_seed1": true, "rand_seed2": true,
	"identity": true, "warning_count": true, "error_count": true,
}

// Settings returns every global variable, name to value. Comparing the
// map before an observer is applied and after it is reverted proves the
// revert complete.
func (s *Server) Settings(ctx context.Context) (map[string]string, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return globalVariables(ctx, conn)
}

func globalVariables(ctx context.Context, conn *sql.Conn) (map[string]string, error) {
	rows, err := conn.QueryContext(ctx, "SHOW GLOBAL VARIABLES")
	if err != nil {
		return nil, fmt.Errorf("read global variables: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name string
		var value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		if !volatileVariables[name] {
			out[name] = value.String
		}
	}
	return out, rows.Err()
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// quoteIdent quotes s as an identifier.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
