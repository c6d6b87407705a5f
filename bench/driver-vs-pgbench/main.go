// Command driver-vs-pgbench compares obsbench's load driver with pgbench:
// the same managed PostgreSQL, the same query, the same number of prepared
// sessions, run alternately in a seeded random order for several rounds. It
// writes a markdown report and prints it. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/obsbench/obsbench/bench/internal/driverpeer"
	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
)

const database = "obsbench"

type config struct {
	driverpeer.Config
	pgbenchThreads int    // pgbench -j, at most -clients
	postgres       string // the server's version, filled in by run
}

func main() {
	c := config{Config: driverpeer.Config{Bench: "driver-vs-pgbench", Peer: "pgbench", Workload: "credit-top1"}}
	c.DefineFlags("measured time of each run (whole seconds: pgbench -T)", "client sessions of both tools")
	flag.IntVar(&c.pgbenchThreads, "pgbench-threads", min(2, runtime.NumCPU()), "pgbench -j (at most -clients)")
	c.Parse()
	if c.pgbenchThreads < 1 {
		c.Fail(errors.New("-pgbench-threads must be at least 1"))
	}
	c.pgbenchThreads = min(c.pgbenchThreads, c.Clients)
	dial := func(dsn string) (driver.Dialer, error) {
		srv := postgres.New(dsn, postgres.Options{})
		return func(ctx context.Context) (driver.Session, error) { return srv.Connect(ctx) }, nil
	}
	c.Main(dial, func(ctx context.Context) error { return run(ctx, &c) })
}

// run sets up the server, runs the rounds or the duet and writes the
// report. The server is stopped on every return, a cancelled context
// (Ctrl-C) included.
func run(ctx context.Context, c *config) error {
	wl, ds, sql, err := c.Statement(ctx)
	if err != nil {
		return err
	}
	if strings.Contains(sql, "$1") {
		return fmt.Errorf("workload %s: want a statement without parameters, got %q", wl.Name, sql)
	}
	pg, bin, stop, err := sidebyside.StartPostgres(ctx, database, nil, c.Logf)
	if err != nil {
		return err
	}
	defer stop()
	srv := postgres.New(pg.DSN(database), postgres.Options{Restart: pg.Restart})
	c.Logf("loading dataset %s", ds.Name)
	if err := srv.Load(ctx, ds); err != nil {
		return err
	}
	if c.postgres, err = srv.Version(ctx); err != nil {
		return err
	}
	script, err := writeScript(sql)
	if err != nil {
		return err
	}
	defer os.Remove(script)
	pb := pgbench{path: filepath.Join(bin, "pgbench"), script: script, clients: c.Clients, threads: c.pgbenchThreads}
	if c.Duet {
		tw, err := sidebyside.StartTwins(ctx, pg, pg.StartCopy, c.Logf)
		if err != nil {
			return err
		}
		defer tw.Close()
		phases, err := c.RunDuet(ctx, tw.Groups,
			func(twin int) (string, []string) { return tw.Servers[twin].DSN(database), nil },
			func(twin int) driverpeer.Tool { return pb.run(tw.Servers[twin], tw.Groups[twin]) })
		if err != nil {
			return err
		}
		return c.WriteDuetReport(driverpeer.DuetReport{
			Title:  "obsbench driver vs pgbench, by duet",
			Server: fmt.Sprintf("managed PostgreSQL %s and a copy of it (pg_basebackup), each with its tool in a cgroup held to %.0f%% of the machine's CPUs", c.postgres, 100*sidebyside.TwinShare),
			Setup:  fmt.Sprintf("workload %s, %d sessions, prepared; obsbench driver threads: %d event loops; pgbench -j %d", c.Workload, c.Clients, c.Procs, c.pgbenchThreads),
			Query:  sql,
		}, phases)
	}
	pmPID, err := pg.PID()
	if err != nil {
		return err
	}
	dial := func(ctx context.Context) (driver.Session, error) { return srv.Connect(ctx) }
	samples, err := c.RunRounds(ctx, postmaster(pmPID), wl, dial, pb.run(pg, nil))
	if err != nil {
		return err
	}
	return writeReport(c, sql, samples)
}

// The bench's goals: the harness costs less than what it measures.
const (
	goalRate   = 1.00 // obsbench statements/s ÷ pgbench statements/s, at least
	goalCPU    = 1.00 // obsbench CPU/statement ÷ pgbench CPU/statement, at most
	goalServer = 0.02 // |server CPU/statement under obsbench ÷ under pgbench - 1|, at most
)

// writeReport writes the markdown report to c.Out and prints it.
func writeReport(c *config, sql string, samples []sidebyside.Sample) error {
	w := sidebyside.NewReport("obsbench driver vs pgbench", c.Command)
	p := w.Line
	p("- server: managed PostgreSQL %s; workload %s, %d sessions, prepared", c.postgres, c.Workload, c.Clients)
	p("- obsbench driver threads: %d event loops (GOMAXPROCS one more); pgbench -j %d", c.Procs, c.pgbenchThreads)
	p("- each run: %v warm-up run, then a %v measured run with new sessions; %d rounds, order seed %d", c.Warmup, c.Duration, c.Rounds, c.Seed)
	p("- query: `%s`\n", sql)
	p("statements/s: obsbench `result.Measured` ÷ duration; pgbench transactions processed ÷ `-T`.")
	p("CPU µs/statement: CPU of the whole measured run ÷ every statement it ran (obsbench `result.Executed`).\n")
	p("## Rounds\n")
	p("| round | # | tool | statements/s | client CPU s | client CPU µs/stmt | server CPU µs/stmt | pgbench tps |")
	p("|---:|---:|---|---:|---:|---:|---:|---:|")
	for _, s := range samples {
		tps := "–"
		if s.Tool == c.Peer {
			tps = fmt.Sprintf("%.0f", s.ReportedTPS)
		}
		p("| %d | %d | %s | %.0f | %.2f | %.2f | %.2f | %s |",
			s.Round, s.Position, s.Tool, s.Rate(), s.ClientCPU, s.ClientMicros(), s.ServerMicros(), tps)
	}
	med := driverpeer.Medians(samples)
	r := c.Ratios(med, driverpeer.Driver)
	p("\n## Medians\n")
	p("| tool | statements/s | client CPU µs/stmt | server CPU µs/stmt |")
	p("|---|---:|---:|---:|")
	for _, tool := range c.Tools() {
		p("| %s | %.0f | %.2f | %.2f |", tool, med[tool][0], med[tool][1], med[tool][2])
	}
	p("\n## Goals (ratios of the medians)\n")
	p("| ratio | value | goal | result |")
	p("|---|---:|---|---|")
	p("| obsbench statements/s ÷ pgbench statements/s | %.3f | ≥ %.2f | %s |", r[0], goalRate, sidebyside.Verdict(r[0] >= goalRate))
	p("| obsbench CPU/statement ÷ pgbench CPU/statement | %.3f | ≤ %.2f | %s |", r[1], goalCPU, sidebyside.Verdict(r[1] <= goalCPU))
	p("| server CPU/statement under obsbench ÷ under pgbench | %.3f | %.2f ± %.2f | %s |", r[2], 1.0, goalServer, sidebyside.Verdict(math.Abs(r[2]-1) <= goalServer))
	w.WriteString(c.GoroutinesNote(med))
	return c.Publish(w.String())
}
