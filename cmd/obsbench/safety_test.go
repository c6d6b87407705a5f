package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/result"
)

// TestMain lets a test run obsbench as a process of its own (to kill it):
// the test binary runs main, in testEnv, when OBSBENCH_TEST_MAIN is set.
func TestMain(m *testing.M) {
	if os.Getenv("OBSBENCH_TEST_MAIN") == "1" {
		os.Exit(runMain(testEnv(os.Stdout, os.Stderr)))
	}
	os.Exit(m.Run())
}

// testEnv is main's environment for a test: runs count instructions
// after their timed runs only where the test asks (--count), and where
// the test has set OBSBENCH_TEST_MAIN (asWorkers) local workers are this
// test binary run as obsbench.
func testEnv(stdout, stderr io.Writer) env {
	e := newEnv(stdout, stderr, os.Getenv)
	e.countUnasked = false
	if os.Getenv("OBSBENCH_TEST_MAIN") == "1" {
		e.WorkerCommand = []string{os.Args[0], "worker"}
	}
	return e
}

// run is the whole CLI in a test's environment (testEnv).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return testEnv(stdout, stderr).run(ctx, args)
}

// secret is the password in the tests' DSNs (of a superuser the tests
// create on their servers); it must appear nowhere.
const secret = "s3cret-pw-do-not-print"

// externalServer starts a server the way a user's would be: obsbench does
// not manage it, the logging collector is already on, and the dataset goes
// into a database of its own.
func externalServer(t *testing.T) (dsn string, settings func() map[string]string) {
	t.Helper()
	pg := servertest.PostgresWith(t, map[string]string{"logging_collector": "on"})
	ctx := context.Background()
	externalAdmin(t, pg)
	dsn = fmt.Sprintf("host=%s port=%d user=ext_admin dbname=ext sslmode=disable password=%s", pg.SocketDir(), pg.Port(), secret)
	srv := postgres.New(dsn, postgres.Options{})
	return dsn, func() map[string]string {
		s, err := srv.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// externalAdmin creates database ext on pg and ext_admin, a superuser
// with the password secret: what a user's own server gives obsbench.
func externalAdmin(t *testing.T, pg *postgres.Instance) {
	t.Helper()
	ctx := context.Background()
	if err := postgres.CreateDatabase(ctx, pg.DSN("ext")); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.DSN("ext"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE ROLE ext_admin SUPERUSER LOGIN PASSWORD '"+secret+"'"); err != nil {
		t.Fatal(err)
	}
}

// startObsbench runs obsbench in a process of its own.
func startObsbench(t *testing.T, stateDir string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "OBSBENCH_TEST_MAIN=1", "OBSBENCH_STATE_DIR="+stateDir)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &out
}

// waitPending waits until a journal in dir records a change not undone:
// an observer is in force on the server.
func waitPending(t *testing.T, dir string) string {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		paths, _ := journal.List(dir)
		for _, p := range paths {
			if _, pending, err := journal.Read(p); err == nil && len(pending) >= 2 {
				return p
			}
		}
	}
	t.Fatal("no journaled change within 90s")
	return ""
}

// killWhenChanged waits until a journaled change has taken effect on the
// server (the journal comes first, the change right after) and kills the
// obsbench process with SIGKILL. It returns the journal.
func killWhenChanged(t *testing.T, state string, cmd *exec.Cmd, out *lockedBuffer, before map[string]string, settings func() map[string]string) string {
	t.Helper()
	path := waitPending(t, state)
	for deadline := time.Now().Add(30 * time.Second); len(diffSettings(before, settings())) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("journaled changes never took effect\n%s", out)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if d := diffSettings(before, settings()); len(d) == 0 {
		t.Fatalf("settings unchanged after the kill: the observer was reverted before the kill landed; rerun\n%s", out)
	}
	return path
}

func diffSettings(before, after map[string]string) []string {
	var d []string
	for k, v := range before {
		if after[k] != v {
			d = append(d, k+": "+v+" -> "+after[k])
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			d = append(d, k+" new: "+v)
		}
	}
	sort.Strings(d)
	return d
}

func runArgs(dsn, out string) []string {
	return []string{"run", "--dsn", dsn, "--allow-changes", "--observers", "log-statements-file,log-duration-csv",
		"--method", "rounds", "--rounds", "3", "--duration", "3s", "--warmup", "300ms", "--clients", "2", "--out", out}
}

