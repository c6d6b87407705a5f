package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/progress"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
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
)

// Default is the spec of 'obsbench run' with no flags: the default
// experiment on a managed PostgreSQL.
func Default() spec.Spec {
	return spec.Spec{
		Engine: "postgres", Standby: "none", Workload: "credit-top1",
		Replay: spec.Replay{Mode: "stress", Speed: 1},
		// Method "" is chosen by the run: duet where it can run, else
		// auto (chooseMethod).
		Method: "", Rounds: defaultRounds, Duration: defaultDuration, Warmup: defaultWarmup,
		Alternation: spec.Alternation{Duration: defaultAltDuration, PhaseMin: 2, PhaseMax: 4, Reps: 1},
		Count:       spec.Count{Statements: defaultCountStatements, Warmup: defaultCountWarmup},
		// DriverThreads is set again for the run's sessions unless given.
		MaxTime: 30 * time.Minute, DriverThreads: driver.DefaultProcs(16),
		// Waits stays 0 (off) in a plain run: sampling every 10 ms
		// costs more throughput than a default collector may
		// (bench/collectors/README.md). Studies that read waits switch
		// it on.
		Counters: true, KernelWaits: true, OnFailure: "continue", Format: "text",
	}
}

// Given says which of a spec's settings were chosen (by a flag of the
// same name, or a study) rather than left at their defaults: defaults
// that depend on the workload apply only to the others, and flags that
// no arm uses are warned about.
type Given map[string]bool

// runConfig is a validated experiment: its spec, and what the spec names.
type runConfig struct {
	spec.Spec
	wl        workload.Meta
	ds        dataset.Dataset
	observers []observer.Observer
	given     Given
	resuming  bool // continue the experiment already in Out
	// scripts are the user's scripts the workload runs, for the record.
	scripts []result.Script
	// files are what the workload read, for workers to read it too.
	files fileRecorder
	// methodChosen: no --method was given, and the run chose Method;
	// methodWhy is what kept a duet out then.
	methodChosen bool
	methodWhy    string
}

// Resolve completes s (the defaults that depend on its workload, a seed,
// a results directory) and checks it: every error is a usage error that
// names the setting (as its flag) and what would be valid.
func Resolve(s spec.Spec, given Given) (runConfig, error) {
	return resolve(s, given, false)
}

