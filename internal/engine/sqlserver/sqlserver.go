package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/obsbench/obsbench/internal/engine"
)

// controlApp is the client application name of obsbench's own control
// connections; driverApp that of the workload's sessions.
const (
	controlApp = "obsbench"
	driverApp  = "obsbench-driver"
)

// Options configure a Server.
type Options struct {
	// Database holds the dataset (created by obsbench, or marked as
	// obsbench's; see load.go). The workload's sessions connect to it.
	Database string
	// Journal records every change before it is made; nil: changes are
	// not journaled (tests of rendering only).
	Journal engine.Journal
}

// Server is an external SQL Server reached by a sqlserver:// DSN.
type Server struct {
	dsn      *url.URL
	database string
	journal  engine.Journal
}

// ErrDSN is returned for a DSN obsbench cannot use.
var ErrDSN = errors.New("invalid sqlserver dsn")

// New checks dsn and returns the server; nothing is connected yet. Only
// the URL form is accepted (sqlserver://user:password@host:1433?database=x):
// obsbench sets the database and application name of each connection.
func New(dsn string, opts Options) (*Server, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "sqlserver" || u.Host == "" {
		return nil, fmt.Errorf("%w: want sqlserver://user:password@host[:port][/instance][?options], e.g. sqlserver://sa:secret@127.0.0.1:1433", ErrDSN)
	}
	if _, err := mssql.NewConnector(dsn); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDSN, err)
	}
	db := opts.Database
	if db == "" {
		db = u.Query().Get("database")
	}
	return &Server{dsn: u, database: db, journal: opts.Journal}, nil
}

// Database is the dataset's database.
func (s *Server) Database() string { return s.database }

// connector connects to database db ("" for master) as app.
func (s *Server) connector(db, app string) (*mssql.Connector, error) {
	u := *s.dsn
	q := u.Query()
	if db == "" {
		db = "master"
	}
	q.Set("database", db)
	q.Set("app name", app)
	u.RawQuery = q.Encode()
	return mssql.NewConnector(u.String())
}

// open is a pool on database db ("" for master) for obsbench's own
// statements.
func (s *Server) open(db string) *sql.DB {
	c, err := s.connector(db, controlApp)
	if err != nil {
		// New parsed the same DSN; only the two set options differ.
		panic(fmt.Sprintf("sqlserver: dsn with database %q: %v", db, err))
	}
	return sql.OpenDB(c)
}

// control is one connection to master for obsbench's own statements.
func (s *Server) control(ctx context.Context) (*sql.Conn, func() error, error) {
	return engine.SQLConn(ctx, s.open(""), "sqlserver "+s.dsn.Redacted())
}

// Ping connects and checks the version (SQL Server 2016, 13.x, or later:
// the catalog's events and options). The login's permissions depend on
// the observers: CheckPermissions checks them, all at once.
func (s *Server) Ping(ctx context.Context) error {
	conn, done, err := s.control(ctx)
	if err != nil {
		return err
	}
	defer done()
	var major int
	if err := conn.QueryRowContext(ctx, "SELECT CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(32)), 4) AS int)").Scan(&major); err != nil {
		return fmt.Errorf("read server version: %w", err)
	}
	if major < 13 {
		return fmt.Errorf("SQL Server major version %d; obsbench needs 13 (2016) or later", major)
	}
	return nil
}

// Version is "sqlserver <version> <edition>".
func (s *Server) Version(ctx context.Context) (string, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	var v, ed string
	if err := conn.QueryRowContext(ctx, "SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(32)), CAST(SERVERPROPERTY('Edition') AS nvarchar(128))").Scan(&v, &ed); err != nil {
		return "", fmt.Errorf("read server version: %w", err)
	}
	return "sqlserver " + v + " " + ed, nil
}

// env reads what rendering needs: the server's log directory, from the
// path of its error log, and a stamp unique to this apply.
func (s *Server) env(ctx context.Context, conn *sql.Conn) (Env, error) {
	var errorLog string
	if err := conn.QueryRowContext(ctx, "SELECT CAST(SERVERPROPERTY('ErrorLogFileName') AS nvarchar(4000))").Scan(&errorLog); err != nil {
		return Env{}, fmt.Errorf("read the server's log directory: %w", err)
	}
	var id sql.NullInt64 // NULL until the dataset's database is created
	if err := conn.QueryRowContext(ctx, "SELECT DB_ID(@p1)", s.database).Scan(&id); err != nil {
		return Env{}, fmt.Errorf("read the id of database %s: %w", s.database, err)
	}
	// 32767 is the Resource database's, which sys.databases does not list.
	var none int
	if err := conn.QueryRowContext(ctx, "SELECT ISNULL(MAX(database_id), 4) + 1 FROM sys.databases WHERE database_id < 32766").Scan(&none); err != nil {
		return Env{}, fmt.Errorf("read the databases' ids: %w", err)
	}
	return Env{Database: s.database, DatabaseID: int(id.Int64), NoDatabaseID: none, LogDir: logDir(errorLog), Stamp: time.Now().UTC().Format("20060102T150405")}, nil
}

// logDir is the directory of an error log path, with its separator: a
// Windows server's paths use \, a Linux server's /.
func logDir(errorLog string) string {
	i := strings.LastIndexAny(errorLog, `\/`)
	if i < 0 {
		return ""
	}
	return errorLog[:i+1]
}
