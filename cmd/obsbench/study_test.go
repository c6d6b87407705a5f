package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

// Study 4 end to end, short: a synchronous standby makes the autocommit
// baseline wait in IPC:SyncRep, and synchronous_commit=local does not;
// batching commits far less often.
func TestStudySyncCommit(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	stdout, _ := runOK(t, "study", "sync-commit", "--observers", "sync-commit-local", "--rounds", "2",
		"--duration", "1s", "--warmup", "300ms", "--batch", "1000", "--seed", "4", "--out", out)
	auto, err := readSummary(t, filepath.Join(out, "inserts-autocommit", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	batched, err := readSummary(t, filepath.Join(out, "inserts-batched", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if auto.Environment == nil || auto.Environment.Standby != "sync" || auto.Environment.Settings["synchronous_standby_names"] == "" {
		t.Errorf("environment %+v; want a synchronous standby recorded", auto.Environment)
	}
	share := func(c result.ConditionSummary) float64 {
		if c.Waits == nil {
			return -1
		}
		for _, w := range c.Waits.Top {
			if w.Wait == "IPC:SyncRep" {
				return w.Pct
			}
		}
		return 0
	}
	by := map[string]result.ConditionSummary{}
	for _, c := range auto.Conditions {
		by[c.Name] = c
	}
	if s := share(by["baseline"]); s <= 0 {
		t.Errorf("autocommit baseline: IPC:SyncRep %.1f%% of samples; want some (every commit waits for the standby)", s)
	}
	if s := share(by["sync-commit-local"]); s != 0 {
		t.Errorf("synchronous_commit=local: IPC:SyncRep %.1f%% of samples (-1: no sample at all); want none", s)
		logWaitRuns(t, filepath.Join(out, "inserts-autocommit", "results.jsonl"))
	}
	perRow := func(s result.Summary) float64 {
		c := s.Conditions[0]
		return c.Counters["wal_sync"] / c.Throughput.Median
	}
	// Each autocommit insert flushes the WAL, but on a loaded machine
	// commits that wait together share a flush (group commit), so the
	// autocommit bound is loose; the batched run's tenth of it is what
	// the study shows.
	if a, b := perRow(auto), perRow(batched); a < 0.2 || b > a/10 {
		t.Errorf("WAL flushes per insert: autocommit %.3f, batched %.4f; want most of one and under a tenth of it", a, b)
	}
	wantPrinted(t, stdout, "What does a synchronous replica cost a commit", "inserts-autocommit", "inserts-batched",
		"IPC:SyncRep %", "flush lag ms", "sync-commit-local", "replica asynchronous")
	noServersLeft(t, tmp)
}

// logWaitRuns says, of each run in path, what the wait sampler saw: a
// condition without a wait profile had no run with a sample.
func logWaitRuns(t *testing.T, path string) {
	runs, err := result.ReadRuns(path)
	if err != nil {
		t.Log(err)
		return
	}
	for _, r := range runs {
		var ticks, samples int64
		if r.Waits != nil {
			ticks, samples = r.Waits.Ticks, r.Waits.Total()
		}
		t.Logf("run %d %s (%s): error %q, waits %v: %d ticks, %d samples; off %v; %d statements",
			r.Round, r.Condition, r.Method, r.Error, r.Waits != nil, ticks, samples, r.WaitsOff != nil, r.Driver.Measured)
	}
}

// Study 5 end to end, short: the reliability check finds one record per
// statement in the rotated trail, and each workload's sweep covers every
// session count with a threshold verdict.
func TestStudyAudit(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	stdout, _ := runOK(t, "study", "audit", "--reliability-duration", "4s", "--sessions", "1,2",
		"--method", "rounds", "--rounds", "2", "--duration", "1s", "--warmup", "0s", "--threshold", "50", "--seed", "5", "--out", out)
	wantPrinted(t, stdout, "Is the audit trail complete", "reliability: pgaudit-rotated, 4 sessions",
		"COMPLETE: one record per statement", "records/s", "per day", "concurrency sweep: thousand-point", "concurrency sweep: thousand-range",
		"ms/unit", "unit: a thousand-query", "threshold: pgaudit-rotated", "not reproduced: 500 rollover files")
	for _, wl := range []string{"thousand-point", "thousand-range"} {
		rec, ok, err := report.ReadSweep(filepath.Join(out, wl))
		points := rec.Points
		if err != nil || !ok || rec.PerUnit != 1000 || len(points) != 2 || points[0].Sessions != 1 || points[1].Sessions != 2 {
			t.Fatalf("%s sweep = %+v, %v; want session counts 1 and 2, per thousand", wl, rec, err)
		}
		if points[1].Summary.Clients != 2 {
			t.Errorf("%s: the 2-session experiment ran %d clients", wl, points[1].Summary.Clients)
		}
		for _, p := range points { // a sweep's summaries follow the schema
			if _, err := readSummary(t, filepath.Join(out, wl, "sessions-"+strconv.Itoa(p.Sessions), "summary.json")); err != nil {
				t.Error(err)
			}
		}
	}
	noServersLeft(t, tmp)
}

// A deliberately lossy audit sink fails the reliability check: the study
// says how many statements have no record and exits with 1.
func TestStudyAuditLossyFails(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"study", "audit", "--observers", "pgaudit-stream-lossy", "--reliability-duration", "3s",
		"--workloads", "thousand-point", "--sessions", "1", "--method", "rounds", "--rounds", "2", "--duration", "1s", "--warmup", "0s",
		"--seed", "8", "--out", out}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d; want 1 (the trail is incomplete)\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	wantPrinted(t, stdout.String(), "reliability: pgaudit-stream-lossy", "INCOMPLETE:", "statements have no record", "threshold: pgaudit-stream-lossy")
	if !strings.Contains(stderr.String(), "the audit trail holds") {
		t.Errorf("stderr does not say why it failed:\n%s", stderr.String())
	}
	noServersLeft(t, tmp)
}

// Study 2 end to end: the built-in capture (dss-mix with every statement
// logged) holds exactly the statements the capture run executed, and each
// run replays it once, so every condition's run executes the same number
// of statements; the study's table and 5 s series follow.
func TestStudyReplay(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	stdout, stderr := runOK(t, "study", "replay", "--capture-duration", "1s", "--clients", "2",
		"--observers", "log-statements-file,log-statements-stream", "--rounds", "2", "--seed", "9", "--out", out)
	wantPrinted(t, stdout, "What does each observer cost a replayed workload", "replay s", "statements/s every 5 s",
		"log-statements-stream", "not reproduced: Profiler on a remote machine")
	if !strings.Contains(stderr, "capture: ") {
		t.Errorf("stderr lacks the capture's summary:\n%s", stderr)
	}
	runs, err := result.ReadRuns(filepath.Join(out, "replay", "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	executed := map[int64]int{}
	for _, r := range runs {
		if r.Error != "" {
			t.Errorf("%s round %d failed: %s", r.Condition, r.Round, r.Error)
		}
		executed[r.Driver.Executed]++
	}
	if len(runs) != 6 || len(executed) != 1 {
		t.Errorf("%d runs executing %v statements; want 6 runs, each the whole capture once", len(runs), executed)
	}
	noServersLeft(t, tmp)
}

// Study 3's condensed table: a target per line, a variant per column, and
// the filtered-out round.
func TestStudyTargets(t *testing.T) {
	needServers(t)
	asWorkers(t) // a duet drives each twin from a worker
	tmp := privateTemp(t)
	stdout, _ := runOK(t, "study", "targets", "--observers", "log-filtered-out", "--shrink", "10",
		"--rounds", "2", "--clients", "1", "--seed", "10", "--out", filepath.Join(tmp, "out"),
		"--count", "--count-rounds", "2", "--count-statements", "20", "--count-shrink", "50", "--count-sessions", "2")
	wantPrinted(t, stdout, "What does each kind of target cost", "duet of twin servers, 2 phases of fixed work", "target  ", "as is", "filtered out", "statement log, file", "filtered-out round",
		"not run", "not reproduced: lock acquired/released events",
		// The counted column, here two sessions at once on a real server.
		"counted: change in the server's instructions per execution", "20 statements after 0 in each session, 2 run(s) each", "instr/exec Δ% [CI]", "spread ")
}

// Study 3's counted part alone (--method instructions): the study's
// conditions and count on a real server under valgrind, its table of
// counted changes, no timed column; with --count-per-query, each query's
// change too, from the statements' own parts of the count.
func TestStudyTargetsCountedOnly(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	stdout, _ := runOK(t, "study", "targets", "--method", "instructions", "--observers", "log-filtered-out",
		"--rounds", "2", "--count-statements", "20", "--count-shrink", "50", "--count-per-query", "--seed", "10", "--out", out)
	wantPrinted(t, stdout, "instructions per statement: dss-mix", "What does each kind of target cost", "per query: the session's instructions per execution", "q01 ",
		"counted: change in the server's instructions per execution", "20 statements after 0, 2 run(s) each",
		"statement log, file  ", "log-filtered-out", "other processes instr/run Δ% [CI]", "not counted", "spread ")
	if strings.Contains(stdout, "overhead % [95% CI] by target") {
		t.Errorf("a counted study prints a timed table:\n%s", stdout)
	}
	rec := readInstructions(t, out)
	if rec.Rounds != 2 || rec.Statements != 20 || rec.Warmup != 0 || len(rec.Conditions) != 2 {
		t.Fatalf("instructions.json: %d rounds of %d after %d, %d conditions; want 2 of 20 after 0 (the study's warm-up), baseline and log-filtered-out", rec.Rounds, rec.Statements, rec.Warmup, len(rec.Conditions))
	}
	// Each run's queries hold its counted statements but the session's
	// last, and add up to no more than the session's count of them.
	for _, r := range rec.Runs {
		execs, sum := 0, 0.0
		for _, q := range r.Queries {
			execs += q.Executions
			sum += q.PerExec * float64(q.Executions)
		}
		if execs != 19 || sum <= 0 || sum > r.Backend*20 {
			t.Errorf("%s round %d: %d executions counted apart, %.0f instructions (the session's 20 statements: %.0f); want 19", r.Condition, r.Round, execs, sum, r.Backend*20)
		}
		// Split at each statement, the backend's system calls hold the
		// counter's own writes: not shown as the statements'.
		if r.Syscalls != -1 {
			t.Errorf("%s round %d: backend system calls %.2f per statement; want unknown (-1)", r.Condition, r.Round, r.Syscalls)
		}
	}
	if q := rec.Conditions[1].Queries; len(q) == 0 || q[0].Change == nil {
		t.Errorf("log-filtered-out's queries %+v: want each with its change against the baseline", q)
	}
}

// Study 2 on MariaDB: the built-in capture is read from the real general
// log (the capture step fails unless it holds exactly the statements the
// run executed), and the replays record as many events as they execute.
func TestStudyReplayMariaDB(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	runOK(t, "study", "replay", "--engine", "mariadb", "--capture-duration", "1s", "--clients", "2",
		"--observers", "general-log-file", "--rounds", "2", "--seed", "11", "--out", out)
	sum, err := readSummary(t, filepath.Join(out, "replay", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.Conditions {
		if c.Name == "general-log-file" && (c.Events == nil || c.Events.Recorded != c.Events.Executed || c.Events.Executed == 0) {
			t.Errorf("general log of the replays: %+v; want one record per statement", c.Events)
		}
		if c.StatementErrors != 0 {
			t.Errorf("%s: %d statement errors: %q", c.Name, c.StatementErrors, c.ErrorSamples)
		}
	}
	noServersLeft(t, tmp)
}
