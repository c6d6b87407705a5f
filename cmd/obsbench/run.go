package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// Defaults of the default experiment: baseline and four observers, each
// measured whole (rounds) and its switchable part (alternation), about
// eleven minutes on a 2-core machine. Six rounds is the least at which a
// rank test over eight comparisons can be significant at all (5 against
// 5 runs: p >= 2/252, over the 0.05/8 each interval is held to).
const (
	defaultRounds   = 6
	defaultDuration = 8 * time.Second
	defaultWarmup   = 2 * time.Second
	// An alternation run of 60 s holds about 10 on phases of 2-4 s with off
	// phases on both sides: enough for a paired interval over four
	// comparisons (8 pairs needed), and five such runs take 5.5 minutes.
	defaultAltDuration = 60 * time.Second
	// eventsCheck is the run that counts an alternating observer's events.
	eventsCheck = 2 * time.Second
	// defaultWaits leaves the wait sampler off in a plain run: sampling
	// every 10 ms cost 5.0% [1.0, 8.6] of throughput here, over the 1%
	// a default collector may cost (bench/collectors/RESULT.md). Studies
	// that read waits switch it on.
	defaultWaits = "off"
)

type runFlags struct {
	engine, dsn, workload, observers, observerFile, out string
	rounds, clients, driverProcs                        int
	duration, warmup                                    time.Duration
	seed                                                uint64
	allowChanges                                        bool
	method                                              string
	altDuration                                         time.Duration
	phaseMin, phaseMax, altRounds                       int
	targetResolution                                    float64
	maxTime                                             time.Duration
	waits                                               string
	counters, measureCollectors, dryRun                 bool
	resume, onFailure                                   string
	format                                              string
	maxOverhead                                         float64
	// params are the workload parameters given as flags, by name.
	params map[string]*int
	// sessions, if set, runs the experiment once per session count (a
	// concurrency sweep) instead of once at --clients.
	sessions string
	// standby, on a managed PostgreSQL: none, async or sync; standbyDelay
	// is the one-way delay added between primary and standby.
	standby      string
	standbyDelay time.Duration
	// capture is the capture file --workload replay replays, with how.
	capture      string
	replayMode   string
	replaySpeed  float64
	replayPasses int
}

// runConfig is a validated run command.
type runConfig struct {
	runFlags
	wl           workload.Meta
	ds           dataset.Dataset
	observers    []observer.Observer
	waitInterval time.Duration // 0: wait sampler off
	args         []string      // as given, for experiment.json
	resuming     bool
	given        map[string]bool // flags given on the command line (or by the study)
	study        string          // the study this run is, if any
	sweep        []int           // --sessions: the session counts, in order
}

// parseRun parses a run command; -h prints its flags on help.
func parseRun(args []string, help io.Writer) (runConfig, error) {
	return parseRunArgs(args, help, false)
}