func resolve(s spec.Spec, given Given, resuming bool) (runConfig, error) {
	c := runConfig{Spec: s, given: given, resuming: resuming}
	if c.given == nil {
		c.given = Given{}
	}
	if err := c.resolveWaits(); err != nil {
		return c, err
	}
	if _, err := engine.Lookup(c.Engine); err != nil {
		return c, usageError{Err: err}
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if err := c.resolveWorkload(); err != nil {
		return c, err
	}
	c.resolveMethod()
	if err := c.checkRanges(); err != nil {
		return c, err
	}
	if err := c.checkDuet(); err != nil {
		if c.methodChosen {
			return c, usagef("%v (a duet is the default method for this server; --method auto runs the observers on one server)", err)
		}
		return c, err
	}
	if err := c.checkCounting(); err != nil {
		return c, err
	}
	if err := c.resolveClients(); err != nil {
		return c, err
	}
	if c.Out == "" {
		c.Out = filepath.Join("obsbench-results", time.Now().Format("20060102-150405"))
	}
	if !resuming {
		if err := checkOut(c.Out); err != nil {
			return c, err
		}
	}
	if err := c.checkWorkers(); err != nil {
		return c, err
	}
	var err error
	if c.observers, err = resolveObservers(c.Engine, c.ObserverFile, c.Observers); err != nil {
		return c, err
	}
	if c.DSN != "" && len(c.observers) > 1 && !c.AllowChanges && !c.given["dry-run"] {
		return c, usagef("--dsn names an external server: obsbench changes its settings for each observer and reverts them after each run; pass --allow-changes to agree, or measure a managed server (no --dsn)")
	}
	return c, nil
}

// resolveWaits sets the wait sampler's interval that --measure-collectors
// implies and checks the sampler's flags.
func (c *runConfig) resolveWaits() error {
	if c.MeasureCollectors && !c.given["waits"] {
		c.Waits = 10 * time.Millisecond // what the sampler costs when it is used
	}
	switch {
	case c.MeasureCollectors && c.Waits == 0:
		return usagef("--measure-collectors measures the wait sampler: give --waits an interval, not off")
	case c.given["kernel-waits"] && c.Waits == 0:
		return usagef("--kernel-waits is the wait sampler's: give --waits an interval, not off")
	case c.Waits != 0 && (c.Waits < time.Millisecond || c.Waits > 10*time.Second):
		return usagef("--waits %v: want an interval from 1ms to 10s (e.g. 10ms), or off", c.Waits)
	}
	return nil
}

// resolveWorkload builds the workload with its parameters and its
// dataset at its scale, and sets a fixed-work workload's time defaults.
func (c *runConfig) resolveWorkload() error {
	var err error
	read := readFile(os.ReadFile)
	if c.Workers > 0 || c.Method == "duet" || c.Method == "" {
		// What the workload reads, the workers get with the spec (a
		// duet drives each twin from a worker; a method not given may
		// turn out to be a duet).
		c.files = fileRecorder{}
		read = c.files.read
	}
	if c.wl, c.scripts, err = lookupWorkload(c.Spec, c.given, read); err != nil {
		return err
	}
	if c.wl, err = c.wl.WithParams(c.Params); err != nil {
		return usageError{Err: err}
	}
	if c.Replay.Passes > 0 || c.wl.FixedWork() {
		// Fixed work (a replay of N passes, dss-mix's --blocks): the
		// warm-up would take part of the work, and --duration only caps it.
		if !c.given["warmup"] {
			c.Warmup = 0
		}
		if !c.given["duration"] {
			c.Duration = time.Hour
		}
	}
	if !c.wl.RunsOn(c.Engine) {
		return usagef("--workload %s is written for %s only, not %s", c.wl.Name, strings.Join(c.wl.Engines, ", "), c.Engine)
	}
	scale := max(c.wl.DatasetScale, 1)
	if d, err := dataset.Lookup(c.wl.Dataset); err == nil && d.Scale != nil && c.wl.HasParam("scale") {
		scale = c.wl.Value("scale") // a dataset of one size: --scale is the workload's own (pgbench's :scale)
	}
	c.ds, err = dataset.Scaled(c.wl.Dataset, scale)
	return err
}

// resolveMethod chooses the method when none was given, and sets a
// duet's own defaults of phases and their length.
func (c *runConfig) resolveMethod() {
	if c.Method == "" {
		c.Method, c.methodWhy = c.chooseMethod(cgroup.Find)
		c.methodChosen = true
	}
	if c.Method != "duet" {
		return
	}
	if !c.given["rounds"] && !c.resuming {
		c.Rounds = DefaultDuetPhases
	}
	if !c.given["duration"] && !c.resuming && !c.wl.FixedWork() && c.Replay.Passes == 0 {
		c.Duration = DefaultDuetDuration
		if !c.given["warmup"] {
			c.Warmup = DefaultDuetWarmup
		}
	}
}

// resolveClients checks a sweep's flags and sets the sessions and driver
// threads the workload runs with, unless given.
func (c *runConfig) resolveClients() error {
	if len(c.Sessions) > 0 {
		if c.given["clients"] {
			return usagef("--sessions %s sweeps the session count: give it or --clients, not both", FormatSessions(c.Sessions))
		}
		if c.Format != "text" && c.Format != "json" {
			return usagef("--sessions prints the sweep as text or json, not %s (each session count's directory has its own summary.json)", c.Format)
		}
	}
	if c.given["clients"] || c.resuming {
		if c.Clients < 1 || c.Clients > 1000 {
			return usagef("--clients %d: want 1 to 1000", c.Clients)
		}
	} else {
		c.Clients = c.wl.DefaultClients
	}
	if !c.given["driver-threads"] && !c.resuming {
		c.DriverThreads = driver.DefaultProcs(c.Clients)
	}
	return nil
}

// Methods are the values of --method.
var Methods = []string{"auto", "alternation", "rounds", "instructions", "duet"}

// checkRanges refuses settings out of their ranges.
func (c runConfig) checkRanges() error {
	switch {
	case c.Warmup < 0 || c.Warmup > time.Hour:
		return usagef("--warmup %v: want 0s to 1h", c.Warmup)
	case c.Rounds < 2 || c.Rounds > 1000:
		return usagef("--rounds %d: want 2 to 1000 (one run is one sample; comparisons need several)", c.Rounds)
	case c.Duration < time.Second || c.Duration > 24*time.Hour:
		return usagef("--duration %v: want 1s to 24h", c.Duration)
	case !slices.Contains(report.Formats, c.Format):
		return usagef("--format %q: want one of %s", c.Format, strings.Join(report.Formats, ", "))
	case c.Wide && c.Format != "text":
		return usagef("-v widens the text table; --format %s has every column already", c.Format)
	case c.MaxOverhead != nil && (*c.MaxOverhead < 0 || *c.MaxOverhead > 100):
		return usagef("--max-overhead %g: want a percentage from 0 to 100", *c.MaxOverhead)
	case c.OnFailure != "continue" && c.OnFailure != "stop":
		return usagef("--on-failure %q: want continue or stop", c.OnFailure)
	case !slices.Contains(Methods, c.Method):
		return usagef("--method %q: want %s or %s", c.Method, strings.Join(Methods[:len(Methods)-1], ", "), Methods[len(Methods)-1])
	}
	a := c.Alternation
	switch {
	case a.PhaseMin < 2 || a.PhaseMax < a.PhaseMin || a.PhaseMax > 600:
		return usagef("--phase-min %d --phase-max %d: want 2 <= min <= max <= 600 seconds", a.PhaseMin, a.PhaseMax)
	case a.Duration < time.Duration(5*a.PhaseMin)*time.Second || a.Duration > 24*time.Hour:
		return usagef("--alt-duration %v: want at least 5 phases (%ds) and at most 24h", a.Duration, 5*a.PhaseMin)
	case c.TargetResolution < 0 || c.TargetResolution > 50:
		return usagef("--target-resolution %g: want a percentage above 0 and at most 50", c.TargetResolution)
	case c.MaxTime < time.Minute || c.MaxTime > 7*24*time.Hour:
		return usagef("--max-time %v: want 1m to 168h", c.MaxTime)
	case a.Reps < 1 || a.Reps > 1000:
		return usagef("--alt-rounds %d: want 1 to 1000", a.Reps)
	case c.DriverThreads < 1 || c.DriverThreads > 256:
		return usagef("--driver-threads %d: want 1 to 256", c.DriverThreads)
	}
	switch {
	case c.Standby != "none" && c.Standby != "async" && c.Standby != "sync":
		return usagef("--standby %q: want none, async or sync", c.Standby)
	case c.Standby != "none" && c.DSN != "":
		return usagef("--standby starts a standby of obsbench's managed server: not with --dsn")
	case c.StandbyDelay != 0 && c.Standby == "none":
		return usagef("--standby-delay needs --standby async or sync")
	case c.StandbyDelay < 0 || c.StandbyDelay > time.Second:
		return usagef("--standby-delay %v: want 0 to 1s", c.StandbyDelay)
	}
	return nil
}

// resolveObservers is the baseline and the named observers (the catalog's
// defaults when none is named), each once.
func resolveObservers(eng, file string, names []string) ([]observer.Observer, error) {
	cat, err := LoadCatalog(file)
	if err != nil {
		return nil, err
	}
	base, err := cat.Lookup(eng, observer.Baseline)
	if err != nil {
		return nil, err
	}
	out := []observer.Observer{base}
	if len(names) == 0 {
		out = append(out, cat.Defaults(eng)...)
	}
	seen := map[string]bool{observer.Baseline: true}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		o, err := cat.Lookup(eng, name)
		if err != nil {
			return nil, usageError{Err: err}
		}
		out = append(out, o)
	}
	return out, nil
}

