package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/obsbench/obsbench/internal/counting"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/progress"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/server"
)

// Defaults of --method instructions: the issue's own measurement counted
// 3,000 statements; 2,000 after 200 take about 10 s a run here.
const (
	defaultCountStatements = 2000
	defaultCountWarmup     = 200
)

// timingFlags are the settings of timed runs, which a counted experiment
// does not have.
var timingFlags = []string{"duration", "warmup", "alt-duration", "alt-rounds", "phase-min", "phase-max",
	"target-resolution", "max-time", "clients", "sessions", "driver-threads", "waits", "measure-collectors"}

// checkCounting refuses what --method instructions cannot do, and the
// count flags without it, before anything starts.
func (c Experiment) checkCounting() error {
	if c.Method != "instructions" {
		for _, f := range []string{"count-statements", "count-warmup"} {
			if c.IsChosen(f) {
				return usagef("--%s sets --method instructions' counted runs; --method is %s", f, c.Method)
			}
		}
		return nil
	}
	for _, f := range timingFlags {
		if c.IsChosen(f) {
			return usagef("--%s sets timed runs; --method instructions counts a fixed number of statements in one session at a time (--count-statements, --count-warmup)", f)
		}
	}
	switch {
	case !c.info.Counts:
		return usagef("--method instructions runs on a managed PostgreSQL or MariaDB: obsbench does not start a %s server under the instruction counter", c.Engine)
	case c.DSN != "":
		return usagef("--method instructions runs the server under valgrind's instruction counter, which obsbench can do only to a server it starts: not with --dsn")
	case c.Standby != "none":
		return usagef("--method instructions counts one server's processes: not with --standby")
	case c.Format != "text" && c.Format != "json":
		return usagef("--method instructions prints text or json, not %s", c.Format)
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		return usagef("--method instructions: %v", server.ErrNoValgrind)
	}
	return nil
}

// Instructions is instructions.json: a counted experiment's runs and
// what they add up to.
type Instructions struct {
	Engine     string               `json:"engine"`
	Server     string               `json:"server"`
	Workload   string               `json:"workload"`
	Statements int                  `json:"statements_per_run"`
	Warmup     int                  `json:"warmup_statements"`
	Rounds     int                  `json:"rounds"`
	Seed       uint64               `json:"seed"`
	Scope      string               `json:"scope"`
	Conditions []counting.Condition `json:"conditions"`
	Runs       []counting.Sample    `json:"runs"`
	Error      string               `json:"error,omitempty"`
}

// runInstructions runs a counted experiment: each condition's
// statements counted on a server under valgrind, round after round.
func runInstructions(ctx context.Context, c Experiment, out Output) error {
	logf := progress.Notes(out.Stderr)
	target, err := OpenServer(ctx, c.Engine, engine.Options{Log: logf})
	if err != nil {
		return err
	}
	defer engine.Close(target, logf)
	cs, ok := target.(counting.Server)
	if !ok {
		return usagef("--method instructions: the %s engine cannot run its server under the counter", c.Engine)
	}
	if err := os.MkdirAll(c.Out, 0o700); err != nil {
		return fmt.Errorf("create --out directory: %w", err)
	}
	if err := writeExperiment(c); err != nil {
		return err
	}
	for _, o := range c.observers {
		if err := target.Check(ctx, o); err != nil {
			return err
		}
	}
	if err := engine.Prepare(ctx, target, c.info.Dialect, c.wl, c.ds, logf); err != nil {
		return err
	}
	ver, err := target.Version(ctx)
	if err != nil {
		return err
	}
	names := observer.Names(c.observers)
	logf("seed %d; counting %d statements after %d per run, %d round(s) of %d condition(s), the server under valgrind; results in %s",
		c.Seed, c.Count.Statements, c.Count.Warmup, c.Rounds, len(names), c.Out)
	began := time.Now()
	samples, runErr := counting.Run(ctx, counting.Config{
		Server: cs, Workload: c.wl.New(), Observers: c.observers,
		Statements: c.Count.Statements, Warmup: c.Count.Warmup, Rounds: c.Rounds, Seed: c.Seed,
		Progress: func(s counting.Sample, seq, total int) {
			logf("[%d/%d] round %d %-24s %12.0f instructions/stmt (session) %10.0f (rest of the server)  %.0fs, %s elapsed",
				seq, total, s.Round, s.Condition, s.Backend, s.Helpers, s.Seconds, time.Since(began).Round(time.Second))
		},
	})
	if runErr != nil && len(samples) == 0 {
		return runErr
	}
	rec := Instructions{
		Engine: c.Engine, Server: ver, Workload: c.wl.Name, Statements: c.Count.Statements, Warmup: c.Count.Warmup,
		Rounds: c.Rounds, Seed: c.Seed, Scope: report.InstructionsScope,
		Conditions: counting.Summarize(names, samples), Runs: samples,
	}
	if runErr != nil {
		rec.Error = runErr.Error()
	}
	_, threads := cs.(counting.ThreadedServer)
	if threads {
		rec.Scope = report.InstructionsScopeThreads
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Out, "instructions.json"), append(b, '\n'), 0o600); err != nil {
		return err
	}
	if c.Format == "json" {
		out.Stdout.Write(append(b, '\n'))
	} else {
		report.Instructions(out.Stdout, report.InstructionsHead{
			Server: ver, Workload: c.wl.Name, Statements: c.Count.Statements, Warmup: c.Count.Warmup, Rounds: c.Rounds,
			Threads: threads,
		}, rec.Conditions)
		fmt.Fprintf(out.Stdout, "\nresults: %s\n", c.Out)
	}
	if runErr != nil {
		return fmt.Errorf("experiment incomplete: %w", runErr)
	}
	return gateCounted(c, rec.Conditions)
}

// errNotResumable refuses --resume of a counted experiment.
var errNotResumable = errors.New("a --method instructions experiment is not resumed: each run restarts the server, so run it again")