// parseRunArgs parses a run command; resuming skips the check that --out
// holds no results yet.
func parseRunArgs(args []string, help io.Writer, resuming bool) (runConfig, error) {
	var f runFlags
	fs := flag.NewFlagSet("obsbench run", flag.ContinueOnError)
	fs.StringVar(&f.engine, "engine", "postgres", "database engine: postgres, mariadb or sqlserver (sqlserver: external servers only, with --dsn)")
	fs.StringVar(&f.dsn, "dsn", "", "external server to measure (postgres: libpq connection string or URL; mariadb: user:password@tcp(host:3306)/database; sqlserver: sqlserver://user:password@host:1433); default: a managed server started from the local binaries (postgres and mariadb)")
	fs.StringVar(&f.workload, "workload", "credit-top1", "workload to run")
	fs.StringVar(&f.observers, "observers", "", "comma-separated observers to compare with baseline (default: the catalog's default set; see 'obsbench observers')")
	fs.StringVar(&f.observerFile, "observer-file", "", "YAML file with more observers (same schema as the catalog)")
	fs.IntVar(&f.rounds, "rounds", defaultRounds, "rounds; each runs every condition once, in a seeded random order")
	fs.DurationVar(&f.duration, "duration", defaultDuration, "measured time of each run")
	fs.DurationVar(&f.warmup, "warmup", defaultWarmup, "unmeasured warm-up before each run's measured time")
	fs.IntVar(&f.clients, "clients", 0, "client sessions (default: the workload's, 16 for credit-top1)")
	fs.IntVar(&f.driverProcs, "driver-threads", defaultDriverProcs(), "OS threads of the load driver (GOMAXPROCS while it runs); one per 8 cores keeps its CPU per statement near pgbench's")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the run order (default: from the clock; printed either way)")
	fs.StringVar(&f.method, "method", "auto", "how observers are compared: auto (each observer whole, in rounds on freshly restarted servers, and beside it its switchable part by alternation when part of it stays in force; alternation alone when a reload switches all of it), alternation (the switchable part only), rounds (whole only)")
	fs.DurationVar(&f.altDuration, "alt-duration", defaultAltDuration, "measured time of each alternation run")
	fs.IntVar(&f.phaseMin, "phase-min", 2, "shortest alternation phase, seconds (its first second is dropped)")
	fs.IntVar(&f.phaseMax, "phase-max", 4, "longest alternation phase, seconds")
	fs.IntVar(&f.altRounds, "alt-rounds", 1, "alternation runs per observer")
	fs.Float64Var(&f.targetResolution, "target-resolution", 0, "overhead in percent each alternation comparison should detect (80% power): an A/A pilot run sizes the observers' runs")
	fs.DurationVar(&f.maxTime, "max-time", 30*time.Minute, "with --target-resolution: the longest the whole experiment may take")
	fs.StringVar(&f.out, "out", "", "directory for results.jsonl and summary.json (default: obsbench-results/<time>)")
	fs.BoolVar(&f.allowChanges, "allow-changes", false, "with --dsn: allow obsbench to change the external server's settings (reverted after each run)")
	fs.StringVar(&f.waits, "waits", defaultWaits, "sample the active sessions' waits every this often (e.g. 10ms), or off")
	fs.BoolVar(&f.counters, "counters", true, "record the engine's activity counters (transactions, WAL, checkpoints, log bytes) as rates; --counters=false turns it off")
	fs.StringVar(&f.onFailure, "on-failure", "continue", "when a run fails (connection dropped, server restarted, statement error): continue with the next run, or stop")
	fs.StringVar(&f.resume, "resume", "", "continue the interrupted experiment in this results directory: finished runs are kept, the rest run")
	fs.BoolVar(&f.dryRun, "dry-run", false, "with --dsn: print every change and statement obsbench would make on the server, and change nothing")
	fs.StringVar(&f.format, "format", "text", "report on standard output as text, json, csv or benchstat (report.html is written to --out either way)")
	fs.Float64Var(&f.maxOverhead, "max-overhead", -1, "exit with code 3 when an observer's overhead exceeds this percentage with 95% confidence (its whole interval above it)")
	fs.StringVar(&f.sessions, "sessions", "", "concurrency sweep: run the whole experiment once per session count (e.g. 1,2,4,8,16,32) and print overhead per count; results in --out/sessions-N")
	fs.StringVar(&f.standby, "standby", "none", "managed server only: start a standby, async or sync (PostgreSQL: streaming standby named in synchronous_standby_names; MariaDB: replica, semi-synchronous with sync), or none")
	fs.DurationVar(&f.standbyDelay, "standby-delay", 0, "with --standby: one-way delay between primary and standby (e.g. 1ms), added by obsbench's TCP relay")
	fs.StringVar(&f.capture, "capture", "", "with --workload replay: the capture file to replay (made by 'obsbench capture')")
	fs.StringVar(&f.replayMode, "replay-mode", "stress", "with --workload replay: stress (each session's statements as fast as the server answers, in captured order) or sync (at the captured times divided by --replay-speed)")
	fs.Float64Var(&f.replaySpeed, "replay-speed", 1, "with --replay-mode sync: divide the captured times by this factor")
	fs.IntVar(&f.replayPasses, "replay-passes", 0, "with --workload replay: replay each session this many times, then end the run (fixed work; --duration is then a cap); 0 repeats until --duration ends")
	f.params = map[string]*int{}
	for _, p := range workload.AllParams() {
		f.params[p.Name] = fs.Int(p.Name, p.Default, p.Usage+" (a workload parameter)")
	}
	fs.BoolVar(&f.measureCollectors, "measure-collectors", false, "add an arm that switches the wait sampler on and off on an alternation schedule: the collector's own overhead (--waits defaults to 10ms then)")
	if err := parseFlags(fs, args, help); err != nil {
		return runConfig{}, err
	}
	if f.resume != "" {
		if fs.NFlag() != 1 {
			return runConfig{}, usagef("--resume takes no other flags: the experiment's own are in %s", filepath.Join(f.resume, experimentFile))
		}
		return resumeConfig(f.resume, help)
	}
	c := runConfig{runFlags: f, args: args, resuming: resuming, given: map[string]bool{}}
	fs.Visit(func(fl *flag.Flag) { c.given[fl.Name] = true })
	if f.measureCollectors && !flagSet(fs, "waits") {
		c.waits = "10ms" // what the sampler costs when it is used
	}
	if err := c.parseWaits(); err != nil {
		return c, err
	}
	if err := checkEngine(f.engine); err != nil {
		return c, err
	}
	var err error
	if c.wl, err = lookupWorkload(fs, f); err != nil {
		return c, err
	}
	given := map[string]int{}
	for name, v := range f.params {
		if flagSet(fs, name) {
			given[name] = *v
		}
	}
	if c.wl, err = c.wl.WithParams(given); err != nil {
		return c, usageError{Err: err}
	}
	if f.replayPasses > 0 || c.wl.FixedWork() {
		// Fixed work (a replay of N passes, dss-mix's --blocks): the
		// warm-up would take part of the work, and --duration only caps it.
		if !flagSet(fs, "warmup") {
			c.warmup = 0
		}
		if !flagSet(fs, "duration") {
			c.duration = time.Hour
		}
	}
	if !c.wl.RunsOn(f.engine) {
		return c, usagef("--workload %s is written for %s only, not %s", c.wl.Name, strings.Join(c.wl.Engines, ", "), f.engine)
	}
	scale := max(c.wl.DatasetScale, 1)
	if c.wl.HasParam("scale") {
		scale = c.wl.Value("scale")
	}
	if c.ds, err = dataset.Scaled(c.wl.Dataset, scale); err != nil {
		return c, err
	}
	switch {
	case c.warmup < 0 || c.warmup > time.Hour:
		return c, usagef("--warmup %v: want 0s to 1h", f.warmup)
	case f.rounds < 2 || f.rounds > 1000:
		return c, usagef("--rounds %d: want 2 to 1000 (one run is one sample; comparisons need several)", f.rounds)
	case f.duration < time.Second || f.duration > 24*time.Hour:
		return c, usagef("--duration %v: want 1s to 24h", f.duration)
	case !slices.Contains(report.Formats, f.format):
		return c, usagef("--format %q: want one of %s", f.format, strings.Join(report.Formats, ", "))
	case flagSet(fs, "max-overhead") && (f.maxOverhead < 0 || f.maxOverhead > 100):
		return c, usagef("--max-overhead %g: want a percentage from 0 to 100", f.maxOverhead)
	case f.onFailure != "continue" && f.onFailure != "stop":
		return c, usagef("--on-failure %q: want continue or stop", f.onFailure)
	case f.method != "auto" && f.method != "alternation" && f.method != "rounds":
		return c, usagef("--method %q: want auto, alternation or rounds", f.method)
	case f.phaseMin < 2 || f.phaseMax < f.phaseMin || f.phaseMax > 600:
		return c, usagef("--phase-min %d --phase-max %d: want 2 <= min <= max <= 600 seconds", f.phaseMin, f.phaseMax)
	case f.altDuration < time.Duration(5*f.phaseMin)*time.Second || f.altDuration > 24*time.Hour:
		return c, usagef("--alt-duration %v: want at least 5 phases (%ds) and at most 24h", f.altDuration, 5*f.phaseMin)
	case f.targetResolution < 0 || f.targetResolution > 50:
		return c, usagef("--target-resolution %g: want a percentage above 0 and at most 50", f.targetResolution)
	case f.maxTime < time.Minute || f.maxTime > 7*24*time.Hour:
		return c, usagef("--max-time %v: want 1m to 168h", f.maxTime)
	case f.altRounds < 1 || f.altRounds > 1000:
		return c, usagef("--alt-rounds %d: want 1 to 1000", f.altRounds)
	case f.driverProcs < 1 || f.driverProcs > 256:
		return c, usagef("--driver-threads %d: want 1 to 256", f.driverProcs)
	}
	switch {
	case f.standby != "none" && f.standby != "async" && f.standby != "sync":
		return c, usagef("--standby %q: want none, async or sync", f.standby)
	case f.standby != "none" && f.dsn != "":
		return c, usagef("--standby starts a standby of obsbench's managed server: not with --dsn")
	case f.standbyDelay != 0 && f.standby == "none":
		return c, usagef("--standby-delay needs --standby async or sync")
	case f.standbyDelay < 0 || f.standbyDelay > time.Second:
		return c, usagef("--standby-delay %v: want 0 to 1s", f.standbyDelay)
	}
	if f.sessions != "" {
		counts, err := parseSessions(f.sessions)
		if err != nil {
			return c, err
		}
		if flagSet(fs, "clients") {
			return c, usagef("--sessions %s sweeps the session count: give it or --clients, not both", f.sessions)
		}
		if f.format != "text" && f.format != "json" {
			return c, usagef("--sessions prints the sweep as text or json, not %s (each session count's directory has its own summary.json)", f.format)
		}
		c.sweep = counts
	}
	if flagSet(fs, "clients") {
		if f.clients < 1 || f.clients > 1000 {
			return c, usagef("--clients %d: want 1 to 1000", f.clients)
		}
	} else {
		c.clients = c.wl.DefaultClients
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	if c.out == "" {
		c.out = filepath.Join("obsbench-results", time.Now().Format("20060102-150405"))
	}
	if err := checkOut(c.out); err != nil && !resuming {
		return c, err
	}
	cat, err := loadCatalog(f.observerFile)
	if err != nil {
		return c, err
	}
	base, err := cat.Lookup(f.engine, observer.Baseline)
	if err != nil {
		return c, err
	}
	c.observers = []observer.Observer{base}
	if f.observers == "" {
		c.observers = append(c.observers, cat.Defaults(f.engine)...)
	}
	seen := map[string]bool{observer.Baseline: true}
	for _, name := range splitList(f.observers) {
		if seen[name] {
			continue
		}
		seen[name] = true
		o, err := cat.Lookup(f.engine, name)
		if err != nil {
			return c, usageError{Err: err}
		}
		c.observers = append(c.observers, o)
	}
	if f.dryRun && f.dsn == "" {
		return c, usagef("--dry-run shows what obsbench would change on an external server: give --dsn (a managed server is obsbench's own)")
	}
	if f.dsn != "" && len(c.observers) > 1 && !f.allowChanges && !f.dryRun {
		return c, usagef("--dsn names an external server: obsbench changes its settings for each observer and reverts them after each run; pass --allow-changes to agree, or measure a managed server (no --dsn)")
	}
	return c, nil
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseRun(args, stdout)
	if err != nil {
		return err
	}
	if c.dryRun {
		return dryRun(ctx, c, stdout)
	}
	if len(c.sweep) > 0 {
		points, err := runSweep(ctx, c, 1, stdout, stderr)
		return gateSweep(c, points, err)
	}
	sum, err := runExperiment(ctx, c, stdout, stderr)
	return gate(c, sum, printStudy(stdout, c, sum, err))
}

// runExperiment runs a parsed run command, writes results.jsonl and
// summary.json, and prints the report. It returns the summary whenever
// some runs were made, also with an error.
func runExperiment(ctx context.Context, c runConfig, stdout, stderr io.Writer) (*result.Summary, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "obsbench: "+format+"\n", args...) }

	target, err := openServer(ctx, c.engine, engine.Options{DSN: c.dsn, Standby: c.standby, StandbyDelay: c.standbyDelay, Log: logf})
	if err != nil {
		return nil, err
	}
	defer closeServer(target, logf)
	if err := os.MkdirAll(c.out, 0o700); err != nil {
		return nil, fmt.Errorf("create --out directory: %w", err)
	}
	var done map[int]result.Run
	if c.resuming {
		if done, err = finishedRuns(c.out, logf); err != nil {
			return nil, err
		}
	} else if err := writeExperiment(c); err != nil {
		return nil, err
	}
	if err := engine.Prepare(ctx, target, c.engine, c.wl, c.ds, logf); err != nil {
		return nil, err
	}
	ver, err := target.Version(ctx)
	if err != nil {
		return nil, err
	}
	env, err := environment(ctx, target, c)
	if err != nil {
		return nil, err
	}
	logf("seed %d; results in %s", c.seed, c.out)

	names := make([]string, len(c.observers))
	for i, o := range c.observers {
		names[i] = o.Name
	}
	if c.measureCollectors {
		names = append(names, experiment.CollectorArm)
	}
	head := result.Summary{
		Engine: c.engine, Server: ver, Workload: c.wl.Name, Clients: c.clients, Seed: c.seed,
		Rounds: c.rounds, Seconds: c.duration.Seconds(), Warmup: c.warmup.Seconds(), AltSeconds: c.altDuration.Seconds(),
		Environment: env,
	}
	ecfg := experiment.Config{
		Target: target, Workload: c.wl, Dataset: c.ds, Observers: c.observers,
		Rounds: c.rounds, Seed: c.seed, Out: c.out, Method: experiment.Method(c.method),
		Alternation: experiment.Alternation{Duration: c.altDuration, MinPhase: c.phaseMin, MaxPhase: c.phaseMax,
			Reps: c.altRounds, CheckDuration: eventsCheck},
		TargetResolution: c.targetResolution, MaxTime: c.maxTime, Log: logf,
		Done:          done,
		StopOnFailure: c.onFailure == "stop",
		Probes:        experiment.Probes{WaitInterval: c.waitInterval, Counters: c.counters, MeasureCost: c.measureCollectors},
		Driver:        driver.Config{Clients: c.clients, Warmup: c.warmup, Duration: c.duration, Procs: c.driverProcs},
		Progress:      progressPrinter(stderr),
	}
	unused, err := unusedFlags(ctx, c, ecfg)
	if err != nil {
		return nil, err
	}
	for _, w := range unused {
		logf("warning: %s", w)
	}
	runs, runErr := experiment.Run(ctx, ecfg)
	if runErr != nil && len(runs) == 0 {
		return nil, runErr
	}
	sum := analysis.Summarize(head, names, runs)
	sum.Warnings = append(unused, sum.Warnings...)
	if runErr != nil {
		sum.Warnings = append(sum.Warnings, "experiment incomplete: "+runErr.Error())
	}
	if err := result.WriteSummary(filepath.Join(c.out, "summary.json"), sum); err != nil {
		return nil, err
	}
	if err := writeReport(c.out, c.format, sum, runs, stdout); err != nil {
		return nil, err
	}
	if c.format == "text" {
		fmt.Fprintf(stdout, "\nresults: %s\n", c.out)
	} else {
		logf("results: %s", c.out)
	}
	return &sum, runErr
}

