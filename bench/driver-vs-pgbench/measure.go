package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/workload"
)

const (
	toolDriver  = "obsbench"
	toolPgbench = "pgbench"
)

// bench is what both tools run against.
type bench struct {
	srv              *postgres.Server
	pg               *server.Postgres
	wl               workload.Meta
	clients, procs   int
	pgbenchThreads   int // pgbench -j
	warmup, duration time.Duration
	pgbench, script  string
	pmPID            int // the postmaster
}

// sample is one measured run of one tool.
type sample struct {
	tool            string
	round, position int
	rated           int64   // statements counted for statements/s
	executed        int64   // statements the CPU times are divided by
	seconds         float64 // the measured duration
	clientCPU       float64 // seconds, the tool's own process
	serverCPU       float64 // seconds, every server process
	tps             float64 // pgbench's own tps, for reference
}

func (s sample) rate() float64         { return float64(s.rated) / s.seconds }
func (s sample) clientMicros() float64 { return 1e6 * s.clientCPU / float64(s.executed) }
func (s sample) serverMicros() float64 { return 1e6 * s.serverCPU / float64(s.executed) }

// measure runs tool's warm-up, then its measured run, and returns the
// measured run. Each run opens and closes its own sessions; the CPU times
// cover the whole measured run, connecting and preparing included.
func (b *bench) measure(ctx context.Context, tool string) (sample, error) {
	s := sample{tool: tool, seconds: b.duration.Seconds()}
	runTool := b.runDriver
	if tool == toolPgbench {
		runTool = b.runPgbench
	}
	if b.warmup > 0 {
		if err := runTool(ctx, b.warmup, nil); err != nil {
			return s, fmt.Errorf("warm-up: %w", err)
		}
	}
	// Wait until the warm-up's sessions are gone, then measure the server
	// with obsbench's own sampler (its process tree plus what the
	// postmaster reaped), until the measured run's sessions are gone too.
	if err := b.waitIdle(ctx); err != nil {
		return s, err
	}
	sampler, err := collect.StartSampler(b.pmPID)
	if err != nil {
		return s, err
	}
	if err := runTool(ctx, b.duration, &s); err != nil {
		sampler.Stop()
		return s, err
	}
	werr := b.waitIdle(ctx)
	u, err := sampler.Stop()
	if err == nil && u.Server != nil {
		s.serverCPU = u.Server.Seconds
	}
	return s, errors.Join(werr, err)
}

// runDriver runs driver.Run for d with no warm-up of its own. Statements/s
// counts result.Measured (completed inside the window); CPU per statement
// divides by result.Executed (also the few in flight when it closed), since
// the CPU was spent on all of them.
func (b *bench) runDriver(ctx context.Context, d time.Duration, s *sample) error {
	dial := func(ctx context.Context) (driver.Session, error) { return b.srv.Connect(ctx) }
	cfg := driver.Config{Clients: b.clients, Duration: d, Procs: b.procs}
	t0, start := selfCPU(), time.Now()
	res, err := driver.Run(ctx, cfg, dial, b.wl.New())
	cpu := selfCPU() - t0
	if err != nil {
		return err
	}
	if took := time.Since(start); took < d {
		return fmt.Errorf("driver.Run returned after %v, before its %v window ended", took, d)
	}
	if s == nil {
		return nil
	}
	s.clientCPU = cpu.Seconds()
	s.rated, s.executed = res.Measured, res.Executed
	return nil
}

var (
	reTxns = regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)`)
	reTPS  = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
)

// runPgbench runs pgbench for d. Statements/s is transactions processed / d
// (one statement per transaction), the driver's count over the same nominal
// duration; pgbench's tps, which divides by its own timing without the
// connection time, is kept for reference.
func (b *bench) runPgbench(ctx context.Context, d time.Duration, s *sample) error {
	cmd := exec.CommandContext(ctx, b.pgbench, "-n", "-M", "prepared", "-f", b.script,
		"-c", strconv.Itoa(b.clients), "-j", strconv.Itoa(b.pgbenchThreads),
		"-T", strconv.Itoa(int(d/time.Second)), "-h", b.pg.SocketDir(),
		"-p", strconv.Itoa(b.pg.Port()), "-U", "postgres", database)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGPASSFILE="+b.pg.PassFile()) // the managed server's password
	// Its own process group: Ctrl-C reaches this program, which cancels ctx.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, out.String())
	}
	if s == nil {
		return nil
	}
	txns, tps := reTxns.FindSubmatch(out.Bytes()), reTPS.FindSubmatch(out.Bytes())
	if txns == nil || tps == nil {
		return fmt.Errorf("cannot parse pgbench output:\n%s", out.String())
	}
	s.rated, _ = strconv.ParseInt(string(txns[1]), 10, 64)
	s.executed = s.rated
	s.tps, _ = strconv.ParseFloat(string(tps[1]), 64)
	s.clientCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return nil
}

// selfCPU is the user and system CPU time of this process, all threads.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// waitIdle waits until the previous run's sessions are gone and reaped, so
// that the sampler counts each of them once.
func (b *bench) waitIdle(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		busy, err := sessionsLeft(b.pmPID)
		if err != nil || !busy {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("client backends still running 10s after the run")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sessionsLeft says whether a client backend of the benchmark database is
// still running or unreaped.
func sessionsLeft(pm int) (bool, error) {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		pid := filepath.Base(dir)
		f, err := statFields(pid)
		if err != nil || f[1] != int64(pm) {
			continue // exited meanwhile, or not a server process
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if f[0] == 'Z' || bytes.HasPrefix(cmdline, []byte("postgres: postgres "+database+" ")) {
			return true, nil
		}
	}
	return false, nil
}

// statFields returns the fields of /proc/PID/stat after the command name:
// [0] the state letter, [1] ppid, ..., [11] utime, [12] stime, [13] cutime,
// [14] cstime; the others are parsed as numbers where they are.
func statFields(pid string) ([]int64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("malformed /proc/%s/stat", pid)
	}
	words := bytes.Fields(b[i+1:])
	if len(words) < 15 {
		return nil, fmt.Errorf("malformed /proc/%s/stat", pid)
	}
	f := make([]int64, 15)
	f[0] = int64(words[0][0])
	for j := 1; j < 15; j++ {
		f[j], _ = strconv.ParseInt(string(words[j]), 10, 64)
	}
	return f, nil
}

// workloadSQL returns the one statement the workload prepares, taken from
// the workload itself so that pgbench runs exactly the driver's text.
func workloadSQL(ctx context.Context, meta workload.Meta) (string, error) {
	var rec recorder
	if _, err := meta.New().Worker(ctx, &rec, 0); err != nil {
		return "", err
	}
	if len(rec.sql) != 1 || strings.Contains(rec.sql[0], "$1") {
		return "", fmt.Errorf("workload %s: want one statement without parameters, got %q", meta.Name, rec.sql)
	}
	return rec.sql[0], nil
}

type recorder struct{ sql []string }

func (r *recorder) Prepare(_ context.Context, sql string) (workload.Stmt, error) {
	r.sql = append(r.sql, sql)
	return nil, nil
}

// writeScript writes sql as a pgbench script, readable by anyone so that
// pgbench may run as another user. pgbench ends a command at the semicolon
// and does not send the semicolon, so the server receives sql unchanged.
func writeScript(sql string) (string, error) {
	f, err := os.CreateTemp("", "driver-vs-pgbench-*.sql")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(sql + ";\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
