// Command sampler-queries measures what one sample of a wait sampler costs
// on PostgreSQL, before any effect on a workload: the CPU of the server
// process that answers it and of this client, per sample, for obsbench's
// query of pg_stat_activity and for the other ways PostgreSQL 15 offers to
// read its sessions' wait events. It tells how far a choice of query can
// take the sampler's cost at 10 ms (bench/collectors measures that cost on
// a running workload).
//
//	go run ./bench/sampler-queries [-rounds 3] [-samples 300] [-interval 10ms] [-sessions 16] [-seed 1]
//
// It starts one managed PostgreSQL with pg_wait_sampling loaded (its own
// collector slowed to one sample a minute, so that only the read measured
// here costs anything), holds -sessions connections in pg_sleep (active,
// waiting: what the sampler lists) and 4 idle ones, then in each round, in
// an order drawn from -seed, takes -samples samples with each variant at
// -interval on a new connection, while -busy processes keep the CPUs busy
// (on this VM a sample that wakes an idle CPU costs several times more).
// It writes RESULT.md beside this file.
package main

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/engine/postgres"
)

const database = "obsbench"

type config struct {
	rounds, samples, sessions int
	busy                      int
	interval                  time.Duration
	seed                      uint64
	out, command              string
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 3, "rounds; each variant once per round")
	flag.IntVar(&c.samples, "samples", 300, "samples per variant and round")
	flag.DurationVar(&c.interval, "interval", 10*time.Millisecond, "time between samples, as obsbench's --waits")
	flag.IntVar(&c.sessions, "sessions", 16, "sessions kept active (in pg_sleep) for the sampler to list")
	flag.IntVar(&c.busy, "busy", runtime.NumCPU(), "processes that keep the CPUs busy meanwhile (a shell loop each), as a workload does: a machine with idle CPUs pays for waking them up in every sample")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the variants' order in each round")
	flag.StringVar(&c.out, "out", "bench/sampler-queries/RESULT.md", "report file")
	flag.Parse()
	c.command = sidebyside.Command("sampler-queries")
	sidebyside.Main("sampler-queries", func(ctx context.Context) error { return run(ctx, c) })
}

var logf = sidebyside.Logger("sampler-queries")

// variant is one way to take samples: per call, per of them.
type variant struct {
	name, what string
	per        int // samples per call
	// sample takes a sample on its own connection; nil: obsbench's
	// postgres.WaitSource, one at a time or in batches of per.
	sample func(ctx context.Context, conn *pgx.Conn) (rows int, err error)
}

func query(sql string) func(ctx context.Context, conn *pgx.Conn) (int, error) {
	return func(ctx context.Context, conn *pgx.Conn) (int, error) {
		rows, err := conn.Query(ctx, sql)
		if err != nil {
			return 0, err
		}
		var pid int32
		var wait string
		n := 0
		_, err = pgx.ForEachRow(rows, []any{&pid, &wait}, func() error { n++; return nil })
		return n, err
	}
}

// batchSize is the batch variant's samples per call: obsbench's at 10 ms.
const batchSize = 10

func variants() []variant {
	return []variant{
		{name: "select-1", what: "`SELECT 1`: the round trip alone, the floor of any per-sample query", per: 1,
			sample: query("SELECT 1::int4, ''")},
		{name: "one-at-a-time", what: "obsbench's sampler query (`pg_stat_activity`, client backends that are active), one sample a query (`postgres.WaitSource.ActiveWaits`)", per: 1},
		{name: "function", what: "the same rows from `pg_stat_get_activity(NULL)`, without the view's joins", per: 1,
			sample: query(`SELECT pid, coalesce(wait_event_type || ':' || wait_event, '') FROM pg_stat_get_activity(NULL)
				WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()`)},
		{name: "idset", what: "every backend's pid and wait by `pg_stat_get_backend_*()` (no state: idle sessions listed too, filtered by the client)", per: 1,
			sample: query(`SELECT pg_stat_get_backend_pid(b), coalesce(pg_stat_get_backend_wait_event_type(b) || ':' || pg_stat_get_backend_wait_event(b), '')
				FROM pg_stat_get_backend_idset() b`)},
		{name: "wait-sampling", what: "`pg_wait_sampling_get_current(NULL)`: every process's wait, read from shared memory by the extension", per: 1,
			sample: query(`SELECT pid, coalesce(event_type || ':' || event, '') FROM pg_wait_sampling_get_current(NULL)`)},
		{name: "batch", what: fmt.Sprintf("the same query %d times a call, the server sleeping between samples (`postgres.WaitSource.BatchWaits`, what obsbench's sampler does at 10 ms; no /proc file read, since every session here reports a wait)", batchSize), per: batchSize},
	}
}

// sample is one variant's measurement in one round.
type sample struct {
	variant            string
	samples, rows      int
	serverUS, clientUS float64 // CPU per sample
}

