package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/obsbench/obsbench/internal/counting"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// checkCounting refuses what --method instructions cannot do, and the
// count flags where nothing is counted, before anything starts.
func (c *Experiment) checkCounting() error {
	if c.Count.Shrink > 0 && !c.wl.HasParam("shrink") {
		return usagef("--count-shrink %d: workload %s's dataset does not shrink (dss-mix's does)", c.Count.Shrink, c.wl.Name)
	}
	if err := c.checkPerQuery(); err != nil {
		return err
	}
	if err := c.ValidateCountWidth(counting.MinPlanRounds); err != nil {
		return err
	}
	if !c.Method.Counted() {
		return c.checkCountAfter()
	}
	if err := c.ValidateInstructionsFlags(); err != nil {
		return err
	}
	switch {
	case !c.info.Counts:
		return usagef("--method instructions runs on a managed %s: obsbench does not start a %s server under the instruction counter", CountingProducts(), c.Engine)
	case c.DSN != "":
		return usagef("--method instructions runs the server under valgrind's instruction counter, which obsbench can do only to a server it starts: not with --dsn")
	case c.Standby != spec.StandbyNone:
		return usagef("--method instructions counts one server's processes: not with --standby")
	case c.Format != spec.FormatText && c.Format != spec.FormatJSON:
		return usagef("--method instructions prints text or json, not %s", c.Format)
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		return usagef("--method instructions: %v", server.ErrNoValgrind)
	}
	return nil
}

// checkPerQuery refuses --count-per-query where the queries cannot be
// counted apart: an engine whose counted server cannot split its count
// at each statement, a workload whose statements have no names.
func (c *Experiment) checkPerQuery() error {
	if !c.Count.PerQuery {
		return nil
	}
	var names []string
	if n, ok := c.wl.New().(workload.StatementNamer); ok {
		names = n.StatementNames()
	}
	switch {
	case c.info.Counts && !c.info.CountsQueries:
		return usagef("--count-per-query: obsbench counts each statement apart on a managed %s, not on %s, whose count is split at each connection's end", spec.ProductsWhere(func(i engine.Info) bool { return i.CountsQueries }), c.Engine)
	case !c.info.CountsQueries:
		return usagef("--count-per-query: obsbench counts each statement apart on a managed %s, not on %s", spec.ProductsWhere(func(i engine.Info) bool { return i.CountsQueries }), c.Engine)
	case len(names) == 0:
		return usagef("--count-per-query: workload %s does not name its statements; dss-mix does", c.wl.Name)
	}
	c.queries = names
	return nil
}

// checkCountAfter decides whether a timed experiment counts its
// conditions too once its timed runs are done (--count, on by default).
// Where it cannot, --count or a count flag given is refused; the
// default is left out, and the reason said under the table.
func (c *Experiment) checkCountAfter() error {
	if err := c.ValidateCountOff(); err != nil || !c.Count.After {
		return err
	}
	chosen := c.ChosenCountFlag()
	why := c.whyNotCounted()
	switch {
	case why == "":
		c.counting = true
	case chosen != "":
		return usagef("--%s: %s", chosen, why)
	case len(c.Sessions) == 0:
		c.countMissing = why
	}
	return nil
}

// whyNotCounted is why c's conditions cannot be counted, "" if they can.
func (c Experiment) whyNotCounted() string {
	switch {
	case len(c.Sessions) > 0:
		return "a --sessions sweep is not counted; count its observers with --method instructions"
	case len(c.Loads) > 0 || c.Dose.Sweeps():
		return "a sweep of loads or doses is not counted; count its observers with --method instructions"
	case !c.info.Counts:
		return fmt.Sprintf("obsbench does not start a %s server under the instruction counter", c.Engine)
	case c.DSN != "":
		return "obsbench counts only a server it starts, not one given by --dsn"
	case c.Standby != spec.StandbyNone:
		return "counting runs one server, not a primary and its --standby"
	case c.Replay.Passes > 0:
		return "a replay's --passes can end before the counted statements"
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		return "valgrind is not installed (apt-get install valgrind)"
	}
	return ""
}

