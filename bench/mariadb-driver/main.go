// Command mariadb-driver compares obsbench's MariaDB driver with sysbench:
// the same managed MariaDB, the same query (credit-top1's), the same number
// of sessions each with the statement prepared, run alternately in a seeded
// random order for several rounds. It writes a markdown report and prints
// it. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/bench/internal/driverpeer"
	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/stats"
)

const database = "obsbench"

// passwordEnv passes the server's password to a duet's driver, which
// runs in a child process (driverpeer.Config.RunDuet), in its environment
// rather than on its command line.
const passwordEnv = "OBSBENCH_MARIADB_DRIVER_PASSWORD"

type config struct {
	driverpeer.Config
	version string // the server's, filled in by run
}

func main() {
	c := config{Config: driverpeer.Config{Bench: "mariadb-driver", Peer: "sysbench", Workload: "credit-top1"}}
	c.DefineFlags("measured time of each run (whole seconds: sysbench --time)", "client sessions of both tools (sysbench --threads)")
	c.Parse()
	dial := func(dsn string) (driver.Dialer, error) {
		srv, err := mariadb.New(dsn, mariadb.Options{Password: os.Getenv(passwordEnv)})
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (driver.Session, error) { return srv.Connect(ctx) }, nil
	}
	c.Main(dial, func(ctx context.Context) error { return run(ctx, &c) })
}

// run sets up the server, runs the rounds or the duet and writes the
// report. The server is stopped on every return, a cancelled context
// (Ctrl-C) included.
func run(ctx context.Context, c *config) error {
	path, err := findSysbench()
	if err != nil {
		return err
	}
	wl, ds, sql, err := c.Statement(ctx)
	if err != nil {
		return err
	}
	if strings.Contains(sql, "?") || strings.Contains(sql, "]==]") {
		return fmt.Errorf("workload %s: want a statement without parameters or ]==], got %q", wl.Name, sql)
	}
	m, err := mariadb.Start(ctx, mariadb.InstanceOptions{Log: c.Logf})
	if err != nil {
		return err
	}
	defer func() {
		if err := m.Stop(); err != nil {
			c.Logf("stopping the managed server: %v", err)
		}
	}()
	srv, err := mariadb.New(m.DSN(database), mariadb.Options{Password: m.Password()})
	if err != nil {
		return err
	}
	c.Logf("loading dataset %s", ds.Name)
	if err := srv.Load(ctx, ds); err != nil {
		return err
	}
	if c.version, err = srv.Version(ctx); err != nil {
		return err
	}
	sb := sysbench{path: path, threads: c.Clients}
	if c.Duet {
		return runDuet(ctx, c, sql, m, sb)
	}
	pid, err := m.PID()
	if err != nil {
		return err
	}
	files, err := writeSysbenchFiles(sql, m)
	if err != nil {
		return err
	}
	defer os.RemoveAll(files.dir)
	control, err := openControl(m)
	if err != nil {
		return err
	}
	defer control.Close()
	dial := func(ctx context.Context) (driver.Session, error) { return srv.Connect(ctx) }
	samples, err := c.RunRounds(ctx, mariadbd{pid: pid, control: control}, wl, dial, sb.run(files, nil))
	if err != nil {
		return err
	}
	return writeReport(c, sql, samples)
}

// runDuet copies m into a twin, writes each twin's sysbench files, runs
// the duet and writes its report.
func runDuet(ctx context.Context, c *config, sql string, m *mariadb.Instance, sb sysbench) error {
	tw, err := sidebyside.StartTwins(ctx, m, m.StartCopy, c.Logf)
	if err != nil {
		return err
	}
	defer tw.Close()
	var files [2]sysbenchFiles
	for i, twin := range tw.Servers {
		if files[i], err = writeSysbenchFiles(sql, twin); err != nil {
			return err
		}
		defer os.RemoveAll(files[i].dir)
	}
	child := func(twin int) (string, []string) {
		m := tw.Servers[twin]
		return m.DSN(database), []string{passwordEnv + "=" + m.Password()}
	}
	phases, err := c.RunDuet(ctx, tw.Groups, child, func(twin int) driverpeer.Tool { return sb.run(files[twin], tw.Groups[twin]) })
	if err != nil {
		return err
	}
	return c.WriteDuetReport(driverpeer.DuetReport{
		Title:  "obsbench's MariaDB driver vs sysbench, by duet",
		Server: fmt.Sprintf("managed MariaDB %s and a copy of its data directory, each with its tool in a cgroup held to %.0f%% of the machine's CPUs", c.version, 100*sidebyside.TwinShare),
		Setup:  fmt.Sprintf("workload %s, %d sessions, server-side prepared statements; obsbench driver threads: %d event loops; sysbench %s --threads %d", c.Workload, c.Clients, c.Procs, sysbenchVersion(), c.Clients),
		Query:  sql,
		Goals:  &driverpeer.Goals{Rate: goalRate, CPU: goalCPU},
	}, phases)
}

