package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/study"
)

const (
	defaultReliability = 10 * time.Minute // the study's 10 minutes
	defaultThreshold   = 5.0              // the study's "under 5% is acceptable"
	reliabilityFile    = "reliability.json"
)

// auditStudy runs study 5: a long run of the audit observer whose trail
// is checked for one record per statement executed, then a concurrency
// sweep of each thousand-query workload with auditing off and on, judged
// against a threshold. Its own flags: --reliability-duration (0 skips the
// check), --threshold and --workloads (which of the two queries to sweep);
// every run flag may follow.
func auditStudy(ctx context.Context, st study.Study, args []string, stdout, stderr io.Writer) error {
	relDur, args, err := takeFlag(args, "reliability-duration", defaultReliability, time.ParseDuration)
	if err != nil {
		return err
	}
	threshold, args, err := takeFlag(args, "threshold", defaultThreshold, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	if err != nil {
		return err
	}
	workloads, args, err := takeFlag(args, "workloads", st.Workloads, func(s string) ([]string, error) {
		list := splitList(s)
		for _, w := range list {
			if !slices.Contains(st.Workloads, w) {
				return nil, fmt.Errorf("want some of %s", strings.Join(st.Workloads, ","))
			}
		}
		return list, nil
	})
	switch {
	case err != nil:
		return err
	case relDur < 0 || relDur > 24*time.Hour:
		return usagef("--reliability-duration %v: want 0 (skip) to 24h", relDur)
	case threshold <= 0 || threshold > 100:
		return usagef("--threshold %g: want a percentage above 0 and at most 100", threshold)
	}
	if values, _, _ := cutFlag(args, "clients"); len(values) > 0 {
		return usagef("--clients %s: study %s sweeps the session count (--sessions %s); give --sessions to change the counts", values[0], st.Name, st.Sessions)
	}
	argsFor := func(wl string) []string {
		return append([]string{"--engine", st.Engine, "--workload", wl, "--sessions", st.Sessions,
			"--observers", strings.Join(st.Observers(), ","), "--method", st.Method, "--waits", st.Waits}, ownParams(wl, args)...)
	}
	c, err := parseRun(argsFor(st.Workloads[0]), stderr)
	if err != nil {
		return err
	}
	if c.dryRun {
		for _, wl := range workloads {
			c, err := parseRun(argsFor(wl), stderr)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "== %s: workload %s ==\n", st.Name, wl)
			if err := dryRun(ctx, c, stdout); err != nil {
				return err
			}
		}
		return nil
	}
	base := c.out
	if err := checkOut(filepath.Join(base, "reliability")); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n%s\n\n", st.Title, st.Question)
	var errs []error
	if relDur > 0 {
		run, err := reliabilityRun(ctx, c, st, relDur, filepath.Join(base, "reliability"), stderr)
		if err != nil {
			errs = append(errs, fmt.Errorf("reliability: %w", err))
		} else {
			errs = append(errs, report.Reliability(stdout, run), incomplete(run))
			fmt.Fprintln(stdout)
		}
	}
	for _, wl := range workloads {
		if ctx.Err() != nil {
			break
		}
		c, err := parseRun(argsFor(wl), stderr)
		if err != nil {
			return err
		}
		c.out, c.study = filepath.Join(base, wl), st.Name
		// Checked here too: a used directory is bad input (exit 2), not
		// a failed sweep.
		if err := checkOut(c.out); err != nil {
			return err
		}
		points, err := runSweep(ctx, c, 1000, stdout, stderr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", wl, err))
		}
		if audit, ok := auditObserver(c); ok {
			fmt.Fprintf(stdout, "%s\n\n", thresholdVerdict(audit.Name, c.sweep, points, threshold))
		}
		errs = append(errs, gateSweep(c, points, nil))
	}
	for _, u := range st.Unmapped {
		fmt.Fprintf(stdout, "not reproduced: %s\n", u)
	}
	fmt.Fprintf(stdout, "\nresults: %s\n", base)
	return errors.Join(errs...)
}

// incomplete is an error when the reliability run failed or its trail
// does not hold one record per statement: the study's first verdict
// decides its exit code too.
func incomplete(r result.Run) error {
	switch ev := r.Events; {
	case r.Error != "":
		return fmt.Errorf("reliability run failed: %s", r.Error)
	case ev == nil:
		return fmt.Errorf("reliability: %s records no events", r.Condition)
	case ev.Error != "":
		return fmt.Errorf("reliability: events not counted: %s", ev.Error)
	case ev.Recorded != ev.Executed:
		return fmt.Errorf("reliability: the audit trail holds %d records for %d statements executed", ev.Recorded, ev.Executed)
	}
	return nil
}

