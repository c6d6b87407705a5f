package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/workload"
)

const (
	toolDriver     = "obsbench"
	toolGoroutines = "obsbench-goroutines" // the driver with a goroutine per session (-goroutines)
	toolPgbench    = "pgbench"
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

// sample is one measured run of one tool; tps is pgbench's own, kept for
// reference.
type sample struct {
	sidebyside.Sample
	tps float64
}

// measure runs tool's warm-up, then its measured run, and returns the
// measured run. Each run opens and closes its own sessions; the CPU times
// cover the whole measured run, connecting and preparing included.
func (b *bench) measure(ctx context.Context, tool string) (sample, error) {
	s := sample{Sample: sidebyside.Sample{Tool: tool, Seconds: b.duration.Seconds()}}
	runTool := b.runDriver
	switch tool {
	case toolPgbench:
		runTool = func(ctx context.Context, d time.Duration, s *sample) error { return b.runPgbench(ctx, b.pg, nil, d, s) }
	case toolGoroutines:
		runTool = b.runGoroutines
	}
	if b.warmup > 0 {
		if err := runTool(ctx, b.warmup, nil); err != nil {
			return s, fmt.Errorf("warm-up: %w", err)
		}
	}
	// Wait until the warm-up's sessions are gone, then measure the server
	// with obsbench's own sampler (its process tree plus what the
	// postmaster reaped), until the measured run's sessions are gone too.
	if err := sidebyside.WaitPostgresIdle(ctx, b.pmPID, database); err != nil {
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
	werr := sidebyside.WaitPostgresIdle(ctx, b.pmPID, database)
	u, err := sampler.Stop()
	if err == nil && u.Server != nil {
		s.ServerCPU = u.Server.Seconds
	}
	return s, errors.Join(werr, err)
}

// runDriver runs the driver for d (sidebyside.RunDriver), its sessions on
// event loops as obsbench run does.
func (b *bench) runDriver(ctx context.Context, d time.Duration, s *sample) error {
	return b.drive(ctx, driver.Config{Clients: b.clients, Duration: d, Procs: b.procs}, s)
}

// runGoroutines runs the driver for d with a goroutine per session.
func (b *bench) runGoroutines(ctx context.Context, d time.Duration, s *sample) error {
	return b.drive(ctx, driver.Config{Clients: b.clients, Duration: d, Procs: b.procs, Goroutines: true}, s)
}

func (b *bench) drive(ctx context.Context, cfg driver.Config, s *sample) error {
	dial := func(ctx context.Context) (driver.Session, error) { return b.srv.Connect(ctx) }
	var into *sidebyside.Sample
	if s != nil {
		into = &s.Sample
	}
	return sidebyside.RunDriver(ctx, cfg, dial, b.wl, into)
}

var (
	reTxns = regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)`)
	reTPS  = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
)

// runPgbench runs pgbench for d. Statements/s is transactions processed / d
// (one statement per transaction), the driver's count over the same nominal
// duration; pgbench's tps, which divides by its own timing without the
// connection time, is kept for reference.
// With group, pgbench runs in it (a duet's twin, -duet), moved there as
// it starts.
func (b *bench) runPgbench(ctx context.Context, pg *server.Postgres, group *cgroup.Group, d time.Duration, s *sample) error {
	cmd := exec.CommandContext(ctx, b.pgbench, "-n", "-M", "prepared", "-f", b.script,
		"-c", strconv.Itoa(b.clients), "-j", strconv.Itoa(b.pgbenchThreads),
		"-T", strconv.Itoa(int(d/time.Second)), "-h", pg.SocketDir(),
		"-p", strconv.Itoa(pg.Port()), "-U", "postgres", database)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGPASSFILE="+pg.PassFile()) // the managed server's password
	// Its own process group: Ctrl-C reaches this program, which cancels ctx.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sidebyside.RunIn(cmd, group); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, out.String())
	}
	if s == nil {
		return nil
	}
	txns, tps := reTxns.FindSubmatch(out.Bytes()), reTPS.FindSubmatch(out.Bytes())
	if txns == nil || tps == nil {
		return fmt.Errorf("cannot parse pgbench output:\n%s", out.String())
	}
	s.Rated, _ = strconv.ParseInt(string(txns[1]), 10, 64)
	s.Executed = s.Rated
	s.tps, _ = strconv.ParseFloat(string(tps[1]), 64)
	s.ClientCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return nil
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
