// Command split compares obsbench's methods on one managed PostgreSQL
// side by side, each given the same budget (--max-time): split (two
// groups of sessions on one server), duet (twin servers) and auto
// (rounds and alternation on one server), on the same observers, quiet,
// under a drift made on purpose and beside a neighbour busy on one core;
// and split on a server it does not
// manage (split-external, split-external-mariadb). It writes bench/split/RESULT.md and
// each experiment's text output beside it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/result"
)

var logf = sidebyside.Logger("split")

type config struct {
	observers string
	mariadb   string // the observers of splitExternalMariaDB
	budget    time.Duration
	methods   []string
	conds     []string
	seed      uint64
	dir       string
	command   string
}

// experiment is one obsbench run and what it found.
type experiment struct {
	method  string
	cond    string
	elapsed time.Duration
	sum     result.Summary
}

func main() {
	var c config
	methods := flag.String("methods", "split,duet,auto", "the methods compared, in the order they run ("+splitExternal+": split on a PostgreSQL the bench starts and obsbench reaches by --dsn alone; "+splitExternalMariaDB+": the same on a MariaDB)")
	flag.StringVar(&c.observers, "observers", "log-filtered-out,pgaudit-filtered-out,pg-stat-statements", "the observers every PostgreSQL method measures")
	flag.StringVar(&c.mariadb, "mariadb-observers", "slow-log-filtered-out", "the observers "+splitExternalMariaDB+" measures")
	flag.DurationVar(&c.budget, "max-time", 5*time.Minute, "each experiment's budget (--max-time)")
	conditions := flag.String("conditions", "quiet,drift", "quiet (nothing beside the experiments), drift (the drift thread beside them), neighbour (a thread busy on one core all along), in the order they run")
	flag.Uint64Var(&c.seed, "seed", 1, "the experiments' seed")
	flag.StringVar(&c.dir, "dir", "bench/split", "where RESULT.md and the outputs go")
	flag.Parse()
	c.methods = strings.Split(*methods, ",")
	c.conds = strings.Split(*conditions, ",")
	for _, cond := range c.conds {
		if !slices.Contains([]string{quiet, drift, neighbour}, cond) {
			sidebyside.Fail("split", fmt.Errorf("-conditions: unknown condition %q; want quiet, drift or neighbour", cond))
		}
	}
	c.command = sidebyside.Command("split")
	sidebyside.Main("split", func(ctx context.Context) error { return run(ctx, c) })
}

func run(ctx context.Context, c config) error {
	logf("building obsbench")
	tmp, exe, err := sidebyside.BuildObsbench(ctx, "split")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	var exps []experiment
	var busy atomic.Int64
	var drifted time.Duration
	for _, cond := range c.conds {
		var stop context.CancelFunc = func() {}
		t0 := time.Now()
		if cond != quiet {
			var dctx context.Context
			dctx, stop = context.WithCancel(ctx)
			if cond == drift {
				go sidebyside.Drift(dctx, c.seed, &busy)
			} else {
				go sidebyside.Neighbour(dctx)
			}
		}
		for _, m := range c.methods {
			e, err := one(ctx, c, exe, tmp, m, cond)
			if err != nil {
				stop()
				return err
			}
			exps = append(exps, e)
		}
		stop()
		if cond == drift {
			drifted = time.Since(t0)
		}
	}
	return sidebyside.Publish(filepath.Join(c.dir, "RESULT.md"), report(c, exps, busy.Load(), drifted, time.Since(start)))
}

// one runs method's experiment and keeps its text output beside RESULT.md.
func one(ctx context.Context, c config, exe, tmp, method, cond string) (experiment, error) {
	e := experiment{method: method, cond: cond}
	out := filepath.Join(tmp, method+"-"+cond)
	args := []string{"run", "--method", method, "--observers", c.observers, "--max-time", c.budget.String(), "--count=false", "--seed", fmt.Sprint(c.seed), "--out", out}
	shown := args
	switch method {
	case splitDuet:
		args[2] = string(result.MethodSplitDuet)
		shown = args
	case splitExternal:
		dsn, stop, err := externalServer(ctx)
		if err != nil {
			return e, err
		}
		defer stop()
		args[2] = "split"
		args = append(args, "--dsn", dsn, "--allow-changes")
		shown = args
	case splitExternalMariaDB:
		dsn, stop, err := externalMariaDB(ctx)
		if err != nil {
			return e, err
		}
		defer stop()
		args[2], args[4] = "split", c.mariadb
		shown = append(slices.Clone(args), "--engine", "mariadb", "--dsn", "root:xxxxx@unix(...)/", "--allow-changes")
		args = append(args, "--engine", "mariadb", "--dsn", dsn, "--allow-changes")
	}
	logf("%s, %s: obsbench %s", method, cond, strings.Join(shown, " "))
	t0 := time.Now()
	text, err := sidebyside.RunObsbench(ctx, exe, args...)
	if err != nil {
		return e, fmt.Errorf("%s: %w", method, err)
	}
	e.elapsed = time.Since(t0)
	if err := os.WriteFile(filepath.Join(c.dir, fmt.Sprintf("output-%s-%s.txt", method, cond)), []byte(text), 0o644); err != nil {
		return e, err
	}
	e.sum, err = result.ReadSummary(filepath.Join(out, "summary.json"))
	return e, err
}