// obsbench killed with SIGKILL while observers are applied to an external
// server: `obsbench restore` undoes every change from the journal, the
// server's whole settings list is as before, and a second restore finds
// nothing to do.
func TestKillThenRestore(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	dsn, settings := externalServer(t)
	before := settings()

	cmd, out := startObsbench(t, state, runArgs(dsn, filepath.Join(tmp, "out"))...)
	path := killWhenChanged(t, state, cmd, out, before, settings)

	// The journal keeps the DSN without its password: restore takes it
	// from the environment, as libpq does.
	t.Setenv("PGPASSWORD", secret)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"restore"}, &stdout, &stderr); code != 0 {
		t.Fatalf("restore: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "undid ") {
		t.Errorf("restore said %q; want the changes it undid", stdout.String())
	}
	if d := diffSettings(before, settings()); len(d) > 0 {
		t.Errorf("after restore the settings differ from before: %v", d)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("journal %s still there after a complete restore", path)
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"restore"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "nothing to restore") {
		t.Errorf("second restore: exit %d, %q; want nothing to restore", code, stdout.String())
	}
	assertNoSecret(t, tmp, out.String()+stdout.String()+stderr.String())
}

// SIGINT (Ctrl-C) or SIGTERM in the middle of a run: obsbench reverts by
// itself, exits with 130, removes its journal, and the settings are as
// before without any restore.
func TestInterruptRevertsExternal(t *testing.T) {
	needServers(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := privateTemp(t)
			state := filepath.Join(tmp, "state")
			dsn, settings := externalServer(t)
			before := settings()
			cmd, out := startObsbench(t, state, runArgs(dsn, filepath.Join(tmp, "out"))...)
			waitPending(t, state)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted {
				t.Errorf("exit %v; want %d\n%s", err, exitInterrupted, out)
			}
			if d := diffSettings(before, settings()); len(d) > 0 {
				t.Errorf("after %v the settings differ from before: %v\n%s", sig, d, out)
			}
			if left, _ := journal.List(state); len(left) > 0 {
				t.Errorf("journals left after a clean revert: %v", left)
			}
			assertNoSecret(t, tmp, out.String())
		})
	}
}

// assertNoSecret fails if the DSN's password is in any file under dir or
// in the output.
func assertNoSecret(t *testing.T, dir, output string) {
	t.Helper()
	assertNoSecrets(t, []string{secret}, output, nil, dir)
}

// --dry-run prints the changes a run would make and makes none: no
// setting, no schema, no journal, no results directory.
func TestDryRunChangesNothing(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	dsn, settings := externalServer(t)
	before := settings()
	out := filepath.Join(tmp, "out")
	// --method auto: the plan of an observer applied whole (on --dsn alone
	// the default splits what splits: TestSplitExternal).
	stdout, stderr := runOK(t, "run", "--dsn", dsn, "--method", "auto", "--dry-run", "--observers", "log-statements-file,log-duration-csv,pg-stat-statements", "--out", out)
	for _, want := range []string{
		"CREATE SCHEMA \"obsbench\"", "COPY \"obsbench\".\"member\" FROM STDIN",
		"observer log-statements-file, before each of its runs:\n  ALTER SYSTEM SET log_statement = 'all'\n  SELECT pg_reload_conf()",
		"ALTER SYSTEM SET log_destination = 'csvlog'",
		"observer pg-stat-statements: cannot be applied to this server",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, stdout)
		}
	}
	if d := diffSettings(before, settings()); len(d) > 0 {
		t.Errorf("settings changed by a dry run: %v", d)
	}
	srv := postgres.New(dsn, postgres.Options{Schema: engine.Home})
	if err := srv.Verify(context.Background(), mustDataset(t)); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Verify after a dry run = %v; want the dataset's tables missing", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a dry run created %s", out)
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("a dry run wrote journals %v", left)
	}
	assertNoSecret(t, tmp, stdout+stderr)
}

