package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/fleet"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// RegisterTimeout bounds the wait for every worker to register.
var RegisterTimeout = time.Minute

// WorkerCommand is how a coordinator starts a local worker: this
// executable's worker command. Tests of a command replace it.
var WorkerCommand = func() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{exe, "worker"}, nil
}

// checkWorkers refuses --workers and --launcher where they cannot apply.
func (c runConfig) checkWorkers() error {
	if c.Workers == 0 {
		if c.given["launcher"] {
			return usagef("--launcher %s starts the workers of --workers: give --workers N", c.Launcher)
		}
		return nil
	}
	switch {
	case c.Workers < 0 || c.Workers > 64:
		return usagef("--workers %d: want 1 to 64 worker processes, or 0 to run the sessions in this process", c.Workers)
	case c.Launcher != "" && c.Launcher != "local":
		return usagef("--launcher %s: want local (worker processes on this machine); it is the only launcher so far", c.Launcher)
	case c.Method == "instructions":
		return usagef("--workers spreads sessions that run at once; --method instructions runs one session at a time under valgrind")
	case c.Workload == "pgbench" || c.Workload == "sql" || c.Workload == "replay":
		return usagef("--workers with --workload %s: workers receive the experiment's spec, not its script or capture files, so they cannot run it yet; run it without --workers", c.Workload)
	case c.Clients < c.Workers:
		return usagef("--workers %d share %d session(s): give --clients at least %d", c.Workers, c.Clients, c.Workers)
	}
	e, _ := engine.Lookup(c.Engine)
	if _, ok := e.(engine.SessionOpener); !ok {
		return usagef("--workers: the %s engine cannot open sessions in worker processes yet", c.Engine)
	}
	return nil
}

// startWorkers starts c.Workers local workers that open their sessions on
// target's server, and waits until all have registered.
func startWorkers(ctx context.Context, c runConfig, target engine.Server, logf func(string, ...any)) (*fleet.Local, error) {
	ss, ok := target.(engine.SessionServer)
	if !ok {
		return nil, usagef("--workers: this %s server cannot give workers its address", c.Engine)
	}
	cmd, err := WorkerCommand()
	if err != nil {
		return nil, err
	}
	s := c.Spec
	s.DSN = "" // the workers reach the server by its address, below
	logf("starting %d local workers", c.Workers)
	return fleet.StartLocal(ctx, fleet.LocalConfig{
		Config:  fleet.Config{Workers: c.Workers, Spec: s, Address: ss.SessionAddress(), Log: logf},
		Command: cmd, LogDir: filepath.Join(c.Out, "workers"), Register: RegisterTimeout,
	})
}

// Worker runs sessions for the coordinator at addr (obsbench worker)
// until it ends the experiment.
func Worker(ctx context.Context, addr string, index int, token string, stderr io.Writer) error {
	return fleet.Work(ctx, fleet.WorkerConfig{Coordinator: addr, Token: token, Index: index, Log: logTo(stderr), Build: buildWorker})
}

// buildWorker turns the spec a coordinator sent into the workload and
// the dialer of a worker's sessions.
func buildWorker(s spec.Spec, a engine.SessionAddress) (workload.Meta, driver.Dialer, error) {
	e, err := engine.Lookup(s.Engine)
	if err != nil {
		return workload.Meta{}, nil, err
	}
	opener, ok := e.(engine.SessionOpener)
	if !ok {
		return workload.Meta{}, nil, fmt.Errorf("the %s engine cannot open sessions in a worker", s.Engine)
	}
	wl, err := lookupRegistered(s, Given{})
	if err != nil {
		return wl, nil, err
	}
	if wl, err = wl.WithParams(s.Params); err != nil {
		return wl, nil, err
	}
	dial, err := opener.Sessions(a)
	return wl, dial, err
}
