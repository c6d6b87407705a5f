package main

import (
	"context"
	"errors"
	"io"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/spec"
)

// captureCmd turns statement logs into a capture file: obsbench capture
// [flags] LOG... (files, or directories of them; flags may also follow
// the logs).
func captureCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := commandFlags("capture")
	out := fs.String("out", "", "capture file to write (required; an existing file is not overwritten)")
	source := fs.String("source", "auto", "log format: csvlog, jsonlog or stderr (PostgreSQL, log_statement=all or log_min_duration_statement=0), general-log (MariaDB), or auto (by extension: .csv, .json, else by the first line)")
	var prefix optionalString
	fs.Var(&prefix, "log-line-prefix", "the server's `log_line_prefix`, which a stderr log is read with (default: Debian's '"+postgres.DefaultPrefix+"', which also reads PostgreSQL's '%m [%p] ')")
	dsn := fs.String("dsn", "", "a PostgreSQL server to read log_line_prefix and lc_messages from, instead of --log-line-prefix and --log-language")
	lang := fs.String("log-language", "", "the language of a PostgreSQL log's messages: the server's `lc_messages` (de, de_DE.UTF-8), read with the installed PostgreSQL's message catalog, or a catalog's path (postgres-15.mo); default English")
	eng := fs.String("engine", "", spec.OneOf(capture.Engines())+": the engine whose log it is (implied by --source; with auto, only its formats are considered)")
	ds := fs.String("dataset", "", "the obsbench dataset the workload ran on, recorded so that a replay on a managed server loads it")
	tag := fs.String("tag", "", "a string in every statement of the workload, recorded so that observers' records of a replay are counted by it")
	scale := fs.Int("scale", 1, "the dataset's scale the workload ran at (dss: rows x N), recorded so that a replay loads the same")
	wl := fs.String("workload", "", "the obsbench workload captured, recorded so that a replay runs its set-up (its dataset, tag and functions)")
	dbs := fs.String("database", "", "keep only sessions on these databases (comma-separated)")
	users := fs.String("user", "", "keep only sessions of these users (comma-separated)")
	apps := fs.String("app", "", "keep only sessions of these application names (comma-separated; PostgreSQL)")
	exUsers := fs.String("exclude-user", "obsbench_system", "drop sessions of these users (comma-separated); obsbench's managed server samples as obsbench_system")
	exApps := fs.String("exclude-app", "", "drop sessions of these application names (comma-separated; PostgreSQL)")
	logs, err := parseInterspersed(fs, args, stdout)
	if err != nil {
		return err
	}
	err = capture.FromLogs(ctx, capture.LogOptions{
		Out: *out, Logs: logs, Source: *source, Engine: *eng, Dataset: *ds, Tag: *tag, Scale: *scale, Workload: *wl,
		Read: capture.ReadOptions{LinePrefix: prefix.value(), Server: *dsn, Language: *lang},
		Filter: capture.Filter{
			Databases: splitList(*dbs), Users: splitList(*users), Applications: splitList(*apps),
			ExcludeUsers: splitList(*exUsers), ExcludeApplications: splitList(*exApps),
		},
	}, stdout, stderr)
	if ie := (capture.InputError{}); errors.As(err, &ie) {
		return usageError{Err: err}
	}
	return err
}

// optionalString is a flag whose value may be "" and that says whether
// it was given.
type optionalString struct {
	s   string
	set bool
}

func (o *optionalString) String() string     { return o.s }
func (o *optionalString) Set(v string) error { o.s, o.set = v, true; return nil }

func (o *optionalString) value() *string {
	if !o.set {
		return nil
	}
	return &o.s
}