func run(ctx context.Context, c config) error {
	pg, _, stop, err := sidebyside.StartPostgres(ctx, database, map[string]string{
		"shared_preload_libraries":         "pg_wait_sampling",
		"pg_wait_sampling.profile_period":  "60000",
		"pg_wait_sampling.history_period":  "60000",
		"pg_wait_sampling.profile_queries": "off",
	}, logf)
	if err != nil {
		return err
	}
	defer stop()
	dsn := pg.DSN(database)
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_wait_sampling"); err != nil {
		return err
	}
	var version string
	if err := admin.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		return err
	}
	stopLoad, err := holdSessions(ctx, dsn, c.sessions, 4)
	if err != nil {
		return err
	}
	defer stopLoad()

	stopBusy, err := keepBusy(c.busy)
	if err != nil {
		return err
	}
	defer stopBusy()
	srv := postgres.New(dsn, postgres.Options{})
	vs := variants()
	byName := map[string]variant{}
	names := make([]string, len(vs))
	for i, v := range vs {
		byName[v.name], names[i] = v, v.name
	}
	var got []sample
	for round := 1; round <= c.rounds; round++ {
		for _, name := range sidebyside.Order(c.seed, round, names...) {
			s, err := measure(ctx, c, srv, dsn, byName[name])
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			logf("round %d %-14s server %6.1f µs, client %6.1f µs per sample, %.1f rows", round, name, s.serverUS, s.clientUS, float64(s.rows)/float64(s.samples))
			got = append(got, s)
		}
	}
	return sidebyside.Publish(c.out, report(c, version, vs, got))
}

// keepBusy starts n processes that spin until the returned func kills
// them. They are children, not threads of this process, so that this
// process's CPU stays the sampler client's.
func keepBusy(n int) (func(), error) {
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	}
	for i := 0; i < n; i++ {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}

// holdSessions opens active sessions (each in one long pg_sleep) and idle
// ones; the returned func ends them.
func holdSessions(ctx context.Context, dsn string, active, idle int) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	var conns []*pgx.Conn
	var wg sync.WaitGroup
	stop := func() {
		cancel()
		wg.Wait()
		for _, c := range conns {
			c.Close(context.Background())
		}
	}
	for i := 0; i < active+idle; i++ {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			stop()
			return nil, err
		}
		conns = append(conns, conn)
		if i < active {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn.Exec(ctx, "SELECT pg_sleep(3600)") // ends when ctx is cancelled
			}()
		}
	}
	time.Sleep(200 * time.Millisecond) // the sleeps have started
	return stop, nil
}

// measure takes c.samples samples with v on a new connection, after a
// warm-up of 20, paced at c.interval (the batch paces itself), and returns
// the CPU per sample of the connection's server process and of this
// process.
func measure(ctx context.Context, c config, srv *postgres.Server, dsn string, v variant) (sample, error) {
	var take func(ctx context.Context) (int, error)
	var pid int
	var closeConn func()
	if v.sample == nil { // obsbench's own
		ws, err := srv.OpenWaits(ctx)
		if err != nil {
			return sample{}, err
		}
		closeConn = func() { ws.Close(context.Background()) }
		pid = ws.BackendPID()
		take = func(ctx context.Context) (int, error) { w, err := ws.ActiveWaits(ctx); return len(w), err }
		if v.per > 1 {
			take = func(ctx context.Context) (int, error) {
				b, err := ws.(collect.BatchWaitSource).BatchWaits(ctx, v.per, c.interval, true)
				n := 0
				for _, w := range b {
					n += len(w.Waits)
				}
				return n, err
			}
		}
	} else {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return sample{}, err
		}
		closeConn = func() { conn.Close(context.Background()) }
		pid = int(conn.PgConn().PID())
		take = func(ctx context.Context) (int, error) { return v.sample(ctx, conn) }
	}
	defer closeConn()
	clock, err := collect.OpenTaskClock(pid)
	if err != nil {
		return sample{}, err
	}
	defer clock.Close()
	calls := (c.samples + v.per - 1) / v.per
	warm := (20 + v.per - 1) / v.per
	for i := 0; i < warm; i++ {
		if _, err := take(ctx); err != nil {
			return sample{}, err
		}
	}
	server0, err := clock.Read()
	if err != nil {
		return sample{}, err
	}
	client0 := sidebyside.SelfCPU()
	var tick *time.Ticker
	if v.per == 1 {
		tick = time.NewTicker(c.interval)
		defer tick.Stop()
	}
	rows := 0
	for i := 0; i < calls; i++ {
		if tick != nil {
			select {
			case <-ctx.Done():
				return sample{}, ctx.Err()
			case <-tick.C:
			}
		}
		n, err := take(ctx)
		if err != nil {
			return sample{}, err
		}
		rows += n
	}
	client := sidebyside.SelfCPU() - client0
	server1, err := clock.Read()
	if err != nil {
		return sample{}, err
	}
	n := calls * v.per
	return sample{variant: v.name, samples: n, rows: rows,
		serverUS: float64((server1 - server0).Microseconds()) / float64(n),
		clientUS: float64(client.Microseconds()) / float64(n)}, nil
}