// LoadCatalog returns the built-in catalog plus the user's observer file.
func LoadCatalog(file string) (*observer.Catalog, error) {
	cat, err := observer.Builtin()
	if err != nil {
		return nil, err
	}
	if file != "" {
		if err := cat.LoadFile(file); err != nil {
			return nil, usageError{Err: err}
		}
	}
	return cat, nil
}

// Execute runs the experiment of s (a sweep when s has Sessions) and
// prints its report; the error says whether it failed, was refused, or
// exceeded --max-overhead (*OverheadError).
func Execute(ctx context.Context, s spec.Spec, given Given, out Output) error {
	c, err := Resolve(s, given)
	if err != nil {
		return err
	}
	if given["dry-run"] {
		return dryRunOf(ctx, c, out.Stdout)
	}
	if c.Method == "instructions" {
		return runInstructions(ctx, c, out)
	}
	if len(c.Sessions) > 0 {
		points, err := runSweep(ctx, c, 1, out)
		return gateSweep(c, points, err)
	}
	sum, err := runExperiment(ctx, c, out)
	return gate(c, sum, printStudy(out.Stdout, c, sum, err))
}

// Output is where a command prints: its report on Stdout, progress and
// notes on Stderr.
type Output struct {
	Stdout, Stderr io.Writer
	// Command is the command line as given, its password removed: the
	// summary records it for people (it is never parsed again).
	Command []string
}

