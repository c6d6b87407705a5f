package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// captureLogs is the real PostgreSQL and MariaDB logs of the capture
// package's tests.
const captureLogs = "../../internal/capture/testdata"

// Bad input to obsbench capture exits 2 with one line naming what is
// wrong (the file and line, for a log) and what would be valid, and
// leaves no capture behind. No server is needed.
func TestCaptureBadInput(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(tmp, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csvLine := func(message, detail string) string {
		return `2026-11-22 10:00:00.000 UTC,"app","shop",1,"[local]",6b02d58e.1,1,"idle",2026-11-22 10:00:00 UTC,,0,LOG,00000,"` +
			message + `","` + detail + `",,,,,,,,"web","client backend",,0` + "\n"
	}
	short := write("short.csv", "a,b,c\n")
	badParams := write("params.csv", csvLine("statement: SELECT 1", "")+csvLine("execute s: SELECT $1", "parameters: $1 = 7"))
	quiet := write("quiet.csv", csvLine("connection authorized: user=app database=shop", ""))
	stderrLog := write("postgresql.log", "2026-11-22 10:00:00.000 UTC [123] LOG:  statement: SELECT 1\n")
	notes := write("notes.log", "hello, world\n")
	// lc_messages = 'de_DE.UTF-8': German messages, which the installed
	// PostgreSQL's catalog recognizes.
	german := write("german/postgresql.log", "2026-11-22 10:00:00.000 UTC [123] app@shop LOG:  Verbindung autorisiert: Benutzer=app Datenbank=shop\n"+
		"2026-11-22 10:00:00.001 UTC [123] app@shop LOG:  Anweisung: SELECT 1\n")
	json := write("x.json", `{"timestamp":"2026-11-22 10:00:00.000 UTC"}`+"\n")
	both := filepath.Join(tmp, "both")
	write("both/postgresql-1.csv", "")
	write("both/postgresql-1.json", "")
	empty := filepath.Join(tmp, "empty")
	os.MkdirAll(empty, 0o755)
	existing := write("existing.obsc", "")
	out := filepath.Join(tmp, "c.obsc")

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{short}, "capture needs --out FILE"},
		{[]string{"--out", out}, "capture needs the log files (or directories of them) to read"},
		{[]string{"--out", out, "--source", "syslog", short}, `log source "syslog": want one of csvlog, jsonlog, stderr (PostgreSQL), general-log (MariaDB), or auto`},
		{[]string{"--out", out, "--source", "stderr", short}, short + `:1: no line begins with log_line_prefix "%m [%p] %q%u@%d " and a severity ("LOG:  "); the first is "a,b,c": give the server's log_line_prefix (--log-line-prefix, or --dsn to read it from the server)`},
		{[]string{"--out", out, "--log-line-prefix", "%t ", stderrLog}, stderrLog + `:1: no line begins with log_line_prefix "%t "`},
		{[]string{"--out", out, "--log-line-prefix", "%m [%p] %u%d ", stderrLog}, `log_line_prefix "%m [%p] %u%d ": %u and %d with nothing between them cannot be told apart in a line`},
		{[]string{"--out", out, "--log-line-prefix", "%m ", "--dsn", "host=/nowhere", stderrLog}, "--log-line-prefix and --dsn both say the log's prefix: give one"},
		{[]string{"--out", out, "--log-line-prefix", "%m ", short}, "--log-line-prefix says how PostgreSQL's stderr log is read; " + short + " is csvlog"},
		{[]string{"--out", out, german}, "its messages look like de (the server's lc_messages is not English): give --log-language de, or --dsn"},
		{[]string{"--out", out, "--engine", "oracle", short}, `--engine "oracle": want mariadb or postgres`},
		{[]string{"--out", out, "--engine", "mariadb", "--source", "csvlog", short}, "--engine mariadb and --source csvlog disagree: csvlog is a postgres log"},
		{[]string{"--out", out, "--workload", "nope", short}, `workload "nope"`},
		{[]string{"--out", out, "--scale", "3", short}, "--scale 3 needs --dataset or --workload"},
		{[]string{"--out", out, "--workload", "credit-top1", "--scale", "3", short}, "--scale: dataset credit has one size"},
		{[]string{"--out", out, "--dataset", "dss", "--scale", "0", short}, "--scale: scale 0: want 1 or more"},
		{[]string{"--out", out, filepath.Join(tmp, "none.csv")}, "log " + filepath.Join(tmp, "none.csv") + ": no such file or directory"},
		{[]string{"--out", out, empty}, "log directory " + empty + " has no *.csv, *.json or *.log files"},
		{[]string{"--out", out, "--engine", "postgres", empty}, "log directory " + empty + " has no *.csv, *.json or *.log files"},
		{[]string{"--out", out, both}, "log directory " + both + " holds csvlog (*.csv) and jsonlog (*.json) files: give --source csvlog or --source jsonlog"},
		{[]string{"--out", out, notes}, notes + `:1: "hello, world" is not a log obsbench reads: want PostgreSQL csvlog (*.csv), jsonlog (*.json) or stderr log (lines with "LOG:  " after the log_line_prefix), or a MariaDB general log`},
		{[]string{"--out", out, short, json}, short + " is csvlog, " + json + " is jsonlog: give logs of one format, or --source"},
		{[]string{"--out", out, "--engine", "mariadb", short}, short + " is a postgres log (csvlog), not mariadb's"},
		{[]string{"--out", out, short}, short + ":1: 3 columns; PostgreSQL csvlog has 23 or more"},
		{[]string{short, "--out", out}, short + ":1: 3 columns; PostgreSQL csvlog has 23 or more"}, // flags after the logs
		{[]string{"--out", out, badParams}, badParams + `:2: parameters: $1: want NULL or a quoted value at "7"`},
		{[]string{"--out", out, "--source", "general-log", short}, short + `:1: no MariaDB general log entry in 1 lines`},
		{[]string{"--out", out, quiet}, "no statements in " + quiet + ": the server must log them"},
		{[]string{"--out", out, "--user", "nobody", filepath.Join(captureLogs, "postgresql-1.csv")}, "the filters must keep some sessions (32 log entries skipped)"},
		{[]string{"--out", existing, short}, "--out " + existing + " exists: obsbench does not overwrite a capture"},
		{[]string{"--out", filepath.Join(tmp, "no", "dir.obsc"), short}, "--out: open " + filepath.Join(tmp, "no", "dir.obsc") + ": no such file or directory"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"capture"}, tt.args...), &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit code %d; want %d (stderr %q)", code, exitUsage, stderr.String())
			}
			if msg := stderr.String(); strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "obsbench: ") || !strings.Contains(msg, tt.want) {
				t.Errorf("stderr %q; want one line containing %q", msg, tt.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s left behind", out)
				os.Remove(out)
			}
		})
	}
	// The same German log, read in German: its statement and connection.
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"capture", "--out", out, "--log-language", "de_DE.UTF-8", german}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "captured 1 statements of 1 sessions (1 connects") || !strings.Contains(stderr.String(), "read as de_DE.UTF-8 (--log-language)") {
		t.Errorf("--log-language de_DE.UTF-8: exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
	os.Remove(out)
	if b, _ := os.ReadFile(existing); len(b) != 0 {
		t.Errorf("%s was overwritten", existing)
	}
}

// obsbench capture of real logs: a directory means its files of one
// format in name order (rotated files), the format and engine are found,
// and the summary says what was captured.
func TestCaptureCommand(t *testing.T) {
	dir := t.TempDir()
	// A PostgreSQL log directory as logging_collector leaves it: csvlog,
	// jsonlog, and the stderr log.
	for _, name := range []string{"postgresql-1.csv", "postgresql-2.csv", "postgresql-1.json", "postgresql-2.json"} {
		b, err := os.ReadFile(filepath.Join(captureLogs, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, strings.Replace(name, "postgresql-", "postgresql-2026-11-22_11441", 1)), b, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "postgresql-2026-11-22_114414.log"), []byte("not read\n"), 0o644)
	general, err := filepath.Abs(filepath.Join(captureLogs, "mariadb-general.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args           []string
		engine, source string
		summary        string
	}{
		{[]string{"--source", "jsonlog", dir, "--exclude-user", "obsbench_system,postgres"}, "postgres", "jsonlog",
			"captured 13 statements of 3 sessions (3 connects, 3 disconnects; 29 log entries skipped) from 0.0 MB of jsonlog"},
		{[]string{"--source", "csvlog", "--app", "web", dir}, "postgres", "csvlog",
			"captured 9 statements of 2 sessions (2 connects, 2 disconnects;"},
		{[]string{"--exclude-user", "root,obsbench_system", "--workload", "dss-mix", "--scale", "3", general}, "mariadb", "general-log",
			"captured 10 statements of 4 sessions (4 connects, 4 disconnects;"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "c.obsc")
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), append([]string{"capture", "--out", out}, tt.args...), &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tt.summary) || !strings.Contains(stdout.String(), out+", ") || strings.Count(stdout.String(), "\n") != 1 {
				t.Errorf("summary %q; want one line beginning %q and naming %s", stdout.String(), tt.summary, out)
			}
			r, c, err := capture.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if h := r.Header(); h.Engine != tt.engine || h.Source != tt.source {
				t.Errorf("header %+v; want engine %s, source %s", h, tt.engine, tt.source)
			}
			if h := r.Header(); tt.engine == "mariadb" && (h.Workload != "dss-mix" || h.Dataset != "dss" || h.Scale != 3) {
				t.Errorf("header %+v; want workload dss-mix on dataset dss at scale 3", h)
			}
			for err == nil {
				_, err = r.Next()
			}
			if !errors.Is(err, io.EOF) {
				t.Errorf("reading the capture back: %v", err)
			}
		})
	}
}

