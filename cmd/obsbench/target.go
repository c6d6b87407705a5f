package main

import (
	"context"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/server"
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
// the server before every run (see experiment.Resetter).
type managedTarget struct{ pgTarget }

func (t managedTarget) Reset(ctx context.Context) error { return t.managed.Restart(ctx) }