func mustDataset(t *testing.T) dataset.Dataset {
	d, err := dataset.Lookup("credit")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// An experiment killed after k of n runs resumes with --resume: finished
// runs are kept, a line cut short by the kill is dropped with a warning,
// and the experiment ends with exactly n runs, each once.
func TestResumeAfterKill(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	cmd, log := startObsbench(t, filepath.Join(tmp, "state"), "run", "--method", "rounds", "--rounds", "3", "--duration", "1s", "--warmup", "200ms",
		"--clients", "2", "--observers", "log-statements-file", "--out", out)
	results := filepath.Join(out, "results.jsonl")
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(results); bytes.Count(b, []byte("\n")) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 2 runs within 90s:\n%s", log)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// A crash in the middle of writing a line leaves it cut short.
	f, _ := os.OpenFile(results, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"version":1,"seq":99,"condi`)
	f.Close()

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "--resume", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "last line cut short") || !strings.Contains(stderr.String(), "run(s) finished, the rest run now") {
		t.Errorf("resume did not say what it kept and dropped:\n%s", stderr.String())
	}
	runs, err := result.ReadRuns(results)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, r := range runs {
		if seen[r.Seq] || r.Seq < 1 || r.Seq > 6 || r.Error != "" {
			t.Errorf("run seq %d (%s) error %q: want each of 1..6 once, finished", r.Seq, r.Condition, r.Error)
		}
		seen[r.Seq] = true
	}
	if len(runs) != 6 {
		t.Errorf("%d runs after resume; want exactly 6", len(runs))
	}
	if _, err := readSummary(t, filepath.Join(out, "summary.json")); err != nil {
		t.Errorf("summary after resume: %v", err)
	}
	if code := run(context.Background(), []string{"run", "--resume", out, "--rounds", "4"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("--resume with other flags: exit %d; want %d", code, exitUsage)
	}
}

// The server drops the driver's connections in the middle of a run: the
// run is recorded as failed with the server's reason, the observer is
// reverted, and the experiment goes on (or, with --on-failure stop, stops
// cleanly).
func TestConnectionDroppedDuringRun(t *testing.T) {
	needServers(t)
	for _, mode := range []string{"continue", "stop"} {
		t.Run(mode, func(t *testing.T) {
			tmp := privateTemp(t)
			t.Setenv("OBSBENCH_STATE_DIR", filepath.Join(tmp, "state"))
			dsn, settings := externalServer(t)
			before := settings()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			killed := make(chan int, 1)
			go func() {
				conn, err := pgx.Connect(ctx, dsn)
				if err != nil {
					return
				}
				defer conn.Close(context.Background())
				for ctx.Err() == nil {
					var n int
					conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
						WHERE application_name = 'obsbench-driver'`).Scan(&n)
					if n > 0 {
						killed <- n
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
			out := filepath.Join(tmp, "out")
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"run", "--dsn", dsn, "--allow-changes", "--observers", "log-statements-file",
				"--method", "rounds", "--rounds", "2", "--duration", "2s", "--warmup", "300ms", "--clients", "2",
				"--seed", "5", "--on-failure", mode, "--out", out}, &stdout, &stderr)
			select {
			case <-killed:
			default:
				t.Fatal("no driver connection was terminated")
			}
			runs, _ := result.ReadRuns(filepath.Join(out, "results.jsonl"))
			failed := 0
			for _, r := range runs {
				if r.Error != "" {
					failed++
					// The server's FATAL message; under load the kernel may
					// report the closed socket before it can be read.
					if !strings.Contains(r.Error, "terminat") && !strings.Contains(r.Error, "broken pipe") && !strings.Contains(r.Error, "connection reset") {
						t.Errorf("failed run's reason %q; want the server's (terminating connection)", r.Error)
					}
				}
			}
			switch mode {
			case "continue":
				if code != 0 || failed != 1 || len(runs) != 4 {
					t.Errorf("exit %d, %d runs, %d failed; want 0, 4, 1\n%s", code, len(runs), failed, stderr.String())
				}
			case "stop":
				if code != exitFailure || failed != 1 || len(runs) == 4 || !strings.Contains(stderr.String(), "stopping, as --on-failure stop asks") {
					t.Errorf("exit %d, %d runs, %d failed; want %d and a stop after the failed run\n%s", code, len(runs), failed, exitFailure, stderr.String())
				}
			}
			if d := diffSettings(before, settings()); len(d) > 0 {
				t.Errorf("settings differ after the experiment: %v", d)
			}
		})
	}
}

// The disk for logs fills up: PostgreSQL's logging collector complains and
// drops lines while the workload goes on. The run is recorded as failed
// with the server's complaint, and the experiment goes on.
func TestLogDiskFullFailsTheRun(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	file := filepath.Join(tmp, "full.yaml")
	os.WriteFile(file, []byte(`- name: log-to-full-disk
  engine: postgres
  description: every statement logged into a log directory that is full after 64 KiB
  sink: {kind: slow-dir, write_delay: 1us, capacity: 64KiB}
  settings:
    logging_collector: "on"
    log_destination: stderr
    log_statement: all
    log_directory: "{{sink_dir}}"
  events: {source: server-log, match: 'statement: .*{{tag}}'}
`), 0o644)
	out := filepath.Join(tmp, "out")
	stdout, _ := runOK(t, "run", "--observer-file", file, "--observers", "log-to-full-disk", "--method", "rounds",
		"--rounds", "2", "--duration", "1s", "--warmup", "200ms", "--clients", "2", "--seed", "1", "--out", out)
	runs := readRuns(t, out)
	for _, r := range runs {
		full := r.Condition == "log-to-full-disk"
		failed := strings.Contains(r.Error, "log lines were lost") && strings.Contains(r.Error, "no space left on device")
		if full != failed {
			t.Errorf("run %d (%s): error %q; want the full-disk runs, and only them, failed with the server's complaint", r.Seq, r.Condition, r.Error)
		}
	}
	if !strings.Contains(stdout, "log-to-full-disk: 2 of its runs failed") {
		t.Errorf("report does not show the failed runs:\n%s", stdout)
	}
}