// The conditions an experiment runs in: nothing beside it, the drift
// thread (sidebyside.Drift), or a neighbour busy on one core all along
// (sidebyside.Neighbour).
const (
	quiet     = "quiet"
	drift     = "drift"
	neighbour = "neighbour"
)

// splitDuet is --method split,duet (whose comma -methods would split):
// a duet and a split of each observer on the first twin beside it.
const splitDuet = "split-duet"

// splitExternal is split on a server obsbench does not manage (--dsn):
// no restarts; the server runs on this machine, so each group's CPU is
// read as on a managed one.
const splitExternal = "split-external"

// externalServer starts a PostgreSQL the way a DBA's server would be for
// the observers (their libraries preloaded, the logging collector on),
// for obsbench to reach by --dsn only; stop stops it.
func externalServer(ctx context.Context) (dsn string, stop func(), err error) {
	settings := map[string]string{"shared_preload_libraries": "'pgaudit,pg_stat_statements'", "logging_collector": "on"}
	pg, _, stop, err := sidebyside.StartPostgres(ctx, "ext", settings, logf)
	if err != nil {
		return "", nil, err
	}
	return pg.DSN("ext"), stop, nil
}

// splitExternalMariaDB is splitExternal on a MariaDB.
const splitExternalMariaDB = "split-external-mariadb"

// externalMariaDB starts a MariaDB for obsbench to reach by --dsn only,
// as root with its password, over the server's Unix socket (the DSN is
// never logged: it holds the password); stop stops it.
func externalMariaDB(ctx context.Context) (dsn string, stop func(), err error) {
	m, err := mariadb.Start(ctx, mariadb.InstanceOptions{Log: logf})
	if err != nil {
		return "", nil, err
	}
	stop = func() {
		if err := m.Stop(); err != nil {
			logf("stopping the MariaDB server: %v", err)
		}
	}
	return "root:" + m.Password() + "@unix(" + m.Socket() + ")/", stop, nil
}

func report(c config, exps []experiment, busyMS int64, drifted, total time.Duration) string {
	r := sidebyside.NewReport("split, duet and auto side by side", c.command)
	r.Line("- %d experiments of `obsbench run --observers %s --max-time %v --count=false --seed %d`, one per method and condition, %v in all",
		len(exps), c.observers, c.budget, c.seed, total.Round(time.Second))
	if slices.Contains(c.methods, splitExternalMariaDB) {
		r.Line("- %s: `--engine mariadb --observers %s` instead, on a MariaDB the bench starts and obsbench reaches by --dsn alone", splitExternalMariaDB, c.mariadb)
	}
	if drifted > 0 {
		r.Line("- drift: a thread of the bench busy on one core for a random 3-12 s, then idle 3-12 s (busy %.0f%% of the drift experiments' time)",
			100*float64(busyMS)/float64(drifted.Milliseconds()))
	}
	if slices.Contains(c.conds, neighbour) {
		r.Line("- neighbour: a thread of the bench busy on one core for the whole experiment")
	}
	r.Line("- each interval at its experiment's level (95%% over its comparisons together, Bonferroni); half-width = half the interval")
	r.Line("")
	r.Line("| method | machine | took | condition | measures | overhead %% [CI] | half-width | basis |")
	r.Line("|---|---|---:|---|---|---|---:|---|")
	for _, e := range exps {
		for _, cs := range e.sum.Conditions {
			o := cs.Overhead
			if o == nil || !o.Measured() {
				continue
			}
			r.Line("| %s | %s | %v | %s | %s | %.2f [%.2f, %.2f] | ±%.2f | %s |", e.method, e.cond, e.elapsed.Round(time.Second), cs.Name, cs.Measures,
				o.Pct, o.CILow, o.CIHigh, (o.CIHigh-o.CILow)/2, o.Basis)
		}
	}
	shared(r, exps)
	return r.String()
}

// shared lists the shared parts a split beside a duet measured: each
// observer's whole overhead less its per-session one.
func shared(r *sidebyside.Report, exps []experiment) {
	head := false
	for _, e := range exps {
		for _, cs := range e.sum.Conditions {
			sp := cs.Shared
			if sp == nil {
				continue
			}
			if !head {
				r.Line("")
				r.Line("| method | machine | observer | shared part, points [CI] | basis |")
				r.Line("|---|---|---|---|---|")
				head = true
			}
			r.Line("| %s | %s | %s | %.2f [%.2f, %.2f] | %s |", e.method, e.cond, cs.Name, sp.Pct, sp.CILow, sp.CIHigh, sp.Basis)
		}
	}
}
