package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

// sweepFile lists a sweep's experiments in its --out directory.
const sweepFile = "sweep.json"

// parseSessions reads --sessions: session counts, comma-separated,
// ascending, each 1 to 1000.
func parseSessions(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 1000 {
			return nil, usagef("--sessions %s: %q is not a session count from 1 to 1000", s, f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, usagef("--sessions %s: give the counts once each, ascending (e.g. 1,2,4,8)", s)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, usagef("--sessions %q: give session counts, e.g. 1,2,4,8", s)
	}
	return out, nil
}

// runSweep runs c's experiment once per session count, each in a
// directory of its own under --out, and prints the sweep table. Each
// experiment is complete on its own (summary.json, report.html); the
// sweep's table is printed from their summaries.
func runSweep(ctx context.Context, c runConfig, perUnit int, stdout, stderr io.Writer) ([]report.SweepPoint, error) {
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return nil, fmt.Errorf("create --out directory: %w", err)
	}
	var points []report.SweepPoint
	var errs []error
	for _, n := range c.sweep {
		one := c
		one.clients, one.sweep = n, nil
		// Recorded as the one experiment it is, so that --resume of its
		// directory runs it again, not the sweep.
		one.args = append(dropFlag(c.args, "sessions"), "--clients", strconv.Itoa(n))
		one.out = filepath.Join(c.out, fmt.Sprintf("sessions-%d", n))
		fmt.Fprintf(stderr, "obsbench: sweep: %d session(s), results in %s\n", n, one.out)
		sum, err := runExperiment(ctx, one, io.Discard, stderr)
		if sum != nil {
			points = append(points, report.SweepPoint{Sessions: n, Dir: filepath.Base(one.out), Summary: *sum})
			if werr := writeSweep(c.out, points); werr != nil {
				return points, werr
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%d sessions: %w", n, err))
			if ctx.Err() != nil || c.onFailure == "stop" {
				break
			}
		}
	}
	if len(points) > 0 && c.format == "text" {
		fmt.Fprintf(stdout, "concurrency sweep: %s, sessions %v\n\n", c.wl.Name, c.sweep)
		if err := report.Sweep(stdout, points, perUnit); err != nil {
			return points, err
		}
		fmt.Fprintf(stdout, "\nresults: %s (one directory per session count; obsbench report %s)\n", c.out, c.out)
	}
	return points, errors.Join(errs...)
}

func writeSweep(dir string, points []report.SweepPoint) error {
	b, err := json.MarshalIndent(points, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, sweepFile), append(b, '\n'), 0o644)
}

// readSweep reads a sweep directory's experiments, nil when dir is not a
// sweep.
func readSweep(dir string) ([]report.SweepPoint, error) {
	b, err := os.ReadFile(filepath.Join(dir, sweepFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var points []report.SweepPoint
	if err := json.Unmarshal(b, &points); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, sweepFile), err)
	}
	for i := range points {
		if points[i].Summary, err = result.ReadSummary(filepath.Join(dir, points[i].Dir, "summary.json")); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(points, func(a, b report.SweepPoint) int { return a.Sessions - b.Sessions })
	return points, nil
}

// dropFlag removes flag name and its value from args, in either of the
// forms --name v and --name=v (one dash too).
func dropFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--"+name || a == "-"+name:
			i++ // its value
		case strings.HasPrefix(a, "--"+name+"="), strings.HasPrefix(a, "-"+name+"="):
		default:
			out = append(out, a)
		}
	}
	return out
}
