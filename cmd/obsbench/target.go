package main

import (
	"context"
	"fmt"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/workload"
)

// pgTarget adapts the PostgreSQL engine (and, when managed, its server) to
// what the experiment runner consumes.
type pgTarget struct {
	*postgres.Server
	managed *server.Postgres // nil for an external server
}

func (t pgTarget) Apply(ctx context.Context, o observer.Observer) (experiment.Applied, error) {
	a, err := t.Server.Apply(ctx, o)
	if err != nil {
		return nil, err
	}
	return pgApplied{a}, nil
}

func (t pgTarget) Dial(ctx context.Context) (driver.Session, error) {
	return t.Server.Connect(ctx)
}

func (t pgTarget) OpenWaits(ctx context.Context) (experiment.WaitSource, error) {
	return t.Server.OpenWaits(ctx)
}

// Counters adds, on a managed server, the bytes of its stderr stream that
// obsbench read: the log volume of observers that write to the stream.
func (t pgTarget) Counters(ctx context.Context) (map[string]float64, error) {
	c, err := t.Server.Counters(ctx)
	if err == nil && t.managed != nil {
		c["log_stream_bytes"] = float64(t.managed.Stream().Bytes())
	}
	return c, err
}

// StreamBytes is what obsbench has read of a managed server's stderr
// stream (0 for an external server: its stream is not visible).
func (t pgTarget) StreamBytes() int64 {
	if t.managed == nil {
		return 0
	}
	return t.managed.Stream().Bytes()
}

// ServerFaults reports the managed server's complaints that it could not
// write its log; an external server's stderr is not visible.
func (t pgTarget) ServerFaults() (int64, string) {
	if t.managed == nil {
		return 0, ""
	}
	return t.managed.ServerFaults()
}

func (t pgTarget) ServerPID() int {
	if t.managed == nil {
		return 0
	}
	pid, err := t.managed.PID()
	if err != nil {
		return 0
	}
	return pid
}

type pgApplied struct{ *postgres.Applied }

func (a pgApplied) StartEvents(ctx context.Context, tag string) (experiment.EventCounter, error) {
	e, err := a.Applied.StartEvents(ctx, tag)
	if e == nil || err != nil {
		return nil, err
	}
	return e, nil
}

// managedTarget is a pgTarget whose server obsbench manages: it restarts
// the server before every run (see experiment.Resetter), and waits for its
// standby, if it has one, to stream again.
type managedTarget struct {
	pgTarget
	standby *server.Standby
}

func (t managedTarget) Reset(ctx context.Context) error {
	if err := t.managed.Restart(ctx); err != nil {
		return err
	}
	if t.standby != nil {
		return t.standby.WaitStreaming(ctx)
	}
	return nil
}

// CompanionPIDs is the standby's postmaster: its CPU is the system's.
func (t managedTarget) CompanionPIDs() []int {
	if t.standby == nil {
		return nil
	}
	if pid, err := t.standby.PID(); err == nil {
		return []int{pid}
	}
	return nil
}

// managedSetup is what a managed server is started with besides itself.
type managedSetup struct {
	standby      string // none, async or sync
	standbyDelay time.Duration
}

// externalSchema holds the dataset on an external server: a schema of its
// own in the DSN's database, never the user's tables.
const externalSchema = "obsbench"

// dbTarget is a server under test as the commands use it, whatever its
// engine.
type dbTarget interface {
	experiment.Target
	Load(ctx context.Context, d dataset.Dataset) error
	Setup(ctx context.Context, stmts []string) error
	Version(ctx context.Context) (string, error)
	// ChangedSettings are the server's settings not at their defaults.
	ChangedSettings(ctx context.Context) (map[string]string, error)
}

// openTarget connects to the --dsn server of engine, or starts a managed
// one when dsn is empty. It returns the server, the same as the runner
// should use it (with a Reset on managed servers), and what stops it.
func openTarget(ctx context.Context, engine, dsn string, setup managedSetup, logf func(string, ...any)) (dbTarget, experiment.Target, func(), error) {
	switch engine {
	case "mariadb":
		return openMariaDB(ctx, dsn, setup, logf)
	case "sqlserver":
		return openSQLServer(ctx, dsn, logf)
	}
	t, tgt, stop, err := openPostgres(ctx, dsn, setup, logf)
	return t, tgt, stop, err
}

// openPostgres is openTarget for PostgreSQL.
func openPostgres(ctx context.Context, dsn string, setup managedSetup, logf func(string, ...any)) (pgTarget, experiment.Target, func(), error) {
	if dsn != "" {
		if err := (postgres.New(dsn, postgres.Options{})).Ping(ctx); err != nil {
			return pgTarget{}, nil, nil, usagef("--dsn: %v (%s)", err, redactDSN(dsn))
		}
		// Every change to a server obsbench does not manage is journaled
		// before it is made, so that `obsbench restore` can undo it
		// after a crash or kill -9.
		j, err := journal.Create(journal.Dir(), redactDSN(dsn))
		if err != nil {
			return pgTarget{}, nil, nil, fmt.Errorf("%w (obsbench journals its changes to an external server; set OBSBENCH_STATE_DIR to a writable directory)", err)
		}
		t := pgTarget{Server: postgres.New(dsn, postgres.Options{Journal: j, Schema: externalSchema})}
		stop := func() {
			if err := j.Close(); err != nil {
				logf("%v", err)
			}
		}
		return t, t, stop, nil
	}
	bin, err := server.FindPostgresBin()
	if err != nil {
		return pgTarget{}, nil, nil, usageError{err}
	}
	pg, err := server.StartPostgres(ctx, server.PostgresOptions{BinDir: bin, Log: logf})
	if err != nil {
		return pgTarget{}, nil, nil, err
	}
	stop := func() {
		if err := pg.Stop(); err != nil {
			logf("stopping the managed server: %v", err)
		}
	}
	var standby *server.Standby
	if setup.standby != "" && setup.standby != "none" {
		standby, err = pg.StartStandby(ctx, server.StandbyOptions{Sync: setup.standby == "sync", Delay: setup.standbyDelay, Log: logf})
		if err != nil {
			stop()
			return pgTarget{}, nil, nil, fmt.Errorf("start the standby: %w", err)
		}
		stopPrimary := stop
		stop = func() {
			if err := standby.Stop(); err != nil {
				logf("stopping the standby: %v", err)
			}
			stopPrimary()
		}
	}
	dsn = pg.DSN(datasetDatabase)
	if err := postgres.CreateDatabase(ctx, dsn); err != nil {
		stop()
		return pgTarget{}, nil, nil, err
	}
	t := pgTarget{Server: postgres.New(dsn, postgres.Options{Restart: pg.Restart, Host: pg}), managed: pg}
	return t, managedTarget{pgTarget: t, standby: standby}, stop, nil
}

// prepareData loads the workload's dataset and runs its set-up.
func prepareData(ctx context.Context, t dbTarget, engine string, wl workload.Meta, ds dataset.Dataset, logf func(string, ...any)) error {
	logf("loading dataset %s", ds.Name)
	if err := t.Load(ctx, ds); err != nil {
		return err
	}
	return t.Setup(ctx, wl.SetupFor(engine))
}
