package app

import (
	"context"
	"encoding/json"
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

// sweepFile lists a sweep's experiments in its --out directory.
const sweepFile = "sweep.json"

// sweepRecord is sweep.json: the experiments of a sweep and the unit its
// table reports in.
type sweepRecord struct {
	Workload string              `json:"workload"`
	PerUnit  int                 `json:"per_unit"`
	Sessions []int               `json:"sessions"`
	Points   []report.SweepPoint `json:"points"`
}

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
	rec := sweepRecord{Workload: c.wl.Name, PerUnit: perUnit, Sessions: c.Sessions}
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
			if werr := writeSweep(c.Out, rec); werr != nil {
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
	if err := printSweep(stdout, c.Format, c.Out, rec); err != nil {
		errs = append(errs, err)
	}
	return rec.Points, errors.Join(errs...)
}

// printSweep prints a sweep's table (text) or record with its summaries
// (json).
func printSweep(w io.Writer, format spec.Format, dir string, rec sweepRecord) error {
	if format == spec.FormatJSON {
		type point struct {
			Sessions int            `json:"sessions"`
			Dir      string         `json:"dir"`
			Summary  result.Summary `json:"summary"`
		}
		var out []point
		for _, p := range rec.Points {
			out = append(out, point{p.Sessions, p.Dir, p.Summary})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"workload": rec.Workload, "sessions": rec.Sessions, "points": out})
	}
	if len(rec.Points) == 0 {
		return nil
	}
	fmt.Fprintf(w, "concurrency sweep: %s, sessions %s\n\n", rec.Workload, spec.FormatSessions(rec.Sessions))
	if err := report.Sweep(w, rec.Points, rec.PerUnit); err != nil {
		return err
	}
	if missing := missingSessions(rec); len(missing) > 0 {
		fmt.Fprintf(w, "not measured: %s session(s) (the experiment failed or was interrupted)\n", spec.FormatSessions(missing))
	}
	_, err := fmt.Fprintf(w, "\nresults: %s (one directory per session count; obsbench report %s)\n", dir, dir)
	return err
}

// missingSessions are the session counts of rec without a summary.
func missingSessions(rec sweepRecord) []int {
	var out []int
	for _, n := range rec.Sessions {
		if !slices.ContainsFunc(rec.Points, func(p report.SweepPoint) bool { return p.Sessions == n }) {
			out = append(out, n)
		}
	}
	return out
}

// GateSweep applies --max-overhead to every experiment of a sweep.
func (c Experiment) GateSweep(points []report.SweepPoint, err error) error {
	if err != nil || c.MaxOverhead == nil {
		return err
	}
	var over []string
	for _, p := range points {
		var oe *analysis.OverheadError
		if errors.As(analysis.GateTimed(*c.MaxOverhead, p.Summary), &oe) {
			for _, o := range oe.Over {
				over = append(over, fmt.Sprintf("%d sessions: %s", p.Sessions, o))
			}
		}
	}
	if len(over) == 0 {
		return nil
	}
	return &analysis.OverheadError{Limit: *c.MaxOverhead, Over: over}
}

func writeSweep(dir string, rec sweepRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, sweepFile), append(b, '\n'), 0o600)
}

// ReadSweep reads a sweep directory's record with its experiments'
// summaries; ok is false when dir is not a sweep.
func ReadSweep(dir string) (rec sweepRecord, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, sweepFile))
	if errors.Is(err, os.ErrNotExist) {
		return rec, false, nil
	}
	if err != nil {
		return rec, true, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, true, fmt.Errorf("%s: %w", filepath.Join(dir, sweepFile), err)
	}
	for i := range rec.Points {
		if rec.Points[i].Summary, err = result.ReadSummary(filepath.Join(dir, rec.Points[i].Dir, "summary.json")); err != nil {
			return rec, true, err
		}
	}
	slices.SortFunc(rec.Points, func(a, b report.SweepPoint) int { return a.Sessions - b.Sessions })
	return rec, true, nil
}
