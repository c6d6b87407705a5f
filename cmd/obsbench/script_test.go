package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// The example scripts of the README: two weighted custom scripts with
// \set, \if, \gset and a --define.
var (
	transferScript = filepath.Join("..", "..", "examples", "pgbench", "transfer.sql")
	reportScript   = filepath.Join("..", "..", "examples", "pgbench", "report.sql")
)

// runScripts runs obsbench run with args on a managed server, by rounds
// under observer, and returns the summary.
func runScripts(t *testing.T, observer string, args ...string) (result.Summary, string) {
	t.Helper()
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	var stdout, stderr bytes.Buffer
	args = append([]string{"run", "--method", "rounds", "--rounds", "2", "--duration", "2s", "--warmup", "500ms",
		"--clients", "2", "--observers", observer, "--seed", "11", "--out", out}, args...)
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	s, err := readSummary(t, filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	noServersLeft(t, tmp)
	return s, stdout.String()
}

// checkScriptRun checks what every run of user scripts must show: the
// scripts recorded with their checksums and weights, statements run in
// both conditions, and every statement the workload sent recorded by
// the observer (the tag each carries is what is counted).
func checkScriptRun(t *testing.T, s result.Summary, observer string, weights map[string]int) {
	t.Helper()
	if s.Environment == nil || len(s.Environment.Scripts) != len(weights) {
		t.Fatalf("environment scripts = %+v; want %d scripts", s.Environment, len(weights))
	}
	for _, sc := range s.Environment.Scripts {
		w, ok := weights[filepath.Base(sc.Path)]
		if !ok || sc.Weight != w || len(sc.SHA256) != 64 {
			t.Errorf("script %+v; want one of %v with its weight and a SHA-256", sc, weights)
		}
		if text, err := os.ReadFile(sc.Path); err == nil && checksumOf(text) != sc.SHA256 {
			t.Errorf("%s: sha256 %s is not the file's", sc.Path, sc.SHA256)
		}
	}
	if len(s.Conditions) != 2 {
		t.Fatalf("%d conditions; want baseline and %s", len(s.Conditions), observer)
	}
	for _, c := range s.Conditions {
		if c.Throughput.Median <= 0 {
			t.Errorf("%s: no statements ran", c.Name)
		}
		// Every script's statements have their own latency, named by
		// file and line; their counts add up to the statements measured.
		var n int64
		files := map[string]bool{}
		for _, st := range c.Statements {
			n += st.Count
			if st.Count > 0 && st.MeanMS <= 0 {
				t.Errorf("%s: statement %q ran %d times in %v ms", c.Name, st.Statement, st.Count, st.MeanMS)
			}
			where, _, _ := strings.Cut(st.Statement, " ") // file:line
			files[where[:strings.LastIndexByte(where, ':')]] = true
		}
		measured := c.Throughput.Median * c.RunSeconds * float64(len(c.Throughput.Runs))
		if float64(n) < 0.5*measured || float64(n) > 1.5*measured {
			t.Errorf("%s: per-statement counts add up to %d; want about the %.0f statements measured", c.Name, n, measured)
		}
		for name := range weights {
			if !files[name] {
				t.Errorf("%s: no statement of %s in %+v", c.Name, name, c.Statements)
			}
		}
	}
	ev := s.Conditions[1].Events
	if ev == nil || ev.Executed == 0 || ev.Recorded != ev.Executed {
		t.Errorf("%s events = %+v; want recorded = executed > 0", observer, ev)
	}
}

// The evidence of the pgbench workload on PostgreSQL: pgbench's own
// tpcb-like beside two custom scripts, by weight, with events recorded =
// executed for the statement log.
func TestPgbenchScriptsEndToEnd(t *testing.T) {
	needServers(t)
	s, stdout := runScripts(t, "log-statements-file", "--workload", "pgbench", "--script", "tpcb-like@1",
		"--script", transferScript+"@2", "--script", reportScript+"@1", "--define", "lim=1000", "--scale", "2")
	checkScriptRun(t, s, "log-statements-file", map[string]int{"builtin:tpcb-like": 1, "transfer.sql": 2, "report.sql": 1})
	if s.Workload != "pgbench" || !strings.Contains(stdout, "workload pgbench") || !strings.Contains(stdout, "latency per statement") {
		t.Errorf("workload %q; stdout:\n%s", s.Workload, stdout)
	}
}

// The same custom scripts on MariaDB, with pgbench's tpcb-like: the
// meta-commands are the client's, the placeholders MariaDB's, and the
// built-in's END is MariaDB's COMMIT.
func TestPgbenchScriptsMariaDB(t *testing.T) {
	needServers(t)
	s, _ := runScripts(t, "general-log-file", "--engine", "mariadb", "--workload", "pgbench",
		"--script", transferScript+"@3", "--script", reportScript+"@1", "--script", "tpcb-like@1", "--define", "lim=1000")
	checkScriptRun(t, s, "general-log-file", map[string]int{"transfer.sql": 3, "report.sql": 1, "builtin:tpcb-like": 1})
}

// A plain SQL file, its statements in order in a loop, over a dataset.
func TestSQLFileEndToEnd(t *testing.T) {
	needServers(t)
	file := filepath.Join(privateTemp(t), "queries.sql")
	os.WriteFile(file, []byte("-- two queries of mine\nSELECT count(*) FROM pgbench_branches;\n"+
		"SELECT abalance FROM pgbench_accounts\n WHERE aid = 42;\n"), 0o644)
	s, _ := runScripts(t, "log-statements-file", "--workload", "sql", "--script", file, "--dataset", "pgbench")
	checkScriptRun(t, s, "log-statements-file", map[string]int{"queries.sql": 1})
}

func checksumOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// --query-mode: a script that pgbench runs in its default mode (variables
// added to each other, which the server cannot type as parameters) runs
// by default here too, in simple mode, named in summary.json and the
// report. In prepared mode it is refused with exit 2 before the first run,
// on one line naming the mode and suggesting simple.
func TestQueryModes(t *testing.T) {
	needServers(t)
	file := filepath.Join(t.TempDir(), "sum.sql")
	if err := os.WriteFile(file, []byte("\\set a random(1, 100)\n\\set b 7\nSELECT :a + :b;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(file), 0o755)

	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	var so, se bytes.Buffer
	code := run(context.Background(), []string{"run", "--workload", "pgbench", "--script", file, "--query-mode", "prepared",
		"--rounds", "2", "--duration", "2s", "--observers", "log-statements-file", "--out", out}, &so, &se)
	msg := strings.TrimSpace(se.String())
	last := msg[strings.LastIndexByte(msg, '\n')+1:] // progress lines come before
	if code != exitUsage || !strings.HasPrefix(last, "obsbench: "+file+":3: in --query-mode prepared") ||
		!strings.Contains(last, "--query-mode simple") || !strings.Contains(last, "operator is not unique") {
		t.Errorf("exit %d; want %d and one line naming the file and line, the mode and simple:\n%s", code, exitUsage, msg)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); !os.IsNotExist(err) {
		t.Errorf("summary.json written (%v): the experiment ran", err)
	}
	noServersLeft(t, tmp)

	s, stdout := runScripts(t, "log-statements-file", "--workload", "pgbench", "--script", file)
	checkScriptRun(t, s, "log-statements-file", map[string]int{"sum.sql": 1})
	if s.Environment.QueryMode != "simple" || !strings.Contains(stdout, "workload pgbench (query mode simple)") {
		t.Errorf("query mode %q; want simple in summary.json and the report:\n%s", s.Environment.QueryMode, stdout)
	}

	// --dry-run says what the mode sends.
	dsn, _ := externalServer(t)
	so.Reset()
	se.Reset()
	if code := run(context.Background(), []string{"run", "--dsn", dsn, "--dry-run", "--workload", "pgbench", "--script", file,
		"--query-mode", "extended", "--observers", "log-statements-file"}, &so, &se); code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, se.String())
	}
	if !strings.Contains(so.String(), "query mode extended: each statement sent with its variables as parameters") {
		t.Errorf("the dry run does not say the query mode:\n%s", so.String())
	}
}