// obsbench capture of a real PostgreSQL's stderr log: --dsn reads the
// server's log_line_prefix, and the capture holds the session's
// statements (a multi-line one whole, a prepared one with its
// parameters) under it; the notes say which prefix read the log and what
// it cannot tell.
func TestCaptureStderrLog(t *testing.T) {
	ctx := context.Background()
	const prefix = "%m [%p] %c %u@%d/%a "
	pg := servertest.PostgresWith(t, map[string]string{
		"logging_collector": "on", "log_destination": "stderr", "log_line_prefix": "'" + prefix + "'",
		"log_connections": "on", "log_disconnections": "on",
	})
	conn, err := pgx.Connect(ctx, pg.DSN("postgres")+" application_name=shop-app")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SET log_statement = 'all'", "SELECT 1", "SELECT 2,\n       3"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, "SELECT $1::text", "a\nb"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	want := []string{"SELECT 1", "SELECT 2,\n       3", "SELECT $1::text [a\nb]"}
	logDir := filepath.Join(pg.DataDir(), "log")
	var stdout, stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "c.obsc")
	// The collector writes asynchronously: the disconnection is last.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		stdout.Reset()
		stderr.Reset()
		os.Remove(out)
		code := run(ctx, []string{"capture", "--out", out, "--dsn", pg.DSN("postgres"), "--app", "shop-app", logDir}, &stdout, &stderr)
		if code == exitOK && strings.Contains(stdout.String(), "1 disconnects") || time.Now().After(deadline) {
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			break
		}
	}
	if !strings.HasPrefix(stdout.String(), "captured 3 statements of 1 sessions (1 connects, 1 disconnects;") || !strings.Contains(stdout.String(), " of stderr in ") {
		t.Errorf("summary %q; want the 3 statements of 1 session, from stderr", stdout.String())
	}
	if !strings.Contains(stderr.String(), "obsbench: capture: the stderr log was read with log_line_prefix '"+prefix+"', the server's\n") {
		t.Errorf("stderr %q; want a note of the server's prefix", stderr.String())
	}
	r, c, err := capture.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if h := r.Header(); h.Source != "stderr" || h.LogLinePrefix != prefix {
		t.Errorf("header %+v; want source stderr, log_line_prefix %q", h, prefix)
	}
	var got []string
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == capture.Connect && rec.Database != "postgres" {
			t.Errorf("connect %+v; want database postgres", rec)
		}
		if rec.Kind == capture.Statement {
			s := rec.SQL
			for i, p := range rec.Params {
				if i == 0 {
					s += " ["
				}
				s += *p + "]"
			}
			got = append(got, s)
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("statements %q; want %q", got, want)
	}
}
