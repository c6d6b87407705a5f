// Command pgbench-scripts compares obsbench's pgbench workload with
// pgbench itself on the same built-in script: one managed PostgreSQL with
// pgbench -i's tables at a scale, the same clients, both tools in the same
// query mode (-query-mode; prepared by default),
// run alternately in a seeded random order for several rounds. It writes
// a markdown report and prints it. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/pgbench"
	"github.com/obsbench/obsbench/internal/stats"
	"github.com/obsbench/obsbench/internal/workload"
)

const database = "obsbench"

// goal: obsbench's transactions/s ÷ pgbench's, at least, running the
// user's own pgbench scripts.
const goal = 0.95

type config struct {
	rounds, clients, scale int
	procs                  int // obsbench driver threads
	script                 string
	mode                   pgbench.QueryMode // both tools' query mode (pgbench -M)
	duration, warmup       time.Duration
	out                    string
	seed                   uint64
	command, version       string
	pgbenchThreads         int
	states                 time.Duration // sample the backends' states this often (0: not)
	duet                   bool          // both tools at once against twin servers (duet.go)
}

// sample is one measured run of one tool.
type sample struct {
	tool            string
	round, position int
	tps             float64
	clientUS        float64 // client CPU per transaction, µs
	serverUS        float64 // server CPU per transaction, µs
	idle            float64 // the machine's idle share of its CPU time over the run
	commits         float64 // the server's count of commits in the database over the run, per second
	states          map[string]float64
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 5, "rounds; each runs both tools once, in a seeded random order")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured time of each run (whole seconds: pgbench -T)")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured warm-up run before each measured run (whole seconds)")
	flag.IntVar(&c.clients, "clients", 4, "client sessions of both tools")
	flag.IntVar(&c.scale, "scale", 4, "pgbench -i scale (and :scale)")
	flag.IntVar(&c.procs, "driver-threads", 0, "OS threads of the obsbench driver, as obsbench run --driver-threads (0: its default for -clients, one per core, at most one per session)")
	flag.IntVar(&c.pgbenchThreads, "pgbench-threads", 0, "pgbench -j (0: min(2, -clients))")
	flag.DurationVar(&c.states, "states", 0, "sample the client backends' state and wait event (pg_stat_activity) this often during measured runs, and report their shares (0: not)")
	flag.StringVar(&c.script, "script", "tpcb-like", "built-in script both tools run")
	mode := flag.String("query-mode", "prepared", "query mode of both tools: simple, extended or prepared (pgbench -M, obsbench --query-mode)")
	flag.StringVar(&c.out, "out", "bench/pgbench-scripts/RESULT.md", "markdown report to write")
	flag.Uint64Var(&c.seed, "seed", 0, "seed of the run order and obsbench's clients (default: from the clock)")
	flag.BoolVar(&c.duet, "duet", false, "run both tools at the same time, each against one of two twin servers held to equal CPU quotas, swapping twins phase by phase (-rounds pairs of phases; default -out RESULT-duet.md)")
	childDSN := flag.String("child-dsn", "", "(internal) run as obsbench's side of a duet against this server and print the measured run")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of this process (obsbench's driver and clients) to this file")
	flag.Parse()
	if c.duet && !sidebyside.FlagGiven("out") {
		c.out = "bench/pgbench-scripts/RESULT-duet.md"
	}
	m, err := pgbench.ParseQueryMode(*mode)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgbench-scripts: -query-mode:", err)
		os.Exit(2)
	}
	c.mode = m
	if c.procs == 0 {
		c.procs = driver.DefaultProcs(c.clients)
	}
	if c.pgbenchThreads == 0 {
		c.pgbenchThreads = min(2, c.clients)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	switch {
	case c.rounds < 1 || c.clients < 1 || c.scale < 1:
		fail(fmt.Errorf("-rounds, -clients and -scale must be at least 1"))
	case c.duration < time.Second || c.duration%time.Second != 0 || c.warmup%time.Second != 0:
		fail(fmt.Errorf("-duration and -warmup: want whole seconds, -duration at least 1s"))
	}
	if *childDSN != "" {
		if err := runChild(context.Background(), c, *childDSN); err != nil {
			fail(err)
		}
		return
	}
	if c.duet && (c.states > 0 || *cpuprofile != "") {
		fail(fmt.Errorf("-duet runs obsbench's side in a child process: not with -states or -cpuprofile"))
	}
	c.seed = sidebyside.Seed(c.seed)
	c.command = sidebyside.Command("pgbench-scripts")
	sidebyside.Main("pgbench-scripts", func(ctx context.Context) error { return run(ctx, c) })
}

