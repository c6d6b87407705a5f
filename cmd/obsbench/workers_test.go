package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/result"
)

// asWorkers makes the local launcher start this test binary as obsbench
// (testEnv's worker command; TestMain runs main when
// OBSBENCH_TEST_MAIN=1).
func asWorkers(t *testing.T) {
	t.Helper()
	t.Setenv("OBSBENCH_TEST_MAIN", "1")
}

// children are the processes whose parent is pid, with their command
// lines, living (not zombies).
func children(pid int) map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state := procParent(p); ppid == pid && state != "Z" {
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			out[p] = strings.ReplaceAll(string(cmd), "\x00", " ")
		}
	}
	return out
}

// procParent reads a process's parent and state from /proc/PID/stat.
func procParent(pid int) (ppid int, state string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1, ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1, ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return -1, ""
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0]
}

func workerPIDs(parent int) []int {
	var pids []int
	for pid, cmd := range children(parent) {
		if strings.Contains(cmd, " worker --coordinator ") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// One experiment with its sessions in 3 local worker processes:
// results.jsonl records each worker's share (contiguous global sessions,
// its throughput and CPU, the throughputs adding up to the run's), the
// sessions' per-second rows are all there, events recorded = executed
// across the workers, and the report shows the workers. (Whether the
// report shows one worker is internal/report's TestWorkersShownWhenScaledOut.)
func TestWorkersLocal(t *testing.T) {
	needServers(t)
	asWorkers(t)
	const n = 3
	out := filepath.Join(privateTemp(t), "out")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--workers", strconv.Itoa(n), "--observers", "log-statements-file", "--method", "rounds",
		"--rounds", "2", "--duration", "1s", "--warmup", "500ms", "--clients", "4", "--seed", "4", "--out", out}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("worker %d registered", n-1)) {
		t.Errorf("no worker %d registered:\n%s", n-1, stderr.String())
	}
	runs := readRuns(t, out)
	for _, r := range runs {
		d := r.Driver
		if r.Error != "" || len(d.Workers) != n || len(d.PerSecond) != 4 || d.Clients != 4 {
			t.Fatalf("run %d (%s): error %q, %d workers, %d session rows, %d clients; want none, %d, 4, 4",
				r.Seq, r.Condition, r.Error, len(d.Workers), len(d.PerSecond), d.Clients, n)
		}
		first := 0
		var tp float64
		for i, w := range d.Workers {
			if w.Worker != i || w.FirstSession != first || w.Sessions < 1 || w.Throughput <= 0 || w.CPU.Seconds <= 0 {
				t.Errorf("run %d worker %d: %+v; want sessions from %d, throughput and CPU", r.Seq, i, w, first)
			}
			first += w.Sessions
			tp += w.Throughput
		}
		if first != 4 {
			t.Errorf("run %d: the workers ran %d sessions; want 4", r.Seq, first)
		}
		// Each worker's window is the same length: their throughputs
		// add up to the run's.
		if d.Throughput <= 0 || tp < 0.99*d.Throughput || tp > 1.01*d.Throughput {
			t.Errorf("run %d: workers' throughput adds up to %.0f; run's %.0f", r.Seq, tp, d.Throughput)
		}
		if r.Condition == "log-statements-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed || r.Events.Executed != d.Executed) {
			t.Errorf("run %d: events %+v, executed %d; want every statement of every worker recorded", r.Seq, r.Events, d.Executed)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := result.ValidateSummary(b); err != nil {
		t.Errorf("summary.json: %v", err)
	}
	sum, _ := readSummary(t, filepath.Join(out, "summary.json"))
	for _, c := range sum.Conditions {
		if len(c.Workers) != n {
			t.Errorf("summary of %s has %d workers", c.Name, len(c.Workers))
		}
	}
	if !strings.Contains(stdout.String(), "workers (median of whole runs") {
		t.Errorf("the report does not show the workers:\n%s", stdout.String())
	}
	if html, _ := os.ReadFile(filepath.Join(out, "report.html")); !bytes.Contains(html, []byte(`<h2 id="workers">`)) {
		t.Errorf("report.html has no workers table")
	}
	if pids := workerPIDs(os.Getpid()); len(pids) != 0 {
		t.Errorf("workers still running after the experiment: %v", pids)
	}
}

// A worker killed with SIGKILL in the middle of a run: that run fails,
// naming the worker, the other worker is stopped, the observer is
// reverted (the server's settings are as before), the worker is started
// again and the experiment goes on.
func TestWorkerKilledMidRun(t *testing.T) {
	needServers(t)
	asWorkers(t)
	dsn, settings := externalServer(t)
	before := settings()
	out := filepath.Join(privateTemp(t), "out")
	killed := make(chan string, 1)
	go func() {
		ctx := context.Background()
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if n := driverSessions(ctx, dsn); n == 4 && len(workerPIDs(os.Getpid())) == 2 {
				time.Sleep(time.Second) // in the run's window
				pids := workerPIDs(os.Getpid())
				for pid, cmd := range children(os.Getpid()) {
					if strings.HasSuffix(strings.TrimSpace(cmd), "--index 1") && len(pids) == 2 {
						syscall.Kill(pid, syscall.SIGKILL)
						killed <- fmt.Sprint(pid)
						return
					}
				}
			}
		}
		killed <- ""
	}()
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"run", "--dsn", dsn, "--allow-changes", "--workers", "2", "--observers", "log-statements-file",
		"--method", "rounds", "--rounds", "2", "--duration", "4s", "--warmup", "500ms", "--clients", "4", "--seed", "2", "--out", out}, &stdout, &stderr)
	pid := <-killed
	if pid == "" {
		t.Fatalf("never saw the workers' 4 sessions to kill one:\n%s", stderr.String())
	}
	runs := readRuns(t, out)
	failed, ok := 0, 0
	for _, r := range runs {
		switch {
		case strings.Contains(r.Error, "worker 1 (pid "+pid) && strings.Contains(r.Error, "connection lost") && strings.Contains(r.Error, "worker 0 stopped"):
			failed++
		case r.Error == "" && len(r.Driver.Workers) == 2:
			ok++
		default:
			t.Errorf("run %d (%s): error %q, %d workers", r.Seq, r.Condition, r.Error, len(r.Driver.Workers))
		}
	}
	if failed != 1 || ok != len(runs)-1 || len(runs) != 4 {
		t.Errorf("%d runs: %d failed naming worker 1 (pid %s), %d ran on 2 workers; want 4: 1 and 3\n%s", len(runs), failed, pid, ok, stderr.String())
	}
	if !strings.Contains(stderr.String(), "worker 1 exited") {
		t.Errorf("the restart of worker 1 was not noted:\n%s", stderr.String())
	}
	if d := diffSettings(before, settings()); len(d) > 0 {
		t.Errorf("settings changed after the experiment: %v", d)
	}
}