// parseWaits reads --waits: off, or an interval from 1ms to 10s.
func (c *runConfig) parseWaits() error {
	if c.waits == "off" || c.waits == "0" {
		if c.measureCollectors {
			return usagef("--measure-collectors measures the wait sampler: give --waits an interval, not off")
		}
		return nil
	}
	d, err := time.ParseDuration(c.waits)
	if err != nil || d < time.Millisecond || d > 10*time.Second {
		return usagef("--waits %q: want an interval from 1ms to 10s (e.g. 10ms), or off", c.waits)
	}
	c.waitInterval = d
	return nil
}

// progressPrinter prints a line as each run ends. On a terminal it also
// keeps a live status line while a run goes on: the condition and round,
// the run's statements per second over the last second, time elapsed and
// left. Elsewhere (a CI log, a file) it stays quiet between runs.
func progressPrinter(w io.Writer) func(experiment.Progress) {
	live := isTerminal(w)
	var stop chan struct{}
	var done sync.WaitGroup
	return func(p experiment.Progress) {
		if !p.Done {
			if live && p.Executed != nil {
				stop = make(chan struct{})
				done.Add(1)
				go func() {
					defer done.Done()
					statusLine(w, p, stop)
				}()
			}
			return
		}
		if stop != nil {
			close(stop)
			done.Wait()
			stop = nil
		}
		status := fmt.Sprintf("%8.0f stmt/s", p.Run.Driver.Throughput)
		if p.Run.Error != "" {
			status = "FAILED: " + p.Run.Error
		}
		fmt.Fprintf(w, "[%3d/%d] round %d/%d  %-34s %s  (%s elapsed, ~%s left)\n",
			p.Seq, p.Total, p.Round, p.Rounds, p.Condition, status,
			p.Elapsed.Round(time.Second), p.Remaining.Round(time.Second))
	}
}

