package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

func inspectCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := commandFlags("inspect")
	name := fs.String("engine", spec.Default().Engine, "database engine: "+engineChoices(anyEngine))
	dsn := fs.String("dsn", "", "server to inspect (postgres: libpq connection string or URL, default libpq's defaults: PGHOST, PGPORT, PGUSER, ... or the local socket; mariadb: user:password@tcp(host:3306)/ or user@unix(/path/to/socket)/, default root@unix(/run/mysqld/mysqld.sock)/; sqlserver: sqlserver://user:password@host:1433, required)")
	results := fs.String("results", "", "an obsbench results directory (with summary.json): show the overhead measured for each observer found")
	file := fs.String("observer-file", "", "YAML file with more observers to look for (same schema as the catalog)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	cat, err := app.LoadCatalog(*file)
	if err != nil {
		return err
	}
	var measured map[string]result.ConditionSummary
	var sum result.Summary
	if *results != "" {
		if sum, err = result.ReadSummary(filepath.Join(*results, "summary.json")); err != nil {
			return usagef("--results: %v", err)
		}
		measured = map[string]result.ConditionSummary{}
		for _, c := range sum.Conditions {
			measured[c.Name] = c
		}
	}
	eng, err := engine.Lookup(*name)
	if err != nil {
		return spec.FromEngine(err, "--dsn")
	}
	in, err := eng.Inspect(ctx, *dsn, cat.All(*name))
	if err != nil {
		return spec.FromEngine(err, "--dsn")
	}
	fmt.Fprintf(stdout, "observers on %s\n\n", in.Server)
	printInForce(stdout, in.Observers, measured, sum)
	for _, sec := range in.Sections {
		section(stdout, sec.Title, sec.Items)
	}
	fmt.Fprintf(stdout, "\nnot visible from this connection: %s\n", in.NotVisible)
	return nil
}

// printInForce lists the catalog observers in force, each with what the
// --results experiment measured for it, if given.
func printInForce(w io.Writer, names []string, measured map[string]result.ConditionSummary, sum result.Summary) {
	fmt.Fprintln(w, "catalog observers in force:")
	if len(names) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, name := range names {
		line := "  " + name
		if measured != nil {
			line += "  " + overheadNote(measured, name, sum)
		}
		fmt.Fprintln(w, line)
	}
}

// overheadNote is what the results say about observer name.
func overheadNote(measured map[string]result.ConditionSummary, name string, sum result.Summary) string {
	c, ok := measured[name]
	if !ok || c.Overhead == nil {
		return "(not measured in --results)"
	}
	o := c.Overhead
	if !o.Measured() {
		return "(" + o.Verdict + ")"
	}
	return fmt.Sprintf("overhead %.1f%% [%.1f, %.1f] on %s, %s (%s)", o.Pct, o.CILow, o.CIHigh, sum.Workload, o.Verdict, sum.Server)
}

func section(w io.Writer, title string, items []string) {
	fmt.Fprintf(w, "\n%s:\n", title)
	if len(items) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, it := range items {
		fmt.Fprintln(w, "  "+it)
	}
}
