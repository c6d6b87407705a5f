package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/server/servertest"
)

// Without valgrind, --method instructions is refused before anything
// starts, with what to install.
func TestInstructionsNeedValgrind(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--method", "instructions", "--out", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "--method instructions: valgrind not found (apt-get install valgrind") {
		t.Errorf("exit %d, stderr %q; want exit %d naming valgrind", code, stderr.String(), exitUsage)
	}
}

// obsbench run --method instructions on a managed PostgreSQL: repeated
// runs of a condition count the same to 0.1% (the method's goal; the
// tests of the package run beside it), pg_stat_statements adds a
// significant cost, and the table says what the count does not see.
func TestInstructionsEndToEnd(t *testing.T) {
	servertest.SkipShort(t)
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--method", "instructions", "--observers", "pg-stat-statements",
		"--rounds", "3", "--count-statements", "400", "--count-warmup", "50", "--seed", "7", "--out", out}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "instructions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec app.Instructions
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Conditions) != 2 || len(rec.Runs) != 6 || rec.Statements != 400 {
		t.Fatalf("instructions.json: %d conditions, %d runs, %d statements; want 2, 6, 400", len(rec.Conditions), len(rec.Runs), rec.Statements)
	}
	for _, c := range rec.Conditions {
		if c.Backend <= 0 || c.Helpers <= 0 || c.BackendSpreadPct > 0.1 || c.Runs != 3 {
			t.Errorf("%s: %+v; want counts that repeat to 0.1%% over 3 runs", c.Name, c)
		}
	}
	pgss := rec.Conditions[1].BackendChange
	if pgss == nil || !pgss.Signif || pgss.Pct <= 0 {
		t.Errorf("pg-stat-statements backend change %+v; want a significant rise", pgss)
	}
	text := stdout.String()
	for _, want := range []string{"instructions per statement: credit-top1 on ", "backend instr/stmt", "pg-stat-statements", "scope: user-space instructions", "not counted: the kernel"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

// The same on a managed MariaDB, whose sessions are threads: each run
// counts two server lifetimes, and what the sessions cost is what ran
// inside do_command. The baseline repeats to 0.04-0.18% on a quiet machine
// and spread 0.42% once under CI beside other load (runs 20% slower, one
// more system call per statement), so the test allows 1%, half the general
// log's cost; the general log to a file adds a significant cost, but
// repeats less well (about 0.4%): it
// writes the time when the second changes, and under the counter a
// statement takes tens of times longer, so how many it writes depends on
// the run's speed.
func TestInstructionsEndToEndMariaDB(t *testing.T) {
	servertest.SkipShort(t)
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--engine", "mariadb", "--method", "instructions", "--observers", "general-log-file",
		"--rounds", "3", "--count-statements", "300", "--count-warmup", "30", "--seed", "7", "--out", out}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "instructions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec app.Instructions
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Conditions) != 2 || len(rec.Runs) != 6 || rec.Engine != "mariadb" || !strings.Contains(rec.Scope, "do_command") {
		t.Fatalf("instructions.json: %d conditions, %d runs, engine %s, scope %q; want 2, 6, mariadb, the threads' scope",
			len(rec.Conditions), len(rec.Runs), rec.Engine, rec.Scope)
	}
	for _, c := range rec.Conditions {
		if c.Backend <= 0 || c.Helpers <= 0 || c.Runs != 3 {
			t.Errorf("%s: %+v; want counts over 3 runs", c.Name, c)
		}
	}
	// MariaDB repeats less well than PostgreSQL: table opening goes
	// through lock-free hashes its other threads touch too, and a loaded
	// machine makes more of it (see above).
	if base := rec.Conditions[0]; base.BackendSpreadPct > 1 {
		t.Errorf("baseline: %+v; want runs that repeat to 1%%", base)
	}
	if ch := rec.Conditions[1].BackendChange; ch == nil || !ch.Signif || ch.Pct <= 0 {
		t.Errorf("general-log-file session change %+v; want a significant rise", ch)
	}
	text := stdout.String()
	for _, want := range []string{"instructions per statement: credit-top1 on ", "session instr/stmt", "other threads instr/run", "general-log-file", "inside do_command"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}
