package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
)

// databaseComment marks a database obsbench created; any other database of
// the same name is the user's and is not touched.
const databaseComment = "obsbench dataset (drop with DROP DATABASE when done)"

// rowsPerInsert is how many rows one INSERT of a load carries: well under
// the protocol's 65,535 placeholders for any dataset table.
const rowsPerInsert = 500

// Load creates the dataset database and d's tables in it, fills them with
// multi-row INSERTs, adds keys and indexes and analyzes them. Tables that
// already hold exactly d's row counts are kept; any other contents is an
// error, never overwritten.
func (s *Server) Load(ctx context.Context, d dataset.Dataset) error {
	conn, done, err := s.control(ctx)
	if err != nil {
		return err
	}
	defer done()
	create, err := s.databaseToCreate(ctx, conn)
	if err != nil {
		return err
	}
	if create {
		if _, err := conn.ExecContext(ctx, s.createDatabaseSQL()); err != nil {
			return fmt.Errorf("create database %s: %w", s.database, err)
		}
	} else if err := s.Verify(ctx, d); err == nil {
		return nil
	}
	if err := s.checkTablesFree(ctx, conn, d); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "USE "+quoteIdent(s.database)); err != nil {
		return err
	}
	for _, t := range d.Tables {
		if err := loadTable(ctx, conn, t); err != nil {
			return err
		}
	}
	return s.Verify(ctx, d)
}

func (s *Server) createDatabaseSQL() string {
	return fmt.Sprintf("CREATE DATABASE %s CHARACTER SET utf8mb4 COMMENT %s", quoteIdent(s.database), quoteLiteral(databaseComment))
}

func loadTable(ctx context.Context, conn *sql.Conn, t dataset.Table) error {
	if _, err := conn.ExecContext(ctx, t.CreateSQL()+" ENGINE=InnoDB"); err != nil {
		return fmt.Errorf("create %s: %w", t.Name, err)
	}
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(t.Columns)), ",") + ")"
	head := fmt.Sprintf("INSERT INTO %s (%s) VALUES ", quoteIdent(t.Name), strings.Join(t.ColumnNames(), ", "))
	for start := 0; start < t.Rows; start += rowsPerInsert {
		n := min(rowsPerInsert, t.Rows-start)
		args := make([]any, 0, n*len(t.Columns))
		for i := start; i < start+n; i++ {
			args = append(args, t.Row(i)...)
		}
		stmt := head + strings.TrimSuffix(strings.Repeat(row+",", n), ",")
		if _, err := conn.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("insert into %s: %w", t.Name, err)
		}
	}
	for _, stmt := range t.IndexSQL() {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	// Fresh statistics give stable plans from the first measured run.
	if _, err := conn.ExecContext(ctx, "ANALYZE TABLE "+quoteIdent(t.Name)); err != nil {
		return fmt.Errorf("analyze %s: %w", t.Name, err)
	}
	return nil
}

// databaseToCreate says whether the dataset database is still to be
// created. A database of that name that obsbench did not create is an
// error.
func (s *Server) databaseToCreate(ctx context.Context, conn *sql.Conn) (bool, error) {
	if s.database == "" {
		return false, errors.New("the dsn names no database; obsbench loads its dataset into a database of its own, e.g. root@tcp(127.0.0.1:3306)/obsbench")
	}
	var comment string
	err := conn.QueryRowContext(ctx, "SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", s.database).Scan(&comment)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("look for database %s: %w", s.database, err)
	case comment != databaseComment:
		return false, fmt.Errorf("database %s exists and was not created by obsbench; obsbench keeps its dataset in a database of its own and never writes into another", s.database)
	}
	return false, nil
}

// checkTablesFree fails when a table of d already exists (without d's
// rows, or Verify would have passed): obsbench never overwrites a table.
func (s *Server) checkTablesFree(ctx context.Context, conn *sql.Conn, d dataset.Dataset) error {
	for _, t := range d.Tables {
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", s.database, t.Name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("table %s.%s exists but does not hold dataset %s; obsbench never overwrites a table: drop it, or use an empty database", s.database, t.Name, d.Name)
		}
	}
	return nil
}

// Verify checks that every table of d holds its expected number of rows.
func (s *Server) Verify(ctx context.Context, d dataset.Dataset) error {
	pool := s.open(s.database)
	defer pool.Close()
	return d.Verify(ctx, engine.SQLRowCounter(pool, quoteIdent))
}

// Setup runs a workload's set-up statements in the dataset database.
func (s *Server) Setup(ctx context.Context, stmts []string) error {
	pool := s.open(s.database)
	defer pool.Close()
	return engine.SQLSetup(ctx, pool, stmts)
}

// PlanLoad lists the statements Load would run, or none when the dataset
// is already there. It fails as Load would on a database or tables that
// are not obsbench's.
func (s *Server) PlanLoad(ctx context.Context, d dataset.Dataset) ([]string, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	create, err := s.databaseToCreate(ctx, conn)
	if err != nil {
		return nil, err
	}
	var out []string
	if create {
		out = append(out, s.createDatabaseSQL())
	} else if err := s.Verify(ctx, d); err == nil {
		return nil, nil
	}
	if err := s.checkTablesFree(ctx, conn, d); err != nil {
		return nil, err
	}
	for _, t := range d.Tables {
		out = append(out, t.CreateSQL()+" ENGINE=InnoDB", fmt.Sprintf("INSERT INTO %s ...  -- %d generated rows, %d per statement", t.Name, t.Rows, rowsPerInsert))
		out = append(out, t.IndexSQL()...)
		out = append(out, "ANALYZE TABLE "+quoteIdent(t.Name))
	}
	return out, nil
}
