package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// A duet's defaults, which the flags' help names: 16 phases (four blocks
// of A,B,B,A) of 2 s after 500 ms of warm-up, each on restarted twins:
// the default experiment's 80 phases within about five minutes. The
// twins' ratio, not a phase's length, is what cancels the drift.
const (
	DefaultDuetPhases   = 16
	DefaultDuetDuration = 2 * time.Second
	DefaultDuetWarmup   = 500 * time.Millisecond
)

// duetPhaseCost is what a duet phase takes beyond its warm-up and
// measured time: both twins restarted and the observer applied.
const duetPhaseCost = 800 * time.Millisecond

// splitExternalPhaseCost is the same for a split on an external server:
// nothing restarts, the shared part is applied and reverted by a reload,
// and the groups connect.
const splitExternalPhaseCost = 250 * time.Millisecond

// phaseCost is what one phase takes beyond its warm-up and measured time.
func (c Experiment) phaseCost() time.Duration {
	if c.Method == result.MethodSplit && c.DSN != "" {
		return splitExternalPhaseCost
	}
	return duetPhaseCost
}

// budgetDuet sizes a duet's phases to --max-time when it is given and
// --rounds is not: as many as the arms' timed phases fit, in whole
// blocks of four (A,B,B,A), never fewer than the default's. More phases
// of the same length narrow the interval as one over their root.
func (c *Experiment) budgetDuet() {
	if !c.duetBudgeted() {
		return
	}
	arms := len(c.observers) // the baseline's place is the A/A arm's
	if c.MeasureCollectors && c.Waits > 0 {
		arms++
	}
	if c.Method == result.MethodSplitDuet {
		arms += len(c.observers) // the split's A/A and each observer's split
	}
	phase := c.Duration + c.Warmup + c.phaseCost()
	n := int((c.MaxTime-c.probeTime())/(time.Duration(arms)*phase)) / 4 * 4
	c.Rounds = min(max(n, DefaultDuetPhases), 1000)
}

// probeTime is what --load's capacity probes take before the phases.
func (c Experiment) probeTime() time.Duration {
	if c.LoadPct <= 0 && len(c.Loads) == 0 {
		return 0
	}
	return experiment.LoadProbeTime(c.phaseCost())
}

// duetBudgeted says whether --max-time sizes the duet's phases; with
// --target-resolution it caps the phases the A/A arm asks for instead.
func (c Experiment) duetBudgeted() bool {
	return c.Method.Paired() && c.IsChosen("max-time") && !c.IsChosen("rounds") && c.TargetResolution == 0 && !c.resuming && !c.wl.FixedWork()
}

// chooseMethod is the method when none is given: a duet where one can
// run, since its twins feel the machine's drift in the same seconds,
// where rounds of restarted servers feel it in full (bench/duet/README.md
// has the comparison); else auto. why says what kept a duet out ("" for
// a duet). find is cgroup.Find on the experiment's root.
func (c Experiment) chooseMethod(find func() (cgroup.Hierarchy, error)) (method result.Method, why string) {
	e, _ := engine.Lookup(c.Engine)
	_, sessions := e.(engine.SessionOpener)
	switch {
	case !sessions:
		return result.MethodAuto, fmt.Sprintf("the %s engine cannot drive a twin from a worker process", c.Engine)
	case c.DSN != "" && c.TwinDSN == "":
		return result.MethodAuto, "an external server (--dsn) has no twin; give --twin-dsn, a second server with the same dataset, for a duet"
	case c.Standby.On():
		return result.MethodAuto, "--standby: twins with standbys are not supported yet"
	case c.Workers > 0:
		return result.MethodAuto, "--workers drives one server from several processes"
	case c.Replay.Passes > 0:
		return result.MethodAuto, "--replay-passes: a duet does not replay a capture"
	}
	if _, err := find(); err != nil {
		return result.MethodAuto, err.Error()
	}
	return result.MethodDuet, ""
}