// usageError marks invalid input: nothing was started or changed.
type usageError = spec.InvalidError

var usagef = spec.Invalidf

// runExperiment runs a parsed run command, writes results.jsonl and
// summary.json, and prints the report. It returns the summary whenever
// some runs were made, also with an error.
func runExperiment(ctx context.Context, c runConfig, out Output) (*result.Summary, error) {
	stdout, stderr := out.Stdout, out.Stderr
	logf := progress.Notes(stderr)

	hier, err := c.duetHierarchy()
	if err != nil {
		return nil, err
	}
	target, err := openServer(ctx, c.Engine, engine.Options{DSN: c.DSN, Standby: c.Standby, StandbyDelay: c.StandbyDelay, Log: logf})
	if err != nil {
		return nil, err
	}
	defer engine.Close(target, logf)
	// A managed twin is a copy of the first server once its dataset is
	// loaded, where the engine can copy one; else it is started and loaded
	// as the first was.
	var twin engine.Server
	copier, copies := target.(engine.Copier)
	copyTwin := c.Method == "duet" && c.TwinDSN == "" && copies
	if c.Method == "duet" && !copyTwin {
		if twin, err = openTwin(ctx, c, target, logf); err != nil {
			return nil, err
		}
		defer engine.Close(twin, logf)
	}
	c.logMethod(logf)
	done, err := c.openResults(logf)
	if err != nil {
		return nil, err
	}
	if err := c.prepare(ctx, target, logf); err != nil {
		return nil, err
	}
	if copyTwin {
		logf("starting the twin server: a copy of the first, dataset included")
		if twin, err = copier.Copy(ctx, logf); err != nil {
			return nil, fmt.Errorf("twin: %w", err)
		}
		defer engine.Close(twin, logf)
	}
	head, err := c.summaryHead(ctx, target, out.Command)
	if err != nil {
		return nil, err
	}
	logf("seed %d; results in %s", c.Seed, c.Out)

	names := observer.Names(c.observers)
	if c.MeasureCollectors {
		names = append(names, experiment.CollectorArm)
	}
	ecfg := c.experimentConfig(target, done, logf, stderr)
	stopLoad, err := c.attachLoad(ctx, &ecfg, target, twin, !copyTwin, hier, logf)
	defer stopLoad()
	if err != nil {
		return nil, err
	}
	// The arms are planned once (on the server: which part of each
	// observer a reload switches), for the warnings and the runs.
	if ecfg.Arms, err = experiment.Arms(ctx, ecfg); err != nil {
		return nil, err
	}
	unused := unusedFlags(c, ecfg.Arms)
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
	if err := c.writeResults(sum, runs, stdout, logf); err != nil {
		return nil, err
	}
	return &sum, runErr
}