func fail(err error) { sidebyside.Fail("pgbench-scripts", err) }

var logf = sidebyside.Logger("pgbench-scripts")

// run sets up the server, runs the rounds and writes the report; the
// server is stopped on every return, Ctrl-C included.
func run(ctx context.Context, c config) error {
	meta, perTxn, err := c.workload()
	if err != nil {
		return err
	}
	pg, bin, stop, err := sidebyside.StartPostgres(ctx, database, nil, logf)
	if err != nil {
		return err
	}
	defer stop()
	// The bench's own queries (commit counts, -states) run in another
	// database, so that the database's commits are the tools' alone.
	adminDSN := pg.DSN("postgres")
	srv, version, pmPID, err := sidebyside.LoadPgbench(ctx, pg, database, c.scale, meta, logf)
	if err != nil {
		return err
	}
	c.version = version
	if c.duet {
		tw, err := sidebyside.StartTwins(ctx, pg, pg.StartCopy, logf)
		if err != nil {
			return err
		}
		defer tw.Close()
		phases, err := runDuet(ctx, c, tw, filepath.Join(bin, "pgbench"))
		if err != nil {
			return err
		}
		return writeDuetReport(c, perTxn, phases)
	}
	b := bench{pmPID: pmPID, adminDSN: adminDSN, tools: map[string]func(time.Duration) (sample, error){
		"obsbench": func(d time.Duration) (sample, error) {
			dial := func(ctx context.Context) (driver.Session, error) { return srv.Connect(ctx) }
			t0 := sidebyside.SelfCPU()
			res, err := driver.Run(ctx, driver.Config{Clients: c.clients, Duration: d, Procs: c.procs}, dial, meta.New())
			cpu := sidebyside.SelfCPU() - t0
			if err != nil {
				return sample{}, err
			}
			txns := float64(res.Measured) / float64(perTxn)
			return sample{tps: txns / d.Seconds(), clientUS: 1e6 * cpu.Seconds() * float64(perTxn) / float64(res.Executed)}, nil
		},
		"pgbench": func(d time.Duration) (sample, error) {
			return runPgbench(ctx, filepath.Join(bin, "pgbench"), pg.PassFile(), nil, append(c.pgbenchArgs(pg), "-T", strconv.Itoa(int(d/time.Second))))
		},
	}}
	logf("seed %d; %d rounds of 2 x (%v warm-up + %v measured)", c.seed, c.rounds, c.warmup, c.duration)
	var samples []sample
	for round := 1; round <= c.rounds; round++ {
		for pos, tool := range sidebyside.Order(c.seed, round, "obsbench", "pgbench") {
			s, err := b.sample(ctx, c, tool, round, pos)
			if err != nil {
				return err
			}
			samples = append(samples, s)
			logf("round %d/%d %-8s %8.0f tps (server %6.0f commits/s)  client %6.1f µs/txn  server %6.1f µs/txn  idle %4.1f%%", round, c.rounds, tool, s.tps, s.commits, s.clientUS, s.serverUS, 100*s.idle)
			if s.states != nil {
				logf("  backends: %s", formatStates(s.states))
			}
		}
	}
	return writeReport(c, perTxn, samples)
}

// bench is what each round's runs take: the two tools, each run for a
// duration, and the server they are measured on.
type bench struct {
	tools    map[string]func(time.Duration) (sample, error)
	pmPID    int    // the postmaster, whose process tree is sampled
	adminDSN string // another database, for the bench's own queries
}