// openTwin opens a duet's second server: a managed twin started like the
// first, or the external server of --twin-dsn, which must be another
// server than the first and already hold the dataset (it is checked, not
// loaded, so that a wrong twin is refused before anything changes).
func openTwin(ctx context.Context, c Experiment, first engine.Server, logf func(string, ...any)) (engine.Server, error) {
	if c.TwinDSN == "" {
		logf("starting the twin server")
	}
	twin, err := c.Open(ctx, engine.Options{DSN: c.TwinDSN, Log: logf}, "--twin-dsn")
	if err != nil {
		return nil, fmt.Errorf("twin: %w", err)
	}
	if c.TwinDSN == "" {
		return twin, nil
	}
	err = checkDistinct(ctx, first, twin)
	if err == nil {
		if verr := twin.Verify(ctx, c.ds); verr != nil {
			err = usagef("--twin-dsn: the twin does not hold the dataset: %v; load it on both servers the same way", verr)
		}
	}
	if err == nil {
		if pc, ok := twin.(engine.PermissionChecker); ok {
			_, err = pc.CheckPermissions(ctx, c.observers)
		}
	}
	if err != nil {
		engine.Close(twin, logf)
		return nil, err
	}
	return twin, nil
}

// twinsOf prepares what a duet needs beside its two servers: the twin's
// dataset when load (a twin started, not copied, loads it as the first
// did; an external one is only verified), a CPU group of an equal share
// for each twin's server and one for its load (journaled), and a worker
// process in each load group that drives its twin. closeAll stops the
// workers and removes the groups; the servers are the caller's.
func twinsOf(ctx context.Context, c Experiment, first, twin engine.Server, load bool, h cgroup.Hierarchy, logf func(string, ...any)) (_ *experiment.Twins, firstLoad experiment.Load, closeAll func(), err error) {
	var closers []func() error
	closeTwins := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil {
				logf("%v", err)
			}
		}
	}
	defer func() {
		if err != nil {
			// Not closeAll: a failed return has set it to nil.
			closeTwins()
		}
	}()
	if load {
		if err := engine.Prepare(ctx, twin, c.info.Dialect, c.wl, c.ds, logf); err != nil {
			return nil, nil, nil, fmt.Errorf("twin: %w", err)
		}
	}
	set, err := cgroup.NewSet(c.out.StateDir)
	if err != nil {
		return nil, nil, nil, err
	}
	closers = append(closers, set.Close)
	tw := &experiment.Twins{Target: twin, ShareCPUs: c.TwinQuota(runtime.NumCPU())}
	var loads [2]experiment.Load
	for i, s := range []engine.Server{first, twin} {
		name := experiment.TwinNames[i]
		g, err := set.Create(h, fmt.Sprintf("%d-twin-%s", os.Getpid(), name), tw.ShareCPUs)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("twin %s: %w", name, err)
		}
		tw.Groups[i] = g
		// The load's group has the same quota, which a driver (up to
		// half its server's CPU) does not reach: it keeps a runaway load
		// from taking the other twin's CPU, and its throttled time
		// shows the load was never held back.
		lg, err := set.Create(h, fmt.Sprintf("%d-twin-%s-load", os.Getpid(), name), tw.ShareCPUs)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("twin %s's load: %w", name, err)
		}
		tw.LoadGroups[i] = lg
		one := c
		one.Workers, one.Launcher = 1, spec.LauncherLocal
		pool, err := startWorkers(ctx, one, s, filepath.Join(c.Out, "twin-"+name), logf)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("twin %s: %w", name, err)
		}
		closers = append(closers, pool.Close)
		if l, ok := pool.(experiment.LocalLoad); ok {
			if err := lg.Add(l.PIDs()...); err != nil {
				return nil, nil, nil, err
			}
		}
		loads[i] = pool
	}
	tw.Load = loads[1]
	logf("duet: twins a and b, each server held to %.3g CPU, its load in a group of its own (cgroups in %s)", tw.ShareCPUs, h.Dir)
	return tw, loads[0], closeTwins, nil
}

// checkDistinct refuses an external twin that is the first server itself
// (another address of it): a duet of one server against itself would
// measure nothing.
func checkDistinct(ctx context.Context, first, twin engine.Server) error {
	fi, ok1 := first.(engine.Identifier)
	ti, ok2 := twin.(engine.Identifier)
	if !ok1 || !ok2 {
		return nil
	}
	same, err := engine.SameServer(ctx, fi, ti)
	if err != nil {
		return fmt.Errorf("compare --dsn and --twin-dsn: %w", err)
	}
	if same {
		return usagef("--twin-dsn reaches the same server as --dsn (one sees the other's session): a duet needs two distinct servers")
	}
	return nil
}
