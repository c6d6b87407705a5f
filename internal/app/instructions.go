package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/obsbench/obsbench/internal/counting"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/progress"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/spec"
)

// Defaults of the counted runs. A run's time is mostly the server's
// start and stop under valgrind, not its statements. Four rounds: the
// rounds run on copies of the server, whose counts differ a little, and
// with two the interval's single degree of freedom leaves it several
// times wider than four's, too wide to tell a tenth of a point
// (bench/instructions).
const (
	defaultCountStatements = 1000
	defaultCountWarmup     = 100
	defaultCountRounds     = 4
	// maxCountServers bounds the servers counted at once: each holds a
	// core, and its memory under valgrind.
	maxCountServers = 4
)

// timingFlags are the settings of timed runs, which a counted experiment
// does not have.
var timingFlags = []string{"duration", "warmup", "alt-duration", "alt-rounds", "phase-min", "phase-max",
	"target-resolution", "max-time", "clients", "sessions", "driver-threads", "waits", "measure-collectors"}

// checkCounting refuses what --method instructions cannot do, and the
// count flags where nothing is counted, before anything starts.
func (c *Experiment) checkCounting() error {
	if c.Method != "instructions" {
		return c.checkCountAfter()
	}
	for _, f := range timingFlags {
		if c.IsChosen(f) {
			return usagef("--%s sets timed runs; --method instructions counts a fixed number of statements in one session at a time (--count-statements, --count-warmup)", f)
		}
	}
	if c.IsChosen("count-rounds") || (c.IsChosen("count") && c.Count.After) {
		return usagef("--count and --count-rounds add a counted part to a timed experiment; --method instructions counts alone, --rounds times each condition")
	}
	switch {
	case !c.info.Counts:
		return usagef("--method instructions runs on a managed %s: obsbench does not start a %s server under the instruction counter", CountingProducts(), c.Engine)
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

// countFlags set or gate the counted runs.
var countFlags = []string{"count", "count-statements", "count-warmup", "count-rounds", "max-counted-overhead"}

// countFlagVerb is what a count flag does to the counted runs.
func countFlagVerb(f string) string {
	if f == "max-counted-overhead" {
		return "gates"
	}
	return "sets"
}

// checkCountAfter decides whether a timed experiment counts its
// conditions too once its timed runs are done (--count, on by default).
// Where it cannot, --count or a count flag given is refused; the
// default is left out, and the reason said under the table.
func (c *Experiment) checkCountAfter() error {
	chosen := ""
	for _, f := range countFlags {
		if c.IsChosen(f) && chosen == "" {
			chosen = f
		}
	}
	if !c.Count.After {
		for _, f := range countFlags[1:] {
			switch {
			case !c.IsChosen(f):
			case c.IsChosen("count"):
				return usagef("--%s %s the counted runs, which --count=false leaves out", f, countFlagVerb(f))
			default:
				return usagef("--%s %s the counted runs, which are off unless --count is given", f, countFlagVerb(f))
			}
		}
		return nil
	}
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
	case !c.info.Counts:
		return fmt.Sprintf("obsbench does not start a %s server under the instruction counter", c.Engine)
	case c.DSN != "":
		return "obsbench counts only a server it starts, not one given by --dsn"
	case c.Standby != "none":
		return "counting runs one server, not a primary and its --standby"
	case c.Replay.Passes > 0 || c.wl.FixedWork():
		return "a fixed-work workload (a replay's --passes, dss-mix's --blocks) can end before the counted statements"
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
		return &result.Counted{Statements: c.Count.Statements, Warmup: c.Count.Warmup, Rounds: c.Count.Rounds, Error: err.Error()}
	}
	return &rec.Counted
}

// Instructions is instructions.json: a counted experiment's runs and
// what they add up to.
type Instructions struct {
	Engine   string `json:"engine"`
	Server   string `json:"server"`
	Workload string `json:"workload"`
	Seed     uint64 `json:"seed"`
	result.Counted
	Runs []counting.Sample `json:"runs"`
}

// runInstructions runs a counted experiment: each condition's
// statements counted on a server under valgrind, round after round.
func runInstructions(ctx context.Context, c Experiment, out Output) error {
	logf := progress.Notes(out.Stderr)
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
	if c.Format == "json" {
		out.Stdout.Write(append(b, '\n'))
	} else {
		report.Instructions(out.Stdout, report.InstructionsHead{
			Server: rec.Server, Workload: c.wl.Name, Statements: c.Count.Statements, Warmup: c.Count.Warmup, Rounds: c.Rounds,
			Threads: rec.Threads,
		}, rec.Conditions)
		fmt.Fprintf(out.Stdout, "\nresults: %s\n", c.Out)
	}
	if runErr != nil {
		return fmt.Errorf("experiment incomplete: %w", runErr)
	}
	return gateCounted(c, rec.Conditions)
}

// countServers is how many servers count rounds rounds at once: one per
// core, at most maxCountServers, and no more than there are rounds.
func countServers(rounds int) int {
	return max(1, min(rounds, runtime.NumCPU(), maxCountServers))
}

// count counts each of c's conditions rounds times, on servers of its
// own started under valgrind (one per core, at most maxCountServers, each
// its share of the rounds), and writes instructions.json in c.Out. It
// returns what it counted also with an error, when some runs were made.
func (c Experiment) count(ctx context.Context, rounds int, logf func(string, ...any)) (Instructions, error) {
	n := countServers(rounds)
	target, err := OpenServer(ctx, c.Engine, engine.Options{Log: logf})
	if err != nil {
		return Instructions{}, err
	}
	defer engine.Close(target, logf)
	for _, o := range c.observers {
		if err := target.Check(ctx, o); err != nil {
			return Instructions{}, err
		}
	}
	if err := engine.Prepare(ctx, target, c.info.Dialect, c.wl, c.ds, logf); err != nil {
		return Instructions{}, err
	}
	ver, err := target.Version(ctx)
	if err != nil {
		return Instructions{}, err
	}
	// The other servers are copies of the first, dataset included: no
	// second load. Copies still count a statement a little differently
	// (docs/method.md), which rounds on several servers take into their
	// intervals.
	servers := []engine.Server{target}
	if copier, ok := target.(engine.Copier); ok {
		for len(servers) < n {
			cp, err := copier.Copy(ctx, logf)
			if err != nil {
				return Instructions{}, fmt.Errorf("a copy of the counted server: %w", err)
			}
			defer engine.Close(cp, logf)
			servers = append(servers, cp)
		}
	}
	counted := make([]counting.Server, len(servers))
	for k, srv := range servers {
		cs, ok := srv.(counting.Server)
		if !ok {
			return Instructions{}, usagef("the %s engine cannot run its server under the counter", c.Engine)
		}
		counted[k] = cs
	}
	n = len(counted)
	names := observer.Names(c.observers)
	logf("seed %d; counting %d statements after %d per run, %d round(s) of %d condition(s), on %d server(s) under valgrind at once; results in %s",
		c.Seed, c.Count.Statements, c.Count.Warmup, rounds, len(names), n, c.Out)
	began := time.Now()
	samples, runErr := counting.Spread(ctx, counting.Config{
		Workload: c.wl.New(), Observers: c.observers,
		Statements: c.Count.Statements, Warmup: c.Count.Warmup, Rounds: rounds, Seed: c.Seed,
		Progress: func(s counting.Sample, seq, total int) {
			logf("[%d/%d] round %d %-24s %12.0f instructions/stmt (session) %10.0f (rest of the server)  %.0fs, %s elapsed",
				seq, total, s.Round, s.Condition, s.Backend, s.Helpers, s.Seconds, time.Since(began).Round(time.Second))
		},
	}, counted)
	if runErr != nil && len(samples) == 0 {
		return Instructions{}, runErr
	}
	_, threads := counted[0].(counting.ThreadedServer)
	rec := Instructions{
		Engine: c.Engine, Server: ver, Workload: c.wl.Name, Seed: c.Seed,
		Counted: result.Counted{
			Statements: c.Count.Statements, Warmup: c.Count.Warmup, Rounds: rounds, Threads: threads,
			Scope: report.InstructionsScope, Conditions: counting.Summarize(names, samples),
		},
		Runs: samples,
	}
	if threads {
		rec.Scope = report.InstructionsScopeThreads
	}
	if runErr != nil {
		rec.Error = runErr.Error()
	}
	if err := writeInstructions(c.Out, rec); err != nil {
		return rec, err
	}
	return rec, runErr
}

// writeInstructions writes rec as dir/instructions.json.
func writeInstructions(dir string, rec Instructions) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "instructions.json"), append(b, '\n'), 0o600)
}

// errNotResumable refuses --resume of a counted experiment.
var errNotResumable = errors.New("a --method instructions experiment is not resumed: each run restarts the server, so run it again")

// CountingProducts names the engines whose managed servers obsbench counts
// ("PostgreSQL or MariaDB").
func CountingProducts() string {
	var ps []string
	for _, i := range EnginesWhere(func(i engine.Info) bool { return i.Counts }) {
		ps = append(ps, i.Product)
	}
	return spec.OneOf(ps)
}