// sample is one run of tool at position pos of round: its warm-up, then
// the run with the server's commits, CPU and backends' states around it.
func (b bench) sample(ctx context.Context, c config, tool string, round, pos int) (sample, error) {
	if c.warmup > 0 {
		if _, err := b.tools[tool](c.warmup); err != nil {
			return sample{}, fmt.Errorf("round %d, %s warm-up: %w", round, tool, err)
		}
	}
	if err := sidebyside.WaitPostgresIdle(ctx, b.pmPID, database); err != nil {
		return sample{}, err
	}
	// Before the server's CPU is sampled: the count's own
	// connection is not the run's work.
	commits0, err := serverCommits(ctx, b.adminDSN)
	if err != nil {
		return sample{}, fmt.Errorf("round %d, %s: %w", round, tool, err)
	}
	sampler, err := collect.StartSampler(b.pmPID)
	if err != nil {
		return sample{}, err
	}
	var st *states
	if c.states > 0 {
		if st, err = startStates(ctx, b.adminDSN, database, c.states); err != nil {
			sampler.Stop()
			return sample{}, fmt.Errorf("round %d, %s: %w", round, tool, err)
		}
	}
	idle0 := machineIdle()
	s, err := b.tools[tool](c.duration)
	idle := machineIdle().since(idle0)
	if st != nil {
		var sterr error
		s.states, sterr = st.finish()
		err = errors.Join(err, sterr)
	}
	werr := sidebyside.WaitPostgresIdle(ctx, b.pmPID, database)
	u, serr := sampler.Stop()
	// After the sessions are gone: a backend reports its counts
	// when it exits at the latest.
	commits1, cerr := serverCommits(ctx, b.adminDSN)
	if err = errors.Join(err, werr, serr, cerr); err != nil {
		return sample{}, fmt.Errorf("round %d, %s: %w", round, tool, err)
	}
	s.tool, s.round, s.position, s.idle = tool, round, pos+1, idle
	s.commits = float64(commits1-commits0) / c.duration.Seconds()
	if u.Server != nil {
		s.serverUS = 1e6 * u.Server.Seconds / (s.tps * c.duration.Seconds())
	}
	return s, nil
}

// serverCommits is the server's count of transactions committed in the
// bench's database (pg_stat_database.xact_commit), read from another
// database so that reading it commits nothing there.
func serverCommits(ctx context.Context, adminDSN string) (int64, error) {
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return 0, fmt.Errorf("read commit count: %w", err)
	}
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = $1", database).Scan(&n); err != nil {
		return 0, fmt.Errorf("read commit count: %w", err)
	}
	return n, nil
}

// runPgbench runs pgbench with args and reads its tps (without the
// connection time: transactions ÷ the time its clients ran).
// With group, pgbench runs in it (a duet's twin, -duet).
func runPgbench(ctx context.Context, bin, passFile string, group *cgroup.Group, args []string) (sample, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGPASSFILE="+passFile) // the managed server's password
	out, cpu, err := sidebyside.RunPeer(cmd, group)
	if err != nil {
		return sample{}, err
	}
	txns, tps, err := sidebyside.PgbenchResult(out)
	if err != nil {
		return sample{}, err
	}
	return sample{tps: tps, clientUS: 1e6 * cpu.Seconds() / float64(txns)}, nil
}