// statusLine rewrites one terminal line every second until stop closes,
// then clears it.
func statusLine(w io.Writer, p experiment.Progress, stop chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	began, last := time.Now(), p.Executed.Load()
	for {
		select {
		case <-stop:
			fmt.Fprint(w, "\r\033[K")
			return
		case <-t.C:
		}
		n := p.Executed.Load()
		in := time.Since(began)
		fmt.Fprintf(w, "\r\033[K[%3d/%d] round %d/%d  %-34s %8d stmt/s  run %s  (%s elapsed, ~%s left)",
			p.Seq, p.Total, p.Round, p.Rounds, p.Condition, n-last, in.Round(time.Second),
			(p.Elapsed + in).Round(time.Second), max(0, p.Remaining-in).Round(time.Second))
		last = n
	}
}

// isTerminal says whether w is a terminal (not a pipe, a file or
// /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// defaultDriverProcs is one driver thread per 8 cores, at least one.
func defaultDriverProcs() int { return max(1, runtime.NumCPU()/8) }

// checkOut refuses an --out directory that already holds an experiment,
// before anything starts.
func checkOut(dir string) error {
	for _, f := range []string{"results.jsonl", experimentFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return usagef("--out %s already holds an experiment's results; choose another directory, or continue it with --resume %s", dir, dir)
		}
	}
	for _, f := range []string{sweepFile, reliabilityFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return usagef("--out %s already holds a sweep's or a study's results; choose another directory", dir)
		}
	}
	return nil
}

// environment records where and how the experiment runs, with the
// server's settings as found, before any observer.
func environment(ctx context.Context, t engine.Server, c runConfig) (*result.Environment, error) {
	settings, err := t.ChangedSettings(ctx)
	if err != nil {
		return nil, err
	}
	cmd := "run"
	if c.study != "" {
		cmd = "study " + c.study
	}
	standby := ""
	if c.standby != "" && c.standby != "none" {
		standby = c.standby
		if c.standbyDelay > 0 {
			standby += fmt.Sprintf(", +%v each way", c.standbyDelay)
		}
	}
	return &result.Environment{
		Command:  append([]string{"obsbench", cmd}, redactArgs(c.args)...),
		Obsbench: version,
		Machine:  collect.ThisMachine(),
		Settings: settings,
		Standby:  standby,
	}, nil
}
