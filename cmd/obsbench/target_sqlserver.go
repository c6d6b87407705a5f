package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/sqlserver"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/observer"
)

// mssqlTarget adapts the SQL Server engine to what the runner consumes.
// SQL Server is always external: obsbench cannot start one here.
type mssqlTarget struct{ *sqlserver.Server }

func (t mssqlTarget) Apply(ctx context.Context, o observer.Observer) (experiment.Applied, error) {
	a, err := t.Server.Apply(ctx, o)
	if err != nil {
		return nil, err
	}
	return mssqlApplied{a}, nil
}

func (t mssqlTarget) Dial(ctx context.Context) (driver.Session, error) { return t.Server.Connect(ctx) }

func (t mssqlTarget) OpenWaits(ctx context.Context) (experiment.WaitSource, error) {
	return t.Server.OpenWaits(ctx)
}

type mssqlApplied struct{ *sqlserver.Applied }

func (a mssqlApplied) StartEvents(ctx context.Context, tag string) (experiment.EventCounter, error) {
	e, err := a.Applied.StartEvents(ctx, tag)
	if e == nil || err != nil {
		return nil, err
	}
	return e, nil
}

// errNoManagedSQLServer is the answer to --engine sqlserver without --dsn.
var errNoManagedSQLServer = errors.New("--engine sqlserver needs --dsn sqlserver://user:password@host:1433: obsbench starts managed PostgreSQL and MariaDB servers only (SQL Server does not run here)")

// openSQLServer connects to the --dsn SQL Server, with a journal for the
// sessions and traces it will create.
func openSQLServer(ctx context.Context, dsn string, logf func(string, ...any)) (dbTarget, experiment.Target, func(), error) {
	if dsn == "" {
		return nil, nil, nil, usageError{errNoManagedSQLServer}
	}
	probe, err := sqlserver.New(dsn, sqlserver.Options{Database: externalSchema})
	if err != nil {
		return nil, nil, nil, usagef("--dsn: %v", err)
	}
	if err := probe.Ping(ctx); err != nil {
		return nil, nil, nil, usagef("--dsn: %v (%s)", err, redactDSN(dsn))
	}
	j, err := journal.Create(journal.Dir(), redactDSN(dsn))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w (obsbench journals its changes to an external server; set OBSBENCH_STATE_DIR to a writable directory)", err)
	}
	srv, _ := sqlserver.New(dsn, sqlserver.Options{Journal: j, Database: externalSchema})
	t := mssqlTarget{Server: srv}
	stop := func() {
		if err := j.Close(); err != nil {
			logf("%v", err)
		}
	}
	return t, t, stop, nil
}