func writeReport(c config, perTxn int, samples []sample) error {
	w := sidebyside.NewReport("obsbench's pgbench workload vs pgbench", c.command)
	p := w.Line
	p("- server: managed PostgreSQL %s; pgbench -i's tables at scale %d; built-in script %s (%d statements per transaction)", c.version, c.scale, c.script, perTxn)
	p("- %d clients each; obsbench: `--workload pgbench --script %s --query-mode %s`, %d driver thread(s); pgbench: `-n -M %s -b %s -j %d`", c.clients, c.script, c.mode, c.procs, c.mode, c.script, c.pgbenchThreads)
	p("- each run: %v warm-up run, then a %v measured run with new sessions; %d rounds, order seed %d\n", c.warmup, c.duration, c.rounds, c.seed)
	p("transactions/s: obsbench, statements completed in the window ÷ %d ÷ duration; pgbench, its `tps` without the connection time.", perTxn)
	p("server commits/s: the server's count of transactions committed in the database (pg_stat_database) from before the run until its sessions are gone, ÷ duration: a check on both tools' counts (it includes pgbench's connection time and obsbench's statements in flight when the window closed).")
	p("client CPU µs/transaction: the tool's own CPU over the measured run ÷ its transactions.")
	p("server CPU µs/transaction: the server's processes (obsbench's sampler: the postmaster's tree and what it reaped) from before the run's sessions open until they are gone ÷ its transactions.")
	p("idle: the machine's idle share of all its CPU time over the run (/proc/stat), the time nothing was ready to run.\n")
	p("| round | # | tool | transactions/s | server commits/s | client CPU µs/txn | server CPU µs/txn | idle |")
	p("|---:|---:|---|---:|---:|---:|---:|---:|")
	for _, s := range samples {
		p("| %d | %d | %s | %.0f | %.0f | %.1f | %.1f | %.1f%% |", s.round, s.position, s.tool, s.tps, s.commits, s.clientUS, s.serverUS, 100*s.idle)
	}
	med := map[string][4]float64{}
	p("\n| tool | median transactions/s | min–max | median client CPU µs/txn | median server CPU µs/txn | median idle |")
	p("|---|---:|---|---:|---:|---:|")
	for _, tool := range []string{"obsbench", "pgbench"} {
		var tps, cpu, server, idle []float64
		for _, s := range samples {
			if s.tool == tool {
				tps, cpu = append(tps, s.tps), append(cpu, s.clientUS)
				server, idle = append(server, s.serverUS), append(idle, s.idle)
			}
		}
		lo, hi := slices.Min(tps), slices.Max(tps)
		med[tool] = [4]float64{stats.Median(tps), stats.Median(cpu), stats.Median(server), stats.Median(idle)}
		p("| %s | %.0f | %.0f–%.0f | %.1f | %.1f | %.1f%% |", tool, med[tool][0], lo, hi, med[tool][1], med[tool][2], 100*med[tool][3])
	}
	ratio := med["obsbench"][0] / med["pgbench"][0]
	verdict := "PASS"
	if ratio < goal {
		verdict = "FAIL"
	}
	p("\n**obsbench transactions/s ÷ pgbench transactions/s = %.3f** (goal ≥ %.2f: %s); client CPU per transaction ratio %.2f, server CPU per transaction ratio %.2f.", ratio, goal, verdict, med["obsbench"][1]/med["pgbench"][1], med["obsbench"][2]/med["pgbench"][2])
	if c.states > 0 {
		writeStates(p, samples, c.states, c.clients)
	}
	if c.rounds < 3 {
		p("\nOnly %d round(s): a smoke test, not a measurement (use 3 or more).", c.rounds)
	}
	return sidebyside.Publish(c.out, w.String())
}

// cpuTimes are the machine's idle and total CPU ticks (/proc/stat).
type cpuTimes struct{ idle, total float64 }

func machineIdle() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		panic(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	var t cpuTimes
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		if i < 8 { // user..steal; guest time is already in user
			t.total += v
		}
		if i == 3 || i == 4 { // idle, iowait
			t.idle += v
		}
	}
	return t
}

// since is the idle share of the CPU time between before and t.
func (t cpuTimes) since(before cpuTimes) float64 {
	if t.total == before.total {
		return 0
	}
	return (t.idle - before.idle) / (t.total - before.total)
}

// pgbenchArgs are pgbench's arguments against pg, but for -T.
func (c config) pgbenchArgs(pg *postgres.Instance) []string {
	return []string{"-n", "-M", string(c.mode), "-b", c.script, "-c", strconv.Itoa(c.clients),
		"-j", strconv.Itoa(c.pgbenchThreads), "-h", pg.SocketDir(), "-p", strconv.Itoa(pg.Port()), "-U", "postgres", database}
}

// workload is obsbench's pgbench workload running c's script, and the
// script's statements per transaction (obsbench counts statements).
func (c config) workload() (workload.Meta, int, error) {
	script, err := pgbench.Builtin(c.script)
	if err != nil {
		return workload.Meta{}, 0, err
	}
	meta, err := pgbench.Meta(pgbench.Options{Scripts: []pgbench.Weighted{{Script: script, Weight: 1}}, Seed: c.seed, Mode: c.mode}).
		WithParams(map[string]int{"scale": c.scale})
	perTxn := 0
	for _, cmd := range script.Commands {
		if cmd.Kind == pgbench.SQL {
			perTxn++
		}
	}
	return meta, perTxn, err
}
