package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/dataset"
)

// CreateDatabase creates the database named in dsn by connecting to the
// `postgres` maintenance database of the same server. Only used on managed
// servers: an external server's database is the user's to create.
func CreateDatabase(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("parse dsn: %w", err)
	}
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// Load creates d's tables in the dataset database, fills them with COPY,
// adds keys and indexes and analyzes them. Tables that already hold exactly
// d's row counts are kept; any other contents is an error, never
// overwritten.
func (s *Server) Load(ctx context.Context, d dataset.Dataset) error {
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if err := s.ensureSchema(ctx, conn); err != nil {
		return err
	}
	if err := s.Verify(ctx, d); err == nil {
		return nil
	}
	if err := s.checkTablesFree(ctx, conn, d); err != nil {
		return err
	}
	for _, t := range d.Tables {
		if _, err := conn.Exec(ctx, t.CreateSQL()); err != nil {
			return fmt.Errorf("create %s: %w", t.Name, err)
		}
		i := 0
		n, err := conn.CopyFrom(ctx, pgx.Identifier{t.Name}, t.ColumnNames(), pgx.CopyFromFunc(func() ([]any, error) {
			if i >= t.Rows {
				return nil, nil
			}
			i++
			return t.Row(i - 1), nil
		}))
		if err != nil {
			return fmt.Errorf("copy into %s: %w", t.Name, err)
		}
		if n != int64(t.Rows) {
			return fmt.Errorf("copy into %s: %d rows, want %d", t.Name, n, t.Rows)
		}
		for _, stmt := range t.IndexSQL() {
			if _, err := conn.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
	}
	// VACUUM sets the visibility map, so index-only scans and hint bits do not
	// change under the first measured runs; ANALYZE gives stable plans.
	names := make([]string, len(d.Tables))
	for i, t := range d.Tables {
		names[i] = t.Name
	}
	if _, err := conn.Exec(ctx, "VACUUM (ANALYZE) "+strings.Join(names, ", ")); err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	return s.Verify(ctx, d)
}

// schemaComment marks a schema obsbench created; any other schema of the
// same name is the user's and is not touched.
const schemaComment = "obsbench dataset schema (drop with DROP SCHEMA ... CASCADE when done)"

// ensureSchema creates the dataset's schema, or checks that the existing
// one is obsbench's.
func (s *Server) ensureSchema(ctx context.Context, conn *pgx.Conn) error {
	create, err := s.schemaToCreate(ctx, conn)
	if err != nil || !create {
		return err
	}
	id := pgx.Identifier{s.schema}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+id); err != nil {
		return fmt.Errorf("create schema %s: %w", s.schema, err)
	}
	if _, err := conn.Exec(ctx, "COMMENT ON SCHEMA "+id+" IS "+quoteLiteral(schemaComment)); err != nil {
		return fmt.Errorf("mark schema %s: %w", s.schema, err)
	}
	return nil
}

// schemaToCreate says whether the dataset's schema is still to be created.
// A schema of that name that obsbench did not create is an error.
func (s *Server) schemaToCreate(ctx context.Context, conn *pgx.Conn) (bool, error) {
	if s.schema == "" {
		return false, nil
	}
	var comment *string
	err := conn.QueryRow(ctx, "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1", s.schema).Scan(&comment)
	switch {
	case err == pgx.ErrNoRows:
		return true, nil
	case err != nil:
		return false, fmt.Errorf("look for schema %s: %w", s.schema, err)
	case comment == nil || *comment != schemaComment:
		return false, fmt.Errorf("schema %s exists and was not created by obsbench; obsbench keeps its dataset in a schema of its own and never writes into another", s.schema)
	}
	return false, nil
}

// checkTablesFree fails when a table of d already exists (without d's
// rows, or Verify would have passed): obsbench never overwrites a table.
func (s *Server) checkTablesFree(ctx context.Context, conn *pgx.Conn, d dataset.Dataset) error {
	for _, t := range d.Tables {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", s.qualified(t.Name)).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return fmt.Errorf("table %s exists but does not hold dataset %s; obsbench never overwrites a table: drop it, or use an empty database", s.qualified(t.Name), d.Name)
		}
	}
	return nil
}

// qualified names table t in the dataset's schema, if there is one.
func (s *Server) qualified(t string) string {
	if s.schema == "" {
		return t
	}
	return pgx.Identifier{s.schema, t}.Sanitize()
}

// Verify checks that every table of d holds its expected number of rows.
func (s *Server) Verify(ctx context.Context, d dataset.Dataset) error {
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return d.Verify(ctx, func(ctx context.Context, table string) (n int64, err error) {
		err = conn.QueryRow(ctx, "SELECT count(*) FROM "+s.qualified(table)).Scan(&n)
		return n, err
	})
}

// Setup runs a workload's set-up statements in the dataset database.
func (s *Server) Setup(ctx context.Context, stmts []string) error {
	if len(stmts) == 0 {
		return nil
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, stmt := range stmts {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("workload set-up: %w", err)
		}
	}
	return nil
}
