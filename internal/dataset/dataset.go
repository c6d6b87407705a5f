// Package dataset defines the schemas and deterministic generators of the
// data the workloads read. A dataset is data: tables with portable column
// types and a function that produces row i, so that any engine can load it
// and every load of the same dataset is identical.
package dataset

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Column is a table column with a portable SQL type.
type Column struct {
	Name string
	Type string // int, varchar(n), date, numeric(p,s)
}

// Index is a secondary index.
type Index struct {
	Name    string
	Columns []string
}

// Table is one generated table.
type Table struct {
	Name       string
	Columns    []Column
	PrimaryKey string
	Indexes    []Index
	// Rows is the number of rows; loading is verified against it.
	Rows int
	// Row returns row i (0 <= i < Rows); the same i gives the same row.
	Row func(i int) []any
}

// Dataset is a named set of tables.
type Dataset struct {
	Name        string
	Description string
	Tables      []Table
	// Scale, if set, makes the dataset at another scale (rows x scale);
	// the registered dataset is scale 1.
	Scale func(scale int) Dataset
	// Shrink, if set, makes the dataset at its scale with 1/by of the
	// rows of that scale (by 1: all of them), whatever d's own shrink: a
	// mix whose reports read every row, counted under valgrind at a size
	// that fits (dss).
	Shrink func(by int) Dataset
}

// Shrunk is d at its scale with 1/by of that scale's rows (by 1: all).
func (d Dataset) Shrunk(by int) (Dataset, error) {
	switch {
	case by == 1 && d.Shrink == nil:
		return d, nil
	case d.Shrink == nil:
		return Dataset{}, fmt.Errorf("dataset %s has one size; --shrink %d is for datasets that shrink (dss)", d.Name, by)
	case by < 1:
		return Dataset{}, fmt.Errorf("--shrink %d: want 1 or more", by)
	}
	return d.Shrink(by), nil
}

// Verify checks that every table of d holds its rows, counting each
// table's with count: how each engine checks a dataset it loaded, or
// found, before it is measured.
func (d Dataset) Verify(ctx context.Context, count func(ctx context.Context, table string) (int64, error)) error {
	for _, t := range d.Tables {
		n, err := count(ctx, t.Name)
		if err != nil {
			return fmt.Errorf("dataset %s: count %s: %w", d.Name, t.Name, err)
		}
		if n != int64(t.Rows) {
			return fmt.Errorf("dataset %s: table %s has %d rows, want %d", d.Name, t.Name, n, t.Rows)
		}
	}
	return nil
}

// ColumnNames lists t's column names in order.
func (t Table) ColumnNames() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// CreateSQL is the CREATE TABLE statement for t, without indexes.
func (t Table) CreateSQL() string {
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = c.Name + " " + c.Type + " NOT NULL"
	}
	return fmt.Sprintf("CREATE TABLE %s (%s)", t.Name, strings.Join(cols, ", "))
}

// IndexSQL are the statements that add t's primary key and indexes; they
// run after the data is loaded, which is faster than maintaining them.
func (t Table) IndexSQL() []string {
	var out []string
	if t.PrimaryKey != "" {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)", t.Name, t.PrimaryKey))
	}
	for _, ix := range t.Indexes {
		out = append(out, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", ix.Name, t.Name, strings.Join(ix.Columns, ", ")))
	}
	return out
}

var registry = map[string]Dataset{}

func register(d Dataset) { registry[d.Name] = d }

// Scaled returns the dataset called name at scale (1: as registered).
func Scaled(name string, scale int) (Dataset, error) {
	d, err := Lookup(name)
	if err != nil || scale == 1 {
		return d, err
	}
	if d.Scale == nil {
		return Dataset{}, fmt.Errorf("dataset %s has one size; scale %d is for datasets that scale (dss)", name, scale)
	}
	if scale < 1 {
		return Dataset{}, fmt.Errorf("scale %d: want 1 or more", scale)
	}
	return d.Scale(scale), nil
}

// Lookup returns the dataset called name.
func Lookup(name string) (Dataset, error) {
	if d, ok := registry[name]; ok {
		return d, nil
	}
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return Dataset{}, fmt.Errorf("unknown dataset %q; known: %s", name, strings.Join(names, ", "))
}