// attachLoad gives ecfg what drives the load when this process does not
// alone: a duet's twins (startedTwin: the twin was started, not copied),
// or workers. The function returned stops them, also after an error.
func (c runConfig) attachLoad(ctx context.Context, ecfg *experiment.Config, target, twin engine.Server, startedTwin bool, hier cgroup.Hierarchy, logf func(string, ...any)) (stop func(), err error) {
	stop = func() {}
	if c.Method == "duet" {
		twins, load, closeTwins, err := twinsOf(ctx, c, target, twin, startedTwin, hier, logf)
		if err != nil {
			return stop, err
		}
		ecfg.Twins, ecfg.Load, stop = twins, load, closeTwins
	}
	if c.Workers > 0 {
		workers, err := startWorkers(ctx, c, target, filepath.Join(c.Out, "workers"), logf)
		if err != nil {
			return stop, err
		}
		closeTwins := stop
		ecfg.Load, stop = workers, func() { workers.Close(); closeTwins() }
	}
	return stop, nil
}

// duetHierarchy is the cgroup hierarchy a duet's twins get equal CPU
// shares in, found before anything starts: without them a twin that
// waits would lend its CPU to the other. Other methods need none.
func (c runConfig) duetHierarchy() (cgroup.Hierarchy, error) {
	if c.Method != "duet" {
		return cgroup.Hierarchy{}, nil
	}
	h, err := cgroup.Find()
	if err != nil {
		return h, usagef("--method duet: %v", err)
	}
	return h, nil
}

// summaryHead is what a summary says of the experiment besides its
// results: the server's version and the environment, read before the runs.
func (c runConfig) summaryHead(ctx context.Context, target engine.Server, command []string) (result.Summary, error) {
	ver, err := target.Version(ctx)
	if err != nil {
		return result.Summary{}, err
	}
	env, err := environment(ctx, target, c, command)
	if err != nil {
		return result.Summary{}, err
	}
	return result.Summary{
		Engine: c.Engine, Server: ver, Workload: c.wl.Name, Clients: c.Clients, Seed: c.Seed,
		Rounds: c.Rounds, Seconds: c.Duration.Seconds(), Warmup: c.Warmup.Seconds(), AltSeconds: c.Alternation.Duration.Seconds(),
		Environment: env,
	}, nil
}

// prepare checks, before anything changes (the database included), that
// the login may make every change, then loads the dataset and the
// workload's set-up and checks its statements.
func (c runConfig) prepare(ctx context.Context, target engine.Server, logf func(string, ...any)) error {
	if pc, ok := target.(engine.PermissionChecker); ok {
		if _, err := pc.CheckPermissions(ctx, c.observers); err != nil {
			return err
		}
	}
	if err := engine.Prepare(ctx, target, c.Engine, c.wl, c.ds, logf); err != nil {
		return err
	}
	return checkStatements(ctx, target, c.wl)
}

// logMethod says which method a run chose, and why, when none was given.
func (c runConfig) logMethod(logf func(string, ...any)) {
	switch {
	case !c.methodChosen:
	case c.Method == "duet":
		logf("method duet: the observer's server and its twin driven at the same time (the default where twins can run; --method auto for rounds and alternation on one server)")
	default:
		logf("method auto, not duet: %s", c.methodWhy)
	}
}