// The bench's goals: the harness costs less than what it measures.
const (
	goalRate = 1.00 // obsbench statements/s ÷ sysbench statements/s, at least
	goalCPU  = 1.00 // obsbench client CPU/statement ÷ sysbench's, at most
)

// writeReport writes the markdown report to c.Out and prints it.
func writeReport(c *config, sql string, samples []sidebyside.Sample) error {
	w := sidebyside.NewReport("obsbench's MariaDB driver vs sysbench", c.Command)
	p := w.Line
	p("- server: managed MariaDB %s over its Unix socket; workload %s, %d sessions, server-side prepared statements", c.version, c.Workload, c.Clients)
	p("- obsbench driver threads: %d event loops (GOMAXPROCS one more); sysbench %s: --threads %d (one thread per session)", c.Procs, sysbenchVersion(), c.Clients)
	p("- each run: %v warm-up run, then a %v measured run with new sessions; %d rounds, order seed %d", c.Warmup, c.Duration, c.Rounds, c.Seed)
	p("- query: `%s`\n", sql)
	p("statements/s: obsbench `result.Measured` ÷ duration; sysbench's events (one statement each) ÷ `--time`.")
	p("client CPU µs/statement: the tool's CPU over the whole measured run (connecting and preparing included) ÷ every statement it ran.")
	p("server CPU µs/statement: mariadbd's CPU over the measured run ÷ the same statements.\n")
	p("## Rounds\n")
	p("| round | # | tool | statements/s | client CPU µs/stmt | server CPU µs/stmt |")
	p("|---:|---:|---|---:|---:|---:|")
	for _, s := range samples {
		p("| %d | %d | %s | %.0f | %.2f | %.2f |", s.Round, s.Position, s.Tool, s.Rate(), s.ClientMicros(), s.ServerMicros())
	}
	figures, med := driverpeer.Figures(samples), driverpeer.Medians(samples)
	r := c.Ratios(med, driverpeer.Driver)
	p("\n## Medians (min–max)\n")
	p("| tool | statements/s | client CPU µs/stmt | server CPU µs/stmt |")
	p("|---|---:|---:|---:|")
	for _, tool := range c.Tools() {
		var cells [3]string
		for i, col := range figures[tool] {
			format := "%.2f (%.2f–%.2f)"
			if i == 0 {
				format = "%.0f (%.0f–%.0f)"
			}
			cells[i] = fmt.Sprintf(format, stats.Median(col), slices.Min(col), slices.Max(col))
		}
		p("| %s | %s | %s | %s |", tool, cells[0], cells[1], cells[2])
	}
	p("\n## Goals (ratios of the medians)\n")
	p("| ratio | value | goal | result |")
	p("|---|---:|---|---|")
	p("| obsbench statements/s ÷ sysbench statements/s | %.3f | ≥ %.2f | %s |", r[0], goalRate, sidebyside.Verdict(r[0] >= goalRate))
	p("| obsbench client CPU/statement ÷ sysbench's | %.3f | ≤ %.2f | %s |", r[1], goalCPU, sidebyside.Verdict(r[1] <= goalCPU))
	p("| server CPU/statement under obsbench ÷ under sysbench | %.3f | – | – |", r[2])
	w.WriteString(c.GoroutinesNote(med))
	return c.Publish(w.String())
}
