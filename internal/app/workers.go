package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/fleet"
	"github.com/obsbench/obsbench/internal/fleet/kube"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
	"github.com/obsbench/obsbench/internal/workloadspec"
)

// workerFlags are the flags of --workers.
var workerFlags = append([]string{"launcher", "advertise", "coordinator-port", "worker-prefix"}, spec.KubernetesFlags...)

// checkWorkers refuses --workers and --launcher where they cannot apply.
func (c Experiment) checkWorkers() error {
	if c.Workers == 0 {
		for _, f := range workerFlags {
			if c.IsChosen(f) {
				return usagef("--%s is for the workers of --workers: give --workers N", f)
			}
		}
		return nil
	}
	// The rest of what --workers and --launcher need, spec.Validate
	// checked; the sessions are known once the workload is.
	if c.Clients < c.Workers {
		return usagef("--workers %d share %d session(s): give --clients at least %d", c.Workers, c.Clients, c.Workers)
	}
	e, _ := engine.Lookup(c.Engine)
	if _, ok := e.(engine.SessionOpener); !ok {
		return usagef("--workers: the %s engine cannot open sessions in worker processes yet", c.Engine)
	}
	return nil
}

// workerPool is the workers of an experiment, registered and ready.
type workerPool interface {
	experiment.Load
	Close() error
}

// startWorkers starts c.Workers workers, with c.Launcher, that open their
// sessions on target's server, and waits until all have registered; local
// workers write their output in logDir.
func startWorkers(ctx context.Context, c Experiment, target engine.Server, logDir string, logf func(string, ...any)) (workerPool, error) {
	ss, ok := target.(engine.SessionServer)
	if !ok {
		return nil, usagef("--workers: this %s server cannot give workers its address", c.Engine)
	}
	s := c.Spec
	s.DSN = "" // the workers reach the server by its address, below
	cfg := fleet.Config{Workers: c.Workers, Spec: s, Address: ss.SessionAddress(), Files: c.files, Log: logf}
	if c.Launcher.Pods() {
		return kube.StartPods(ctx, kube.Start{Kubernetes: c.Kubernetes, Coordinator: c.Coordinator, Workers: c.Workers,
			Experiment: "e" + strconv.FormatUint(c.Seed%(1<<40), 36),
			StateDir:   c.out.StateDir, Getenv: c.out.Getenv, Client: c.out.KubeClient}, cfg, logf)
	}
	cmd, err := c.out.Worker()
	if err != nil {
		return nil, err
	}
	lc := fleet.LocalConfig{Config: cfg, Command: cmd, Prefix: c.WorkerPrefix, LogDir: logDir, Register: c.out.Register()}
	if co := c.Coordinator; co.Advertise != "" {
		lc.Listen = net.JoinHostPort(co.Advertise, strconv.Itoa(co.Port))
	}
	logf("starting %d local worker(s)", c.Workers)
	return fleet.StartLocal(ctx, lc)
}

// Worker runs sessions for the coordinator at addr (obsbench worker),
// with the credential it was given (fleet.Credential), until it ends the
// experiment.
func Worker(ctx context.Context, addr string, index int, credential string, stderr io.Writer) error {
	token, pin := fleet.ParseCredential(credential)
	return fleet.Work(ctx, fleet.WorkerConfig{Coordinator: addr, Token: token, Pin: pin, Index: index, Log: report.Notes(stderr), Build: buildWorker})
}

// buildWorker turns the spec a coordinator sent, with the files its
// workload reads, into the workload and the dialer of a worker's
// sessions.
func buildWorker(s spec.Spec, a engine.SessionAddress, files map[string][]byte) (workload.Meta, driver.Dialer, error) {
	e, err := engine.Lookup(s.Engine)
	if err != nil {
		return workload.Meta{}, nil, err
	}
	opener, ok := e.(engine.SessionOpener)
	if !ok {
		return workload.Meta{}, nil, fmt.Errorf("the %s engine cannot open sessions in a worker", s.Engine)
	}
	wl, _, err := workloadspec.Lookup(s, workloadspec.Sent(files))
	if err != nil {
		return wl, nil, err
	}
	if wl, err = wl.WithParams(s.Params); err != nil {
		return wl, nil, err
	}
	dial, err := opener.Sessions(a)
	return wl, dial, err
}
