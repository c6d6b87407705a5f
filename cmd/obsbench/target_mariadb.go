package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/server"
)

// mdbTarget adapts the MariaDB engine (and, when managed, its server) to
// what the experiment runner consumes.
type mdbTarget struct {
	*mariadb.Server
	managed *server.MariaDB // nil for an external server
}

func (t mdbTarget) Apply(ctx context.Context, o observer.Observer) (experiment.Applied, error) {
	a, err := t.Server.Apply(ctx, o)
	if err != nil {
		return nil, err
	}
	return mdbApplied{a}, nil
}

func (t mdbTarget) Dial(ctx context.Context) (driver.Session, error) { return t.Server.Connect(ctx) }

func (t mdbTarget) OpenWaits(ctx context.Context) (experiment.WaitSource, error) {
	return t.Server.OpenWaits(ctx)
}

// ServerFaults reports writes the managed server's slow directory refused.
func (t mdbTarget) ServerFaults() (int64, string) {
	if t.managed == nil {
		return 0, ""
	}
	return t.managed.ServerFaults()
}

func (t mdbTarget) ServerPID() int {
	if t.managed == nil {
		return 0
	}
	pid, _ := t.managed.PID()
	return pid
}

type mdbApplied struct{ *mariadb.Applied }

func (a mdbApplied) StartEvents(ctx context.Context, tag string) (experiment.EventCounter, error) {
	e, err := a.Applied.StartEvents(ctx, tag)
	if e == nil || err != nil {
		return nil, err
	}
	return e, nil
}

// managedMariaDB restarts its server before every run (experiment.Resetter)
// and waits for its replica, if it has one, to be connected again.
type managedMariaDB struct {
	mdbTarget
	replica *server.Replica
}

func (t managedMariaDB) Reset(ctx context.Context) error {
	if err := t.managed.Restart(ctx); err != nil {
		return err
	}
	if t.replica != nil {
		return t.replica.WaitStreaming(ctx)
	}
	return nil
}

// CompanionPIDs is the replica's server: its CPU is the system's.
func (t managedMariaDB) CompanionPIDs() []int {
	if t.replica == nil {
		return nil
	}
	if pid, err := t.replica.PID(); err == nil {
		return []int{pid}
	}
	return nil
}

// openMariaDB connects to the --dsn MariaDB, or starts a managed one.
func openMariaDB(ctx context.Context, dsn string, setup managedSetup, logf func(string, ...any)) (dbTarget, experiment.Target, func(), error) {
	if dsn != "" {
		probe, err := mariadb.New(dsn, mariadb.Options{})
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
		srv, _ := mariadb.New(dsn, mariadb.Options{Journal: j, Database: externalSchema})
		t := mdbTarget{Server: srv}
		stop := func() {
			if err := j.Close(); err != nil {
				logf("%v", err)
			}
		}
		return t, t, stop, nil
	}
	m, err := server.StartMariaDB(ctx, server.MariaDBOptions{Log: logf})
	if err != nil {
		if errors.Is(err, server.ErrNoMariaDB) {
			return nil, nil, nil, usageError{err}
		}
		return nil, nil, nil, err
	}
	stop := func() {
		if err := m.Stop(); err != nil {
			logf("stopping the managed server: %v", err)
		}
	}
	var replica *server.Replica
	if setup.standby != "" && setup.standby != "none" {
		replica, err = m.StartReplica(ctx, server.ReplicaOptions{SemiSync: setup.standby == "sync", Delay: setup.standbyDelay, Log: logf})
		if err != nil {
			stop()
			return nil, nil, nil, fmt.Errorf("start the replica: %w", err)
		}
		stopPrimary := stop
		stop = func() {
			if err := replica.Stop(); err != nil {
				logf("stopping the replica: %v", err)
			}
			stopPrimary()
		}
	}
	srv, err := mariadb.New(m.DSN(datasetDatabase), mariadb.Options{Startup: m, Host: m, Password: m.Password()})
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	t := mdbTarget{Server: srv, managed: m}
	return t, managedMariaDB{mdbTarget: t, replica: replica}, stop, nil
}
