package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// Sweep runs c's experiment once per session count or per load, each in
// a directory of its own under --out, and prints the sweep table (text)
// or the sweep with every summary (json). Each experiment is complete on
// its own (summary.json, report.html); perUnit > 1 reports per that many
// statements (the audit study's thousand-query).
func (c Experiment) Sweep(ctx context.Context, perUnit int, out Output) ([]report.SweepPoint, error) {
	stdout, stderr := out.Stdout, out.Stderr
	if err := CheckOut(c.Out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.Out, 0o700); err != nil {
		return nil, fmt.Errorf("create --out directory: %w", err)
	}
	rec := report.SweepRecord{Workload: c.wl.Name, PerUnit: perUnit, Sessions: c.Sessions, Loads: c.Loads}
	if c.Dose.Sweeps() {
		rec.Dose, rec.Observer, rec.MaxOverhead = c.Dose, c.observers[len(c.observers)-1].Name, c.MaxOverhead
	}
	var errs []error
	for _, at := range rec.Planned() {
		if ctx.Err() != nil {
			break
		}
		one := c.sweepPoint(at)
		// Recorded as the one experiment it is (its spec has Clients or
		// LoadPct, not Sessions or Loads), so that --resume of its
		// directory runs it again, not the sweep.
		if err := CheckOut(one.Out); err != nil {
			return rec.Points, err
		}
		fmt.Fprintf(stderr, "obsbench: sweep: %s, results in %s\n", at.Label(), one.Out)
		quiet := out
		quiet.Stdout = io.Discard
		sum, err := one.Run(ctx, quiet)
		if sum != nil {
			at.Summary = *sum
			rec.Points = append(rec.Points, at)
			if werr := report.WriteSweep(c.Out, rec); werr != nil {
				return rec.Points, werr
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at.Label(), err))
			if c.OnFailure.Stops() {
				break
			}
		}
	}
	if err := report.PrintSweep(stdout, c.Format, c.Out, rec); err != nil {
		errs = append(errs, err)
	}
	return rec.Points, errors.Join(errs...)
}

// sweepPoint is the experiment of point at of c's sweep.
func (c Experiment) sweepPoint(at report.SweepPoint) Experiment {
	one := c
	one.Sessions, one.Loads, one.Format = nil, nil, spec.FormatText
	one.Count.After = false // a sweep is not counted, nor is a point of it resumed
	switch {
	case at.DoseSetting != "":
		one.Dose = &spec.Dose{Setting: at.DoseSetting, Values: []string{at.DoseValue}}
		one.observers = slices.Clone(c.observers)
		last := len(one.observers) - 1
		one.observers[last], _ = one.observers[last].Dosed(at.DoseSetting, at.DoseValue) // checked by resolveObservers
	case at.LoadPct > 0:
		one.LoadPct = at.LoadPct
		one.Choose("load")
	default:
		one.Clients = at.Sessions
		if !c.IsChosen("driver-threads") {
			one.DriverThreads = driver.DefaultProcs(at.Sessions)
		}
		one.Choose("clients")
	}
	one.Out = filepath.Join(c.Out, at.Dir)
	return one
}

// GateSweep applies --max-overhead to every experiment of a sweep; of a
// dose sweep, it fails when no value stays under it (the sweep's table
// names the largest that does).
func (c Experiment) GateSweep(points []report.SweepPoint, err error) error {
	if err != nil || c.MaxOverhead == nil {
		return err
	}
	if c.Dose.Sweeps() {
		if _, ok := report.DoseLimit(points, *c.MaxOverhead); !ok {
			return &analysis.OverheadError{Limit: *c.MaxOverhead, Over: []string{fmt.Sprintf("%s at every value of %s, the least (%s) included", c.observers[len(c.observers)-1].Name, c.Dose.Setting, c.Dose.Values[0])}}
		}
		return nil
	}
	sums := make(map[int]result.Summary, len(points))
	for _, p := range points {
		sums[p.Sessions] = p.Summary
	}
	return analysis.GateSessions(*c.MaxOverhead, sums)
}
