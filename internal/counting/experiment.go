package counting

// A counted experiment is each condition's statements counted on managed
// servers started under valgrind, round after round, the rounds spread
// over a server per core. It serves --method instructions and the counted
// part of a timed experiment (--count).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// MaxServers bounds the servers counted at once: each holds a core, and
// its memory under valgrind.
const MaxServers = 4

// ServersFor is how many servers count rounds rounds at once: one per core,
// at most MaxServers, and no more than there are rounds.
func ServersFor(rounds int) int {
	return max(1, min(rounds, runtime.NumCPU(), MaxServers))
}

// Instructions is instructions.json: a counted experiment's runs and
// what they add up to.
type Instructions struct {
	Engine   string `json:"engine"`
	Server   string `json:"server"`
	Workload string `json:"workload"`
	Seed     uint64 `json:"seed"`
	result.Counted
	Runs []Sample `json:"runs"`
}

// Config is a counted experiment.
type Experiment struct {
	Engine string
	// Open starts the first managed server; the others are its copies.
	Open      func(ctx context.Context) (engine.Server, error)
	Dialect   workload.Dialect
	Workload  workload.Meta
	Dataset   dataset.Dataset
	Observers []observer.Observer
	Count     spec.Count // statements and warm-up of each run
	Rounds    int
	// Queries, if set, are the workload's statement names: each is
	// counted apart too (--count-per-query).
	Queries []string
	Seed    uint64
	Out     string // instructions.json is written here
	Log     func(string, ...any)
}

// Run counts each condition e.Rounds times, on servers of its own
// started under valgrind (ServersFor of them, each its share of the
// rounds), and writes instructions.json in e.Out. It returns what it
// counted also with an error, when some runs were made.
func (e Experiment) Run(ctx context.Context) (Instructions, error) {
	logf := e.Log
	target, err := e.Open(ctx)
	if err != nil {
		return Instructions{}, err
	}
	defer engine.Close(target, logf)
	for _, o := range e.Observers {
		if err := target.Check(ctx, o); err != nil {
			return Instructions{}, err
		}
	}
	if err := engine.Prepare(ctx, target, e.Dialect, e.Workload, e.Dataset, logf); err != nil {
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
	copies, err := copiesOf(ctx, target, ServersFor(e.Rounds)-1, logf)
	for _, cp := range copies {
		defer engine.Close(cp, logf)
	}
	if err != nil {
		return Instructions{}, err
	}
	counted, err := underCounter(append([]engine.Server{target}, copies...), e.Engine)
	if err != nil {
		return Instructions{}, err
	}
	names := observer.Names(e.Observers)
	logf("seed %d; counting %d statements after %d per run, %d round(s) of %d condition(s), on %d server(s) under valgrind at once; results in %s",
		e.Seed, e.Count.Statements, e.Count.Warmup, e.Rounds, len(names), len(counted), e.Out)
	cc := countingConfig(e, time.Now())
	samples, runErr := Spread(ctx, cc, counted)
	if runErr != nil && len(samples) == 0 {
		return Instructions{}, runErr
	}
	if runErr == nil {
		var more []Sample
		more, runErr = widen(ctx, e, cc, counted, samples)
		samples = append(samples, more...)
	}
	_, threads := counted[0].(engine.CountedThreads)
	sessions := AtOnce(e.Count.Sessions)
	rec := Instructions{
		Engine: e.Engine, Server: ver, Workload: e.Workload.Name, Seed: e.Seed,
		Counted: result.Counted{
			Statements: e.Count.Statements, Warmup: e.Count.Warmup, Rounds: e.Rounds, Threads: threads,
			Sessions: sessions, Scope: report.CountScope(threads, sessions), Conditions: Summarize(names, samples, e.Rounds),
			Width: e.Count.Width,
		},
		Runs: samples,
	}
	if runErr != nil {
		rec.Error = runErr.Error()
	}
	if err := WriteInstructions(e.Out, rec); err != nil {
		return rec, err
	}
	return rec, runErr
}

// copiesOf makes n copies of target where its engine can copy a server
// (none where it cannot); those made are returned also with an error, to
// be closed.
func copiesOf(ctx context.Context, target engine.Server, n int, logf func(string, ...any)) ([]engine.Server, error) {
	copier, ok := target.(engine.Copier)
	if !ok {
		return nil, nil
	}
	var copies []engine.Server
	for len(copies) < n {
		cp, err := copier.Copy(ctx, logf)
		if err != nil {
			return copies, fmt.Errorf("a copy of the counted server: %w", err)
		}
		copies = append(copies, cp)
	}
	return copies, nil
}

// underCounter is each server as one that runs under the counter.
func underCounter(servers []engine.Server, eng string) ([]engine.CountedServer, error) {
	counted := make([]engine.CountedServer, len(servers))
	for k, srv := range servers {
		cs, ok := srv.(engine.CountedServer)
		if !ok {
			return nil, spec.Invalidf("the %s engine cannot run its server under the counter", eng)
		}
		counted[k] = cs
	}
	return counted, nil
}

// countingConfig is what the counted runs of e take, their progress
// lines timed from began.
func countingConfig(e Experiment, began time.Time) Config {
	logf := e.Log
	return Config{
		Workload: e.Workload.Counted().New(), Observers: e.Observers,
		Statements: e.Count.Statements, Warmup: e.Count.Warmup, Sessions: e.Count.Sessions, Rounds: e.Rounds, Seed: e.Seed, Queries: e.Queries,
		Progress: func(s Sample, seq, total int) {
			elapsed := time.Since(began)
			logf("[%d/%d] round %d %-24s %12.0f instructions/stmt (session) %10.0f (rest of the server)  %.0fs, %s elapsed%s",
				seq, total, s.Round, s.Condition, s.Backend, s.Helpers, s.Seconds, elapsed.Round(time.Second), left(elapsed, seq, total))
		},
	}
}

// AtOnce is what result.Counted records of a count's sessions at once:
// 0 for one (the figure of a count before sessions at once).
func AtOnce(sessions int) int {
	if sessions > 1 {
		return sessions
	}
	return 0
}

// WriteInstructions writes rec as dir/instructions.json.
func WriteInstructions(dir string, rec Instructions) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "instructions.json"), append(b, '\n'), 0o600)
}

// left says about how long the runs not yet done take at the pace of
// those done, once a few are: the runs' times differ by condition, and
// the servers count in parallel.
func left(elapsed time.Duration, done, total int) string {
	if done < 4 || done >= total {
		return ""
	}
	rest := (elapsed / time.Duration(done) * time.Duration(total-done)).Round(10 * time.Second)
	if rest == 0 {
		return ""
	}
	return fmt.Sprintf(", about %s left", rest)
}
