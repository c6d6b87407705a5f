package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// Sweep runs c's experiment once per session count, each in a
// directory of its own under --out, and prints the sweep table (text) or
// the sweep with every summary (json). Each experiment is complete on its
// own (summary.json, report.html); perUnit > 1 reports per that many
// statements (the audit study's thousand-query).
func (c Experiment) Sweep(ctx context.Context, perUnit int, out Output) ([]report.SweepPoint, error) {
	stdout, stderr := out.Stdout, out.Stderr
	if err := CheckOut(c.Out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.Out, 0o700); err != nil {
		return nil, fmt.Errorf("create --out directory: %w", err)
	}
	rec := report.SweepRecord{Workload: c.wl.Name, PerUnit: perUnit, Sessions: c.Sessions}
	var errs []error
	for _, n := range c.Sessions {
		if ctx.Err() != nil {
			break
		}
		one := c
		one.Clients, one.Sessions, one.Format = n, nil, spec.FormatText
		one.Count.After = false // a sweep is not counted, nor is a point of it resumed
		if !c.IsChosen("driver-threads") {
			one.DriverThreads = driver.DefaultProcs(n)
		}
		one.Choose("clients")
		one.Out = filepath.Join(c.Out, fmt.Sprintf("sessions-%d", n))
		// Recorded as the one experiment it is (its spec has Clients,
		// not Sessions), so that --resume of its directory runs it again,
		// not the sweep.
		if err := CheckOut(one.Out); err != nil {
			return rec.Points, err
		}
		fmt.Fprintf(stderr, "obsbench: sweep: %d session(s), results in %s\n", n, one.Out)
		quiet := out
		quiet.Stdout = io.Discard
		sum, err := one.Run(ctx, quiet)
		if sum != nil {
			rec.Points = append(rec.Points, report.SweepPoint{Sessions: n, Dir: filepath.Base(one.Out), Summary: *sum})
			if werr := report.WriteSweep(c.Out, rec); werr != nil {
				return rec.Points, werr
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%d sessions: %w", n, err))
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

// GateSweep applies --max-overhead to every experiment of a sweep.
func (c Experiment) GateSweep(points []report.SweepPoint, err error) error {
	if err != nil || c.MaxOverhead == nil {
		return err
	}
	sums := make(map[int]result.Summary, len(points))
	for _, p := range points {
		sums[p.Sessions] = p.Summary
	}
	return analysis.GateSessions(*c.MaxOverhead, sums)
}
