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

	"github.com/obsbench/obsbench/internal/capture"
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
		{[]string{"--out", out, "--source", "stderr", short}, `log source "stderr": want one of csvlog, jsonlog (PostgreSQL), general-log (MariaDB), or auto`},
		{[]string{"--out", out, "--engine", "oracle", short}, `--engine "oracle": want postgres or mariadb`},
		{[]string{"--out", out, "--engine", "mariadb", "--source", "csvlog", short}, "--engine mariadb and --source csvlog disagree: csvlog is a postgres log"},
		{[]string{"--out", out, "--workload", "nope", short}, `workload "nope"`},
		{[]string{"--out", out, "--scale", "3", short}, "--scale 3 needs --dataset or --workload"},
		{[]string{"--out", out, "--workload", "credit-top1", "--scale", "3", short}, "--scale: dataset credit has one size"},
		{[]string{"--out", out, "--dataset", "dss", "--scale", "0", short}, "--scale: scale 0: want 1 or more"},
		{[]string{"--out", out, filepath.Join(tmp, "none.csv")}, "log " + filepath.Join(tmp, "none.csv") + ": no such file or directory"},
		{[]string{"--out", out, empty}, "log directory " + empty + " has no *.csv, *.json or *.log files"},
		{[]string{"--out", out, "--engine", "postgres", empty}, "log directory " + empty + " has no *.csv or *.json files"},
		{[]string{"--out", out, both}, "log directory " + both + " holds csvlog (*.csv) and jsonlog (*.json) files: give --source csvlog or --source jsonlog"},
		{[]string{"--out", out, stderrLog}, stderrLog + `:1: "2026-11-22 10:00:00.000 UTC [123] LOG:  statement: SELECT 1" is not a log obsbench reads`},
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