// driverSessions counts obsbench's driver sessions on the server.
func driverSessions(ctx context.Context, dsn string) int {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return -1
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", postgres.DriverApplication).Scan(&n); err != nil {
		return -1
	}
	return n
}

// The coordinator killed with SIGKILL in the middle of a run: its workers
// stop their sessions and exit within a second or two.
func TestWorkersStopWithoutCoordinator(t *testing.T) {
	needServers(t)
	dsn, _ := externalServer(t)
	tmp := privateTemp(t)
	cmd, log := startObsbench(t, filepath.Join(tmp, "state"), "run", "--dsn", dsn, "--workers", "2", "--observers", "baseline",
		"--method", "rounds", "--rounds", "2", "--duration", "60s", "--warmup", "500ms", "--clients", "4", "--out", filepath.Join(tmp, "out"))
	ctx := context.Background()
	var pids []int
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if pids = workerPIDs(cmd.Process.Pid); len(pids) == 2 && driverSessions(ctx, dsn) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 2 workers with 4 sessions within 90s:\n%s", log)
		}
	}
	killed := time.Now()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for _, pid := range pids {
		defer syscall.Kill(pid, syscall.SIGKILL)
	}
	for {
		alive := 0
		for _, pid := range pids {
			if _, state := procParent(pid); state != "" && state != "Z" {
				alive++
			}
		}
		if alive == 0 {
			break
		}
		if time.Since(killed) > 2*time.Second {
			t.Fatalf("%d of the workers %v still running 2s after their coordinator was killed", alive, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("workers gone %v after the coordinator was sent SIGKILL", time.Since(killed).Round(100*time.Microsecond))
	for deadline := time.Now().Add(5 * time.Second); driverSessions(ctx, dsn) != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d driver sessions still on the server 5s after the workers exited", driverSessions(ctx, dsn))
		}
	}
}

