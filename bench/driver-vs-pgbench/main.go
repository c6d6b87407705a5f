// Command driver-vs-pgbench compares obsbench's load driver with pgbench:
// the same managed PostgreSQL, the same query, the same number of prepared
// sessions, run alternately in a seeded random order for several rounds. It
// writes a markdown report and prints it. See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/workload"
)

const (
	database     = "obsbench"
	workloadName = "credit-top1"
)

type config struct {
	rounds, clients   int
	duration, warmup  time.Duration
	out               string
	seed              uint64
	command, postgres string // filled in by run
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 5, "rounds; each runs both tools once, in a seeded random order")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured time of each run (whole seconds: pgbench -T)")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured warm-up run before each measured run (whole seconds)")
	flag.IntVar(&c.clients, "clients", 16, "client sessions of both tools")
	flag.StringVar(&c.out, "out", "bench/driver-vs-pgbench/RESULT.md", "markdown report to write")
	flag.Uint64Var(&c.seed, "seed", 0, "seed of the run order (default: from the clock)")
	flag.Parse()
	switch {
	case c.rounds < 1 || c.clients < 1:
		fail(fmt.Errorf("-rounds and -clients must be at least 1"))
	case c.duration < time.Second || c.duration%time.Second != 0:
		fail(fmt.Errorf("-duration %v: want whole seconds, at least 1s", c.duration))
	case c.warmup < 0 || c.warmup%time.Second != 0:
		fail(fmt.Errorf("-warmup %v: want whole seconds", c.warmup))
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	c.command = strings.Join(append([]string{"go run ./bench/driver-vs-pgbench"}, os.Args[1:]...), " ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		stop()
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "driver-vs-pgbench:", err)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "driver-vs-pgbench: "+format+"\n", args...)
}

// run sets up the server, runs the rounds and writes the report. The server
// is stopped on every return, a cancelled context (Ctrl-C) included.
func run(ctx context.Context, c config) error {
	meta, err := workload.Lookup(workloadName)
	if err != nil {
		return err
	}
	ds, err := dataset.Lookup(meta.Dataset)
	if err != nil {
		return err
	}
	sql, err := workloadSQL(ctx, meta)
	if err != nil {
		return err
	}
	bin, err := server.FindPostgresBin()
	if err != nil {
		return err
	}
	pg, err := server.StartPostgres(ctx, server.PostgresOptions{BinDir: bin, Log: logf})
	if err != nil {
		return err
	}
	defer func() {
		if err := pg.Stop(); err != nil {
			logf("stopping the managed server: %v", err)
		}
	}()
	dsn := pg.DSN(database)
	if err := postgres.CreateDatabase(ctx, dsn); err != nil {
		return err
	}
	srv := postgres.New(dsn, postgres.Options{Restart: pg.Restart})
	logf("loading dataset %s", ds.Name)
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
	pmPID, err := pg.PID()
	if err != nil {
		return err
	}
	b := &bench{
		srv: srv, wl: meta, clients: c.clients, warmup: c.warmup, duration: c.duration,
		pgbench: filepath.Join(bin, "pgbench"), script: script, pg: pg, pmPID: pmPID,
	}
	logf("seed %d; %d rounds of 2 x (%v warm-up + %v measured)", c.seed, c.rounds, c.warmup, c.duration)

	var samples []sample
	for round := 1; round <= c.rounds; round++ {
		tools := []string{toolDriver, toolPgbench}
		rand.New(rand.NewPCG(c.seed, uint64(round))).Shuffle(len(tools), func(i, j int) {
			tools[i], tools[j] = tools[j], tools[i]
		})
		for pos, tool := range tools {
			s, err := b.measure(ctx, tool)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, tool, err)
			}
			s.round, s.position = round, pos+1
			samples = append(samples, s)
			logf("round %d/%d %-8s %9.0f stmt/s  client %5.1f µs/stmt  server %5.1f µs/stmt",
				round, c.rounds, tool, s.rate(), s.clientMicros(), s.serverMicros())
		}
	}
	return writeReport(c, sql, samples)
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