// countConditions counts c's conditions after its timed runs: the counted
// figures beside the timed ones. A failure is recorded in what it
// returns, not raised: the timed results stand without it.
func (c Experiment) countConditions(ctx context.Context, logf func(string, ...any)) *result.Counted {
	logf("counting each condition's instructions per statement, the server under valgrind (--count=false leaves this out)")
	rec, err := c.count(ctx, c.Count.Rounds, logf)
	if err != nil && len(rec.Runs) == 0 {
		logf("counting failed: %v", err)
		return &result.Counted{Statements: c.Count.Statements, Warmup: c.Count.Warmup, Rounds: c.Count.Rounds,
			Sessions: counting.AtOnce(c.Count.Sessions), Error: err.Error()}
	}
	return &rec.Counted
}

// runInstructions runs a counted experiment: each condition's
// statements counted on a server under valgrind, round after round.
func runInstructions(ctx context.Context, c Experiment, out Output) error {
	logf := report.Notes(out.Stderr)
	if err := os.MkdirAll(c.Out, 0o700); err != nil {
		return fmt.Errorf("create --out directory: %w", err)
	}
	if err := writeExperiment(c); err != nil {
		return err
	}
	rec, runErr := c.count(ctx, c.Rounds, logf)
	if runErr != nil && len(rec.Runs) == 0 {
		return runErr
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if c.Format == spec.FormatJSON {
		out.Stdout.Write(append(b, '\n'))
	} else {
		report.Instructions(out.Stdout, report.InstructionsHead{
			Server: rec.Server, Workload: c.wl.Name, Statements: c.Count.Statements, Warmup: c.Count.Warmup, Rounds: c.Rounds,
			Width: rec.Width, Sessions: rec.Sessions, Threads: rec.Threads,
		}, rec.Conditions)
		if err := c.printCountedStudy(out.Stdout, &rec.Counted); err != nil {
			return err
		}
		fmt.Fprintf(out.Stdout, "\nresults: %s\n", c.Out)
	}
	if runErr != nil {
		return fmt.Errorf("experiment incomplete: %w", runErr)
	}
	return c.limits().GateCountedRun(rec.Conditions)
}

// count counts each of c's conditions rounds times on managed servers
// under valgrind (counting.Experiment.Run) and writes instructions.json in c.Out.
func (c Experiment) count(ctx context.Context, rounds int, logf func(string, ...any)) (counting.Instructions, error) {
	wl, ds := c.wl, c.ds
	if n := c.Count.Shrink; n > 0 && n != wl.Value("shrink") {
		var err error
		if wl, err = wl.WithParam("shrink", n); err != nil {
			return counting.Instructions{}, err
		}
		if ds, err = c.ds.Shrunk(n); err != nil {
			return counting.Instructions{}, err
		}
		logf("counting on %s (--count-shrink %d), the timed runs' was %s", ds.Description, n, c.ds.Description)
	}
	return counting.Experiment{
		Engine: c.Engine, Dialect: c.info.Dialect, Workload: wl, Dataset: ds, Observers: c.observers,
		Count: c.Count, Rounds: rounds, Seed: c.Seed, Queries: c.queries, Out: c.Out, Log: logf,
		Open: func(ctx context.Context) (engine.Server, error) {
			return c.Open(ctx, engine.Options{Log: logf}, "--dsn")
		},
	}.Run(ctx)
}

// errNotResumable refuses --resume of a counted experiment.
var errNotResumable = errors.New("a --method instructions experiment is not resumed: each run restarts the server, so run it again")

// CountingProducts names the engines whose managed servers obsbench counts
// ("PostgreSQL or MariaDB").
func CountingProducts() string {
	return spec.ProductsWhere(func(i engine.Info) bool { return i.Counts })
}