// openResults creates the results directory and records the experiment
// in it, or, resuming, reads the runs it finished.
func (c runConfig) openResults(logf func(string, ...any)) (done map[int]result.Run, err error) {
	if err := os.MkdirAll(c.Out, 0o700); err != nil {
		return nil, fmt.Errorf("create --out directory: %w", err)
	}
	if c.resuming {
		return finishedRuns(c.Out, logf)
	}
	return nil, writeExperiment(c)
}

// experimentConfig is the experiment c runs on target, the runs in done
// already finished.
func (c runConfig) experimentConfig(target engine.Server, done map[int]result.Run, logf func(string, ...any), stderr io.Writer) experiment.Config {
	return experiment.Config{
		Target: target, Workload: c.wl, Dataset: c.ds, Observers: c.observers,
		Rounds: c.Rounds, Seed: c.Seed, Out: c.Out, Method: experiment.Method(c.Method),
		Alternation: experiment.Alternation{Duration: c.Alternation.Duration, MinPhase: c.Alternation.PhaseMin, MaxPhase: c.Alternation.PhaseMax,
			Reps: c.Alternation.Reps, CheckDuration: experiment.DefaultCheckDuration},
		TargetResolution: c.TargetResolution, MaxTime: c.MaxTime, Log: logf,
		Done:          done,
		StopOnFailure: c.OnFailure == "stop",
		Probes:        experiment.Probes{WaitInterval: c.Waits, KernelWaits: c.KernelWaits, Counters: c.Counters, MeasureCost: c.MeasureCollectors},
		// A mix of few, long statements (dss-mix): each is kept, with its
		// server CPU, for the comparison query by query (analysis).
		Driver:   driver.Config{Clients: c.Clients, Warmup: c.Warmup, Duration: c.Duration, Procs: c.DriverThreads, Executions: c.wl.LongStatements},
		Progress: progress.Printer(stderr),
	}
}

// writeResults writes summary.json and the report in c's format, and
// says where the results are.
func (c runConfig) writeResults(sum result.Summary, runs []result.Run, stdout io.Writer, logf func(string, ...any)) error {
	if err := result.WriteSummary(filepath.Join(c.Out, "summary.json"), sum); err != nil {
		return err
	}
	if err := writeReport(c.Out, c.Format, c.Wide, sum, runs, stdout); err != nil {
		return err
	}
	if c.Format == "text" {
		fmt.Fprintf(stdout, "\nresults: %s\n", c.Out)
	} else {
		logf("results: %s", c.Out)
	}
	return nil
}

// driverThreads is the driver's thread count for a run of clients
// sessions: --driver-threads if given, else the default for that many.
func (c runConfig) driverThreads(clients int) int {
	if c.given["driver-threads"] || c.resuming {
		return c.DriverThreads
	}
	return driver.DefaultProcs(clients)
}

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
func environment(ctx context.Context, t engine.Server, c runConfig, command []string) (*result.Environment, error) {
	settings, err := t.ChangedSettings(ctx)
	if err != nil {
		return nil, err
	}
	standby := ""
	if c.Standby != "" && c.Standby != "none" {
		standby = c.Standby
		if c.StandbyDelay > 0 {
			standby += fmt.Sprintf(", +%v each way", c.StandbyDelay)
		}
	}
	return &result.Environment{
		Command:   command,
		Obsbench:  Version,
		Machine:   collect.ThisMachine(),
		Settings:  settings,
		Standby:   standby,
		Scripts:   c.scripts,
		QueryMode: c.queryModeName(),
	}, nil
}

// openServer opens the server of engine name: the external one of o.DSN,
// or a managed one.
func openServer(ctx context.Context, name string, o engine.Options) (engine.Server, error) {
	e, err := engine.Lookup(name)
	if err != nil {
		return nil, usageError{Err: err}
	}
	return e.Open(ctx, o)
}

// Version is obsbench's version, as the command was built; summaries
// record it.
var Version = "dev"

// SplitList splits a comma-separated value, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
