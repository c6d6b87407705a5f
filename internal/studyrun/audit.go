package studyrun

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

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
)

const (
	defaultReliability = 10 * time.Minute // the study's 10 minutes
	defaultThreshold   = 5.0              // the study's "under 5% is acceptable"
)

// auditStudy runs study 5: a long run of the audit observer whose trail
// is checked for one record per statement executed, then a concurrency
// sweep of each thousand-query workload with auditing off and on, judged
// against a threshold. Its own flags: --reliability-duration (0 skips the
// check), --threshold and --workloads (which of the two queries to sweep);
// every run flag may follow.
func auditStudy(ctx context.Context, st study.Study, s spec.Spec, o Options, out app.Output) error {
	stdout, stderr := out.Stdout, out.Stderr
	for _, w := range o.Workloads {
		if !slices.Contains(st.Workloads, w) {
			return spec.Invalidf("--workloads %q: want some of %s", strings.Join(o.Workloads, ","), strings.Join(st.Workloads, ","))
		}
	}
	switch {
	case o.ReliabilityDuration < 0 || o.ReliabilityDuration > 24*time.Hour:
		return spec.Invalidf("--reliability-duration %v: want 0 (skip) to 24h", o.ReliabilityDuration)
	case o.Threshold <= 0 || o.Threshold > 100:
		return spec.Invalidf("--threshold %g: want a percentage above 0 and at most 100", o.Threshold)
	case s.IsChosen("clients"):
		return spec.Invalidf("--clients %d: study %s sweeps the session count (--sessions %s); give --sessions to change the counts", s.Clients, st.Name, spec.FormatSessions(st.Sessions))
	}
	c, err := app.ResolveIn(forWorkload(s, st.Workloads[0]), out)
	if err != nil {
		return err
	}
	if s.DryRun {
		for _, wl := range o.Workloads {
			c, err := app.ResolveIn(forWorkload(s, wl), out)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "== %s: workload %s ==\n", st.Name, wl)
			if err := c.PrintPlan(ctx, stdout); err != nil {
				return err
			}
		}
		return nil
	}
	base := c.Out
	if err := app.CheckOut(filepath.Join(base, "reliability")); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n%s\n\n", st.Title, st.Question)
	var errs []error
	if o.ReliabilityDuration > 0 {
		run, err := reliabilityRun(ctx, c, st, o.ReliabilityDuration, filepath.Join(base, "reliability"), stderr)
		if err != nil {
			errs = append(errs, fmt.Errorf("reliability: %w", err))
		} else {
			errs = append(errs, report.Reliability(stdout, run), incomplete(run))
			fmt.Fprintln(stdout)
		}
	}
	for _, wl := range o.Workloads {
		if ctx.Err() != nil {
			break
		}
		ws := forWorkload(s, wl)
		ws.Out, ws.Seed = filepath.Join(base, wl), c.Seed
		c, err := app.ResolveIn(ws, out)
		if err != nil {
			return err
		}
		// Checked here too: a used directory is bad input (exit 2), not
		// a failed sweep.
		if err := app.CheckOut(c.Out); err != nil {
			return err
		}
		points, err := c.Sweep(ctx, 1000, out)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", wl, err))
		}
		if audit, ok := auditObserver(c); ok {
			fmt.Fprintf(stdout, "%s\n\n", thresholdVerdict(audit.Name, c.Sessions, points, o.Threshold))
		}
		errs = append(errs, c.GateSweep(points, nil))
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
func auditObserver(c app.Experiment) (observer.Observer, bool) {
	for _, o := range c.ObserverList() {
		if o.Name != observer.Baseline {
			return o, true
		}
	}
	return observer.Observer{}, false
}

// reliabilityRun is one run of the audit observer with counting on, for
// dur, written to dir/reliability.json.
func reliabilityRun(ctx context.Context, c app.Experiment, st study.Study, dur time.Duration, dir string, stderr io.Writer) (result.Run, error) {
	logf := report.Notes(stderr)
	audit, ok := auditObserver(c)
	if !ok {
		return result.Run{}, spec.Invalidf("the reliability check needs an audit observer: give --observers one (e.g. %s)", st.Audit)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return result.Run{}, err
	}
	target, err := c.Open(ctx, engine.Options{DSN: c.DSN, Log: logf}, "--dsn")
	if err != nil {
		return result.Run{}, err
	}
	defer engine.Close(target, logf)
	if err := engine.Prepare(ctx, target, c.Dialect(), c.WorkloadMeta(), c.Dataset(), logf); err != nil {
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
		Target: target, Workload: c.WorkloadMeta(), Dataset: c.Dataset(), Log: logf,
		Probes: experiment.Probes{Counters: c.Counters},
		// No warm-up: every statement from the first is counted.
		Driver: driver.Config{Clients: st.Clients, Duration: dur, Procs: c.ThreadsFor(st.Clients), Executed: &executed},
	}, audit)
	close(done)
	if err != nil {
		return run, err
	}
	b, err := json.MarshalIndent(run, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, app.ReliabilityFile), append(b, '\n'), 0o600)
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