// Workers that never register: the run fails after the wait, naming them
// and where their output is, and nothing is left running.
func TestWorkersNeverRegister(t *testing.T) {
	needServers(t)
	out := filepath.Join(privateTemp(t), "out")
	var stdout, stderr bytes.Buffer
	e := testEnv(&stdout, &stderr)
	e.WorkerCommand, e.RegisterTimeout = []string{"sleep", "600"}, 2*time.Second
	code := e.run(context.Background(), []string{"run", "--workers", "2", "--observers", "baseline", "--rounds", "2", "--duration", "1s", "--out", out})
	want := "worker 0, 1 did not register within 2s (their output: " + filepath.Join(out, "workers", "worker-N.log") + ")"
	if code != exitFailure || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr.String(), exitFailure, want)
	}
	for pid, cmd := range children(os.Getpid()) {
		if strings.HasPrefix(cmd, "sleep 600") {
			t.Errorf("worker process %d (%s) left running", pid, cmd)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// On a managed MariaDB, 2 local workers share the sessions: every
// statement of both is in the general log, and the workers' shares add up.
func TestWorkersMariaDB(t *testing.T) {
	needServers(t)
	asWorkers(t)
	out := filepath.Join(privateTemp(t), "out")
	runOK(t, "run", "--engine", "mariadb", "--workers", "2", "--observers", "general-log-file", "--method", "rounds",
		"--rounds", "2", "--duration", "2s", "--warmup", "500ms", "--clients", "5", "--seed", "3", "--out", out)
	runs := readRuns(t, out)
	for _, r := range runs {
		d := r.Driver
		if r.Error != "" || len(d.Workers) != 2 || d.Workers[0].Sessions != 3 || d.Workers[1].Sessions != 2 || len(d.PerSecond) != 5 {
			t.Errorf("run %d (%s): error %q, workers %+v, %d session rows; want 2 workers of 3 and 2 sessions", r.Seq, r.Condition, r.Error, d.Workers, len(d.PerSecond))
		}
		if r.Condition == "general-log-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed || r.Events.Executed != d.Executed) {
			t.Errorf("run %d: events %+v, executed %d; want every statement of both workers logged", r.Seq, r.Events, d.Executed)
		}
	}
}

// Alternation on workers: the coordinator switches the observer once for
// all of them on its own clock, and every worker labels its seconds with
// the same phases: the on phases' latency and the overhead are computed
// from the merged result, and the events of both workers are counted.
func TestWorkersAlternation(t *testing.T) {
	needServers(t)
	asWorkers(t)
	out := filepath.Join(privateTemp(t), "out")
	_, stderr := runOK(t, "run", "--workers", "2", "--observers", "log-statements-file", "--method", "alternation",
		"--alt-duration", "12s", "--phase-min", "2", "--phase-max", "3", "--clients", "2", "--seed", "6", "--out", out)
	runs := readRuns(t, out)
	alt := 0
	for _, r := range runs {
		if r.Method != "alternation" {
			continue
		}
		alt++
		if r.Error != "" || len(r.Driver.Workers) != 2 || len(r.Phases) < 4 || len(r.Driver.LatencyBy) == 0 {
			t.Errorf("alternation run %d: error %q, %d workers, %d phases, latency by label %v", r.Seq, r.Error, len(r.Driver.Workers), len(r.Phases), r.Driver.LatencyBy)
		}
	}
	if alt == 0 {
		t.Fatalf("no alternation run:\n%s", stderr)
	}
	sum, err := readSummary(t, filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.Conditions {
		if c.Name != "log-statements-file" {
			continue
		}
		if c.Overhead == nil || c.Window != result.WindowOnPhases || c.Events == nil || c.Events.Recorded != c.Events.Executed {
			t.Errorf("log-statements-file: overhead %+v, window %q, events %+v; want an overhead over on phases and every event", c.Overhead, c.Window, c.Events)
		}
	}
}
