package main

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/obsbench/obsbench/bench/internal/driverpeer"
	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/engine/postgres"
)

// postmaster is the managed PostgreSQL of the rounds, by its postmaster's
// pid, as driverpeer measures it.
type postmaster int

// WaitIdle waits until the last run's sessions are gone.
func (pm postmaster) WaitIdle(ctx context.Context) error {
	return sidebyside.WaitPostgresIdle(ctx, int(pm), database)
}

// StartCPU measures the server with obsbench's own sampler: the
// postmaster's process tree plus what it reaped.
func (pm postmaster) StartCPU() (func() (float64, error), error) {
	sampler, err := collect.StartSampler(int(pm))
	if err != nil {
		return nil, err
	}
	return func() (float64, error) {
		u, err := sampler.Stop()
		if err != nil || u.Server == nil {
			return 0, err
		}
		return u.Server.Seconds, nil
	}, nil
}

// pgbench is the peer: pgbench running the query's script.
type pgbench struct {
	path, script     string
	clients, threads int // pgbench -c and -j
}

// run is pgbench against pg as a tool, in group when there is one (a
// duet's twin). Statements/s is transactions processed ÷ d (one
// statement per transaction), the driver's count over the same nominal
// duration; pgbench's tps, which divides by its own timing without the
// connection time, is kept for reference.
func (pb pgbench) run(pg *postgres.Instance, group *cgroup.Group) driverpeer.Tool {
	return func(ctx context.Context, d time.Duration, s *sidebyside.Sample) error {
		cmd := exec.CommandContext(ctx, pb.path, "-n", "-M", "prepared", "-f", pb.script,
			"-c", strconv.Itoa(pb.clients), "-j", strconv.Itoa(pb.threads),
			"-T", strconv.Itoa(int(d/time.Second)), "-h", pg.SocketDir(),
			"-p", strconv.Itoa(pg.Port()), "-U", "postgres", database)
		cmd.Env = append(os.Environ(), "LC_ALL=C", "PGPASSFILE="+pg.PassFile()) // the managed server's password
		out, cpu, err := sidebyside.RunPeer(cmd, group)
		if err != nil || s == nil {
			return err
		}
		if s.Rated, s.ReportedTPS, err = sidebyside.PgbenchResult(out); err != nil {
			return err
		}
		s.Executed = s.Rated
		s.ClientCPU = cpu.Seconds()
		return nil
	}
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
