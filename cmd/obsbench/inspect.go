package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/sqlserver"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

func inspectCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("obsbench inspect", flag.ContinueOnError)
	engine := fs.String("engine", "postgres", "database engine: postgres, mariadb or sqlserver")
	dsn := fs.String("dsn", "", "server to inspect (postgres: libpq connection string or URL, default libpq's defaults: PGHOST, PGPORT, PGUSER, ... or the local socket; mariadb: user:password@tcp(host:3306)/ or user@unix(/path/to/socket)/, default root@unix(/run/mysqld/mysqld.sock)/; sqlserver: sqlserver://user:password@host:1433, required)")
	results := fs.String("results", "", "an obsbench results directory (with summary.json): show the overhead measured for each observer found")
	file := fs.String("observer-file", "", "YAML file with more observers to look for (same schema as the catalog)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := checkEngine(*engine); err != nil {
		return err
	}
	cat, err := loadCatalog(*file)
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
	switch *engine {
	case "mariadb":
		return inspectMariaDB(ctx, stdout, *dsn, cat.All(*engine), measured, sum)
	case "sqlserver":
		return inspectSQLServer(ctx, stdout, *dsn, cat.All(*engine), measured, sum)
	}
	srv := postgres.New(*dsn, postgres.Options{})
	in, err := srv.Inspect(ctx, cat.All(*engine))
	if err != nil {
		return fmt.Errorf("inspect %s: %w", describeDSN(*dsn), err)
	}
	fmt.Fprintf(stdout, "observers on postgres %s (%s)\n\n", in.Version, describeDSN(*dsn))
	printInForce(stdout, in.Observers, measured, sum)
	section(stdout, "observing settings (not at their defaults)", func() []string {
		var out []string
		for _, s := range in.Settings {
			out = append(out, fmt.Sprintf("%s = %s  (%s)", s.Name, s.Value, s.Source))
		}
		return out
	}())
	section(stdout, "libraries preloaded in every process", in.Preload)
	section(stdout, "libraries preloaded in every new session", in.SessionPreload)
	section(stdout, "extensions in this database", in.Extensions)
	section(stdout, "observing processes", in.Processes)
	section(stdout, "replication slots", in.Slots)
	section(stdout, "connected standbys", in.Standbys)
	fmt.Fprintln(stdout, "\nnot visible from here: LOAD or SET inside other sessions, per-role settings (pg_db_role_setting)")
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

// describeDSN names the server without its password.
func describeDSN(dsn string) string {
	if dsn == "" {
		return "libpq defaults"
	}
	return redactDSN(dsn)
}

// inspectMariaDB is inspect for --engine mariadb.
func inspectMariaDB(ctx context.Context, w io.Writer, dsn string, candidates []observer.Observer, measured map[string]result.ConditionSummary, sum result.Summary) error {
	if dsn == "" {
		dsn = "root@unix(/run/mysqld/mysqld.sock)/"
	}
	srv, err := mariadb.New(dsn, mariadb.Options{})
	if err != nil {
		return usagef("--dsn: %v", err)
	}
	in, err := srv.Inspect(ctx, candidates)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", redactDSN(dsn), err)
	}
	fmt.Fprintf(w, "observers on mariadb %s (%s)\n\n", in.Version, redactDSN(dsn))
	printInForce(w, in.Observers, measured, sum)
	var settings []string
	for _, s := range in.Settings {
		settings = append(settings, fmt.Sprintf("%s = %s  (%s)", s.Name, s.Value, strings.ToLower(s.Source)))
	}
	section(w, "observing variables (not at their defaults)", settings)
	section(w, "audit, response-time and semi-sync plugins", in.Plugins)
	consumers := in.Consumers
	if consumers == nil {
		consumers = []string{"performance_schema is off"}
	} else {
		consumers = append(consumers, fmt.Sprintf("(%d instruments enabled)", in.Instruments))
	}
	section(w, "performance_schema consumers enabled", consumers)
	section(w, "replication", in.Replication)
	section(w, "lost-event counters above zero", in.Lost)
	fmt.Fprintln(w, "\nnot visible from here: SET SESSION inside other sessions, performance_schema setup_actors and setup_objects filters")
	return nil
}

// inspectSQLServer is inspect for --engine sqlserver: the traces and XE
// sessions running (study 1's advice), their targets and loss modes.
func inspectSQLServer(ctx context.Context, w io.Writer, dsn string, candidates []observer.Observer, measured map[string]result.ConditionSummary, sum result.Summary) error {
	if dsn == "" {
		return usageError{errNoManagedSQLServer}
	}
	srv, err := sqlserver.New(dsn, sqlserver.Options{Database: externalSchema})
	if err != nil {
		return usagef("--dsn: %v", err)
	}
	in, err := srv.Inspect(ctx, candidates)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", redactDSN(dsn), err)
	}
	fmt.Fprintf(w, "observers on %s (%s)\n\n", in.Version, redactDSN(dsn))
	printInForce(w, in.Observers, measured, sum)
	section(w, "traces (sys.traces)", in.Traces)
	section(w, "Extended Events sessions (sys.server_event_sessions, sys.dm_xe_sessions)", in.Sessions)
	section(w, "server audits", in.Audits)
	section(w, "availability-group replicas of database "+externalSchema, in.Replicas)
	section(w, "lost-event counters above zero", in.Lost)
	fmt.Fprintln(w, "\nnot visible from here: a client attached to an XE event_stream (Watch Live Data, XELite) shows only as the session's dispatch latency forced to 3 s; SET options inside other sessions")
	return nil
}