// auditObserver is the observer the study checks and sweeps: the first
// besides the baseline, the study's own (pgaudit-rotated) unless
// --observers names another, such as the lossy pgaudit-stream-lossy.
func auditObserver(c runConfig) (observer.Observer, bool) {
	for _, o := range c.observers {
		if o.Name != observer.Baseline {
			return o, true
		}
	}
	return observer.Observer{}, false
}

// reliabilityRun is one run of the audit observer with counting on, for
// dur, written to dir/reliability.json.
func reliabilityRun(ctx context.Context, c runConfig, st study.Study, dur time.Duration, dir string, stderr io.Writer) (result.Run, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "obsbench: "+format+"\n", args...) }
	audit, ok := auditObserver(c)
	if !ok {
		return result.Run{}, usagef("the reliability check needs an audit observer: give --observers one (e.g. %s)", st.Audit)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return result.Run{}, err
	}
	target, err := openServer(ctx, c.engine, engine.Options{DSN: c.dsn, Log: logf})
	if err != nil {
		return result.Run{}, err
	}
	defer closeServer(target, logf)
	if err := engine.Prepare(ctx, target, c.engine, c.wl, c.ds, logf); err != nil {
		return result.Run{}, err
	}
	logf("reliability: %s with %d sessions for %v (--reliability-duration)", audit.Name, st.Clients, dur)
	var executed atomic.Int64
	done := make(chan struct{})
	go func() { // a line a minute: the check is long
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		began := time.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				logf("reliability: %v of %v, %d statements", time.Since(began).Round(time.Second), dur, executed.Load())
			}
		}
	}()
	run, err := experiment.RunOnce(ctx, experiment.Config{
		Target: target, Workload: c.wl, Dataset: c.ds, Log: logf,
		Probes: experiment.Probes{Counters: c.counters},
		// No warm-up: every statement from the first is counted.
		Driver: driver.Config{Clients: st.Clients, Duration: dur, Procs: c.driverProcs, Executed: &executed},
	}, audit)
	close(done)
	if err != nil {
		return run, err
	}
	b, err := json.MarshalIndent(run, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, reliabilityFile), append(b, '\n'), 0o600)
	}
	return run, err
}

// thresholdVerdict says whether obs's overhead stays under threshold at
// every session count of a sweep: under where the whole interval is
// below it, over where the whole interval is above, else undecided.
func thresholdVerdict(obs string, sessions []int, points []report.SweepPoint, threshold float64) string {
	var over, undecided, missing []string
	for _, s := range sessions {
		var o *result.OverheadSummary
		for _, p := range points {
			if p.Sessions != s {
				continue
			}
			for _, c := range p.Summary.Conditions {
				if c.Name == obs {
					o = c.Overhead
				}
			}
		}
		n := strconv.Itoa(s)
		switch {
		case !o.Measured():
			missing = append(missing, n)
		case strings.HasPrefix(o.Verdict, "too few"), math.IsNaN(o.CILow), math.IsNaN(o.CIHigh):
			undecided = append(undecided, n) // its interval is no interval
		case o.CILow > threshold:
			over = append(over, n)
		case o.CIHigh >= threshold:
			undecided = append(undecided, n)
		}
	}
	var parts []string
	if len(over) > 0 {
		parts = append(parts, fmt.Sprintf("above %g%% at %s session(s)", threshold, strings.Join(over, ", ")))
	}
	if len(undecided) > 0 {
		parts = append(parts, fmt.Sprintf("not shown under %g%% at %s session(s) (the 95%% interval reaches it, or too few samples)", threshold, strings.Join(undecided, ", ")))
	}
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("not measured at %s session(s)", strings.Join(missing, ", ")))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("threshold: %s stays under %g%% at every session count (every 95%% interval below it)", obs, threshold)
	}
	return fmt.Sprintf("threshold: %s is %s", obs, strings.Join(parts, "; "))
}

// takeFlag removes --name V (or --name=V) from args and parses V; def
// when absent.
func takeFlag[T any](args []string, name string, def T, parse func(string) (T, error)) (T, []string, error) {
	values, rest, missing := cutFlag(args, name)
	if missing {
		return def, args, usagef("--%s needs a value", name)
	}
	v := def
	for _, raw := range values {
		p, err := parse(raw)
		if err != nil {
			return def, args, usagef("--%s %q: %v", name, raw, err)
		}
		v = p
	}
	return v, rest, nil
}
