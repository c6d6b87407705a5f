package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
)

// datasetProperty is the extended property that marks a database as
// obsbench's: any other database of the same name is the user's and is
// never written to. A user who wants the dataset in a database of their
// own making (one in an availability group, say) adds the property.
const datasetProperty = "obsbench"

// maxParams is the most parameters one request may carry (2,100) less a
// margin; a VALUES list also holds at most 1,000 rows.
const (
	maxParams       = 2000
	maxRowsPerValue = 1000
)

// Load creates the dataset's database and d's tables in it, fills them
// with multi-row INSERTs, adds keys and indexes and updates statistics.
// Tables that already hold exactly d's row counts are kept; a table with
// other contents is an error, never overwritten.
func (s *Server) Load(ctx context.Context, d dataset.Dataset) error {
	plan, err := s.PlanLoad(ctx, d)
	if err != nil || plan == nil {
		return err
	}
	conn, done, err := s.control(ctx)
	if err != nil {
		return err
	}
	if create, _ := s.databaseToCreate(ctx, conn); create {
		for _, st := range s.createDatabaseSQL() {
			if _, err := conn.ExecContext(ctx, st); err != nil {
				done()
				return fmt.Errorf("create database %s: %w", s.database, err)
			}
		}
	}
	done()
	pool := s.open(s.database)
	defer pool.Close()
	for _, t := range d.Tables {
		if err := loadTable(ctx, pool, t); err != nil {
			return err
		}
	}
	return s.Verify(ctx, d)
}

func (s *Server) createDatabaseSQL() []string {
	return []string{
		"CREATE DATABASE " + quoteName(s.database),
		fmt.Sprintf("EXEC %s.sys.sp_addextendedproperty @name = %s, @value = N'dataset database created by obsbench (DROP DATABASE when done)'",
			quoteName(s.database), quoteString(datasetProperty)),
	}
}

func rowsPerInsert(t dataset.Table) int {
	return min(maxRowsPerValue, maxParams/len(t.Columns))
}

func loadTable(ctx context.Context, pool *sql.DB, t dataset.Table) error {
	if _, err := pool.ExecContext(ctx, t.CreateSQL()); err != nil {
		return fmt.Errorf("create %s: %w", t.Name, err)
	}
	per := rowsPerInsert(t)
	head := fmt.Sprintf("INSERT INTO %s (%s) VALUES ", quoteName(t.Name), strings.Join(t.ColumnNames(), ", "))
	for start := 0; start < t.Rows; start += per {
		n := min(per, t.Rows-start)
		args := make([]any, 0, n*len(t.Columns))
		var rows []string
		for i := start; i < start+n; i++ {
			args = append(args, t.Row(i)...)
			ps := make([]string, len(t.Columns))
			for j := range ps {
				ps[j] = fmt.Sprintf("@p%d", (i-start)*len(t.Columns)+j+1)
			}
			rows = append(rows, "("+strings.Join(ps, ",")+")")
		}
		if _, err := pool.ExecContext(ctx, head+strings.Join(rows, ","), args...); err != nil {
			return fmt.Errorf("insert into %s: %w", t.Name, err)
		}
	}
	for _, stmt := range t.IndexSQL() {
		if _, err := pool.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	// Fresh statistics give stable plans from the first measured run.
	if _, err := pool.ExecContext(ctx, "UPDATE STATISTICS "+quoteName(t.Name)+" WITH FULLSCAN"); err != nil {
		return fmt.Errorf("update statistics of %s: %w", t.Name, err)
	}
	return nil
}

// databaseToCreate says whether the dataset's database is still to be
// created. A database of that name without obsbench's mark is an error.
func (s *Server) databaseToCreate(ctx context.Context, conn *sql.Conn) (bool, error) {
	if s.database == "" {
		return false, errors.New("no dataset database: obsbench keeps its dataset in a database of its own (obsbench by default)")
	}
	var id sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT DB_ID(@p1)", s.database).Scan(&id); err != nil {
		return false, fmt.Errorf("look for database %s: %w", s.database, err)
	}
	if !id.Valid {
		return true, nil
	}
	var marked int
	q := fmt.Sprintf("SELECT COUNT(*) FROM %s.sys.extended_properties WHERE class = 0 AND name = @p1", quoteName(s.database))
	if err := conn.QueryRowContext(ctx, q, datasetProperty).Scan(&marked); err != nil {
		return false, fmt.Errorf("look for obsbench's mark on database %s: %w", s.database, err)
	}
	if marked == 0 {
		return false, fmt.Errorf("database %s exists and is not marked as obsbench's; obsbench never writes into another database (to lend it one, run in it: EXEC sp_addextendedproperty @name = N'obsbench', @value = N'dataset')", s.database)
	}
	return false, nil
}

// Verify checks that every table of d holds its expected number of rows.
func (s *Server) Verify(ctx context.Context, d dataset.Dataset) error {
	pool := s.open(s.database)
	defer pool.Close()
	return d.Verify(ctx, engine.SQLRowCounter(pool, quoteName))
}

// Setup runs a workload's set-up statements in the dataset's database.
func (s *Server) Setup(ctx context.Context, stmts []string) error {
	pool := s.open(s.database)
	defer pool.Close()
	translated := make([]string, len(stmts))
	for i, st := range stmts {
		translated[i] = Translate(st)
	}
	return engine.SQLSetup(ctx, pool, translated)
}

// PlanLoad lists the statements Load would run, or nil when the dataset
// is already there. It fails as Load would on a database or table that is
// not obsbench's.
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
		out = append(out, s.createDatabaseSQL()...)
	} else {
		if err := s.Verify(ctx, d); err == nil {
			return nil, nil
		}
		for _, t := range d.Tables {
			var id sql.NullInt64
			if err := conn.QueryRowContext(ctx, "SELECT OBJECT_ID(@p1, N'U')", s.database+".dbo."+t.Name).Scan(&id); err != nil {
				return nil, err
			}
			if id.Valid {
				return nil, fmt.Errorf("table %s.dbo.%s exists but does not hold dataset %s; obsbench never overwrites a table: drop it, or use an empty database", s.database, t.Name, d.Name)
			}
		}
	}
	return append(out, LoadStatements(d)...), nil
}

// LoadStatements are the statements that load d into an empty database,
// the generated rows summarized.
func LoadStatements(d dataset.Dataset) []string {
	var out []string
	for _, t := range d.Tables {
		out = append(out, t.CreateSQL(), fmt.Sprintf("INSERT INTO %s ...  -- %d generated rows, %d per statement", quoteName(t.Name), t.Rows, rowsPerInsert(t)))
		out = append(out, t.IndexSQL()...)
		out = append(out, "UPDATE STATISTICS "+quoteName(t.Name)+" WITH FULLSCAN")
	}
	return out
}
