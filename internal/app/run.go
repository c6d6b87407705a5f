package app

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/counting"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/process"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
	"github.com/obsbench/obsbench/internal/workloadspec"
)

// Experiment is a validated experiment: its spec, and what the spec names.
type Experiment struct {
	spec.Spec
	wl        workload.Meta
	ds        dataset.Dataset
	observers []observer.Observer
	info      engine.Info // what the engine says of itself
	resuming  bool        // continue the experiment already in Out
	out       Output      // where it runs (Run's, else ResolveIn's)
	// scripts are the user's scripts the workload runs, for the record.
	scripts []result.Script
	// files are what the workload read, for workers to read it too.
	files workloadspec.Recorder
	// methodChosen: no --method was given, and the run chose Method;
	// methodWhy is what kept a duet out then.
	methodChosen bool
	methodWhy    string
	// loadDefaulted: LoadPct is a duet's default, not the user's.
	loadDefaulted bool
	// splitByDefault names the observers an auto run on one server
	// measures by split (chooseSplit), the others by auto.
	splitByDefault []string
	// counting: the conditions are counted after the timed runs
	// (--count, where it can run); countMissing is why they are not,
	// though --count is on by default.
	counting     bool
	countMissing string
	// queries are the workload's statement names, counted apart
	// (--count-per-query).
	queries []string
}

// Resolve completes s (the defaults that depend on its workload, a seed,
// a results directory) and checks it: every error is a usage error that
// names the setting (as its flag) and what would be valid. It is
// ResolveIn with no Output: enough to check a spec, not to run it.
func Resolve(s spec.Spec) (Experiment, error) { return resolve(s, false, Output{}) }

// ResolveIn is Resolve of an experiment that runs in out's environment.
func ResolveIn(s spec.Spec, out Output) (Experiment, error) { return resolve(s, false, out) }

func resolve(s spec.Spec, resuming bool, out Output) (Experiment, error) {
	c := Experiment{Spec: s, resuming: resuming, out: out}
	if c.MeasureCollectors && !c.IsChosen("waits") {
		c.Waits = 10 * time.Millisecond // what the sampler costs when it is used
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	if !slices.Contains(report.Formats, c.Format) {
		return c, usagef("--format %q: want one of %s", c.Format, strings.Join(spec.Names(report.Formats), ", "))
	}
	e, err := engine.Lookup(c.Engine)
	if err != nil {
		return c, spec.FromEngine(err, "--dsn")
	}
	c.info = e.Info()
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if err := c.resolveWorkload(); err != nil {
		return c, err
	}
	c.resolveMethod()
	if err := c.ValidateOpenFlags(); err != nil {
		return c, err
	}
	if err := c.ValidateDuet(runtime.NumCPU()); err != nil {
		if c.methodChosen {
			return c, usagef("%v (a duet is the default method for this server; --method auto runs the observers on one server)", err)
		}
		return c, err
	}
	if err := c.checkCounting(); err != nil {
		return c, err
	}
	c.resolveClients()
	if c.Out == "" {
		c.Out = filepath.Join("obsbench-results", time.Now().Format("20060102-150405"))
	}
	if !resuming {
		if err := CheckOut(c.Out); err != nil {
			return c, err
		}
	}
	if err := c.checkWorkers(); err != nil {
		return c, err
	}
	if c.observers, err = resolveObservers(c.Engine, c.ObserverFile, c.Observers, c.Dose); err != nil {
		return c, err
	}
	c.chooseSplit()
	if err := c.checkSplit(); err != nil {
		return c, err
	}
	c.budgetDuet()
	if c.DSN != "" && len(c.observers) > 1 && !c.AllowChanges && !c.DryRun {
		return c, usagef("--dsn names an external server: obsbench changes its settings for each observer and reverts them after each run; pass --allow-changes to agree, or measure a managed server (no --dsn)")
	}
	return c, nil
}

// resolveWorkload builds the workload with its parameters and its
// dataset at its scale, and sets a fixed-work workload's time defaults.
func (c *Experiment) resolveWorkload() error {
	var err error
	read := workloadspec.ReadFile(os.ReadFile)
	if c.Workers > 0 || c.Method.Twins() || c.Method == "" {
		// What the workload reads, the workers get with the spec (a
		// duet drives each twin from a worker; a method not given may
		// turn out to be a duet).
		c.files = workloadspec.Recorder{}
		read = c.files.Read
	}
	if c.wl, c.scripts, err = workloadspec.Lookup(c.Spec, read); err != nil {
		return err
	}
	if c.wl, err = c.wl.WithParams(c.Params); err != nil {
		return usageError{Err: err}
	}
	if c.Replay.Passes > 0 || c.wl.FixedWork() {
		// Fixed work (a replay of N passes, dss-mix's --blocks): the
		// warm-up would take part of the work, and --duration only caps it.
		if !c.IsChosen("warmup") {
			c.Warmup = 0
		}
		if !c.IsChosen("duration") {
			c.Duration = time.Hour
		}
	}
	if !c.wl.In(c.info.Dialect) {
		speaks := func(i engine.Info) bool { return c.wl.In(i.Dialect) }
		return usagef("--workload %s is written for %s only, not %s", c.wl.Name, strings.Join(engine.NamesWhere(speaks), ", "), c.Engine)
	}
	scale := max(c.wl.DatasetScale, 1)
	if d, err := dataset.Lookup(c.wl.Dataset); err == nil && d.Scale != nil && c.wl.HasParam("scale") {
		scale = c.wl.Value("scale") // a dataset of one size: --scale is the workload's own (pgbench's :scale)
	}
	c.ds, err = c.wl.DatasetAt(scale)
	return err
}

// resolveMethod chooses the method when none was given, and sets a
// duet's own defaults of phases and their length.
func (c *Experiment) resolveMethod() {
	if c.Method == "" {
		method, why := c.chooseMethod(func() (cgroup.Hierarchy, error) { return cgroup.Find(c.out.Cgroups()) })
		c.Method, c.methodWhy = method, why
		c.methodChosen = true
	}
	if c.Method.Counted() && !c.IsChosen("rounds") {
		// Counted rounds, as --count-rounds counts after timed runs.
		c.Rounds = c.Count.Rounds
	}
	if c.Method.Paired() {
		c.pairedDefaults()
	}
}

// pairedDefaults are a duet's or a split's phases, where not given, and
// a duet's load (spec.DefaultDuetLoad). Resuming, the record has them.
func (c *Experiment) pairedDefaults() {
	if c.resuming {
		return
	}
	if !c.IsChosen("rounds") {
		c.Rounds = DefaultDuetPhases
	}
	if !c.IsChosen("duration") && !c.wl.FixedWork() && c.Replay.Passes == 0 {
		c.Duration = DefaultDuetDuration
		if !c.IsChosen("warmup") {
			c.Warmup = DefaultDuetWarmup
		}
	}
	if c.AtDefaultLoad(c.wl.FixedWork()) {
		c.LoadPct, c.loadDefaulted = spec.DefaultDuetLoad, true
	}
}

// resolveClients sets the sessions and driver threads the workload runs
// with, unless given.
func (c *Experiment) resolveClients() {
	if !c.IsChosen("clients") && !c.resuming {
		c.Clients = c.wl.DefaultClients
	}
	if !c.IsChosen("driver-threads") && !c.resuming {
		c.DriverThreads = driver.DefaultProcs(c.Clients)
	}
}

// resolveObservers is the baseline and the named observers (the catalog's
// defaults when none is named), each once; the one observer of a dose
// with its one value (a sweep's values are each checked here, and given
// to each point by sweepPoint).
func resolveObservers(eng, file string, names []string, dose *spec.Dose) ([]observer.Observer, error) {
	cat, err := LoadCatalog(file)
	if err != nil {
		return nil, err
	}
	out, err := cat.Compared(eng, names)
	if err != nil {
		return nil, usageError{Err: err}
	}
	for _, v := range dose.ValuesOf() {
		dosed, err := out[len(out)-1].Dosed(dose.Setting, v)
		if err != nil {
			return nil, usagef("--dose %s: %w", dose, err)
		}
		if !dose.Sweeps() {
			out[len(out)-1] = dosed
		}
	}
	return out, nil
}

// LoadCatalog returns the built-in catalog plus the user's observer file.
func LoadCatalog(file string) (*observer.Catalog, error) {
	cat, err := observer.Builtin(engine.Names()...)
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
// exceeded --max-overhead (*analysis.OverheadError).
func Execute(ctx context.Context, s spec.Spec, out Output) error {
	c, err := ResolveIn(s, out)
	if err != nil {
		return err
	}
	if c.DryRun {
		return c.PrintPlan(ctx, out.Stdout)
	}
	if c.Method.Counted() {
		return runInstructions(ctx, c, out)
	}
	if len(c.Sessions) > 0 || len(c.Loads) > 0 || c.Dose.Sweeps() {
		points, err := c.Sweep(ctx, 1, out)
		return c.GateSweep(points, err)
	}
	sum, err := c.Run(ctx, out)
	return c.Gate(sum, c.PrintStudy(out.Stdout, sum, err))
}

// Output is where a command prints: its report on Stdout, progress and
// notes on Stderr.
type Output struct {
	Stdout, Stderr io.Writer
	// Command is the command line as given, its password removed: the
	// summary records it for people (it is never parsed again).
	Command []string
	// Env is the environment the command runs in.
	process.Env
}

// usageError marks invalid input: nothing was started or changed.
type usageError = spec.InvalidError

var usagef = spec.Invalidf

// Run runs the experiment, writes results.jsonl and summary.json, and
// prints its report. It returns the summary whenever some runs were
// made, also with an error.
func (c Experiment) Run(ctx context.Context, out Output) (*result.Summary, error) {
	c.out = out
	stdout, stderr := out.Stdout, out.Stderr
	logf := report.Notes(stderr)

	hier, err := c.duetHierarchy()
	if err != nil {
		return nil, err
	}
	target, err := c.Open(ctx, engine.Options{DSN: c.DSN, Standby: c.Standby.On(), SyncStandby: c.Standby.Sync(), StandbyDelay: c.StandbyDelay, Log: logf}, "--dsn")
	if err != nil {
		return nil, err
	}
	defer engine.Close(target, logf)
	// A managed twin is a copy of the first server once its dataset is
	// loaded, where the engine can copy one; else it is started and loaded
	// as the first was.
	var twin engine.Server
	copier, copies := target.(engine.Copier)
	copyTwin := c.Method.Twins() && c.TwinDSN == "" && copies
	if c.Method.Twins() && !copyTwin {
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
		return nil, spec.FromEngine(err, "--dsn")
	}
	unused := unusedFlags(c, ecfg.Arms)
	for _, w := range unused {
		logf("warning: %s", w)
	}
	runs, runErr := experiment.Run(ctx, ecfg)
	runErr = spec.FromEngine(runErr, "--dsn")
	if runErr != nil && len(runs) == 0 {
		return nil, runErr
	}
	sum := c.summarize(ctx, analysis.Summarize(head, names, runs), unused, runErr, logf)
	if err := c.writeResults(sum, runs, stdout, logf); err != nil {
		return nil, err
	}
	return &sum, runErr
}

// summarize completes the timed runs' summary: the run's warnings, an
// incomplete experiment said, and the counted part run (or why not).
func (c Experiment) summarize(ctx context.Context, sum result.Summary, warnings []string, runErr error, logf func(string, ...any)) result.Summary {
	sum.Warnings = append(warnings, sum.Warnings...)
	if runErr != nil {
		sum.Warnings = append(sum.Warnings, "experiment incomplete: "+runErr.Error())
	}
	switch {
	case c.counting && ctx.Err() == nil:
		sum.Counted = c.countConditions(ctx, logf)
	case c.countMissing != "":
		sum.Counted = &result.Counted{Missing: c.countMissing}
	}
	return sum
}

// attachLoad gives ecfg what drives the load when this process does not
// alone: a duet's twins (startedTwin: the twin was started, not copied),
// or workers. The function returned stops them, also after an error.
func (c Experiment) attachLoad(ctx context.Context, ecfg *experiment.Config, target, twin engine.Server, startedTwin bool, hier cgroup.Hierarchy, logf func(string, ...any)) (stop func(), err error) {
	stop = func() {}
	if c.Method.Splits() || len(c.splitByDefault) > 0 {
		if ecfg.Split, err = c.splitOf(); err != nil {
			return stop, err
		}
		where := "the one server"
		if c.Method.Twins() {
			where = "the first twin, at its share, in the split's phases"
		}
		logf("split: groups a and b of %d session(s) each on %s, sessions of both on every driver thread", c.Clients/2, where)
	}
	if c.Method.Twins() {
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
func (c Experiment) duetHierarchy() (cgroup.Hierarchy, error) {
	if !c.Method.Twins() {
		return cgroup.Hierarchy{}, nil
	}
	h, err := cgroup.Find(c.out.Cgroups())
	if err != nil {
		return h, usagef("--method duet: %v", err)
	}
	return h, nil
}

// summaryHead is what a summary says of the experiment besides its
// results: the server's version and the environment, read before the runs.
func (c Experiment) summaryHead(ctx context.Context, target engine.Server, command []string) (result.Summary, error) {
	ver, err := target.Version(ctx)
	if err != nil {
		return result.Summary{}, err
	}
	env, err := environment(ctx, target, c, command)
	if err != nil {
		return result.Summary{}, err
	}
	head := result.Summary{
		Engine: c.Engine, Server: ver, Workload: c.wl.Name, Clients: c.Clients, Seed: c.Seed,
		Rounds: c.Rounds, Seconds: c.Duration.Seconds(), Warmup: c.Warmup.Seconds(), AltSeconds: c.Alternation.Duration.Seconds(),
		Environment: env,
	}
	if wp := c.info.WaitProfile; c.Waits > 0 && wp.Source != "" {
		head.WaitProfile = &wp
	}
	return head, nil
}

// prepare checks, before anything changes (the database included), that
// the login may make every change, then loads the dataset and the
// workload's set-up and checks its statements.
func (c Experiment) prepare(ctx context.Context, target engine.Server, logf func(string, ...any)) error {
	if pc, ok := target.(engine.PermissionChecker); ok {
		if _, err := pc.CheckPermissions(ctx, c.observers); err != nil {
			return err
		}
	}
	if err := engine.Prepare(ctx, target, c.info.Dialect, c.wl, c.ds, logf); err != nil {
		return err
	}
	return checkStatements(ctx, target, c.wl)
}

// logMethod says which method a run chose, and why, when none was given.
func (c Experiment) logMethod(logf func(string, ...any)) {
	switch {
	case !c.methodChosen:
	case len(c.splitByDefault) > 0:
		logf("method %s, not duet: %s; %s", c.Method, c.methodWhy, c.splitNote())
	case c.Method.Twins():
		logf("method duet: the observer's server and its twin driven at the same time (the default where twins can run; --method auto for rounds and alternation on one server)")
	default:
		logf("method auto, not duet: %s", c.methodWhy)
	}
	if c.loadDefaulted {
		logf("%s", spec.DefaultLoadNote)
	}
}

// openResults creates the results directory and records the experiment
// in it, or, resuming, reads the runs it finished.
func (c Experiment) openResults(logf func(string, ...any)) (done map[int]result.Run, err error) {
	if err := os.MkdirAll(c.Out, 0o700); err != nil {
		return nil, fmt.Errorf("create --out directory: %w", err)
	}
	if c.resuming {
		return result.Finished(c.Out, logf)
	}
	return nil, writeExperiment(c)
}

// experimentConfig is the experiment c runs on target, the runs in done
// already finished.
func (c Experiment) experimentConfig(target engine.Server, done map[int]result.Run, logf func(string, ...any), stderr io.Writer) experiment.Config {
	return experiment.Config{
		Target: target, Workload: c.wl, Dataset: c.ds, Observers: c.observers,
		Rounds: c.Rounds, Seed: c.Seed, Out: c.Out, Method: c.Method,
		Alternation: experiment.Alternation{Duration: c.Alternation.Duration, MinPhase: c.Alternation.PhaseMin, MaxPhase: c.Alternation.PhaseMax,
			Reps: c.Alternation.Reps, CheckDuration: experiment.DefaultCheckDuration},
		TargetResolution: c.TargetResolution, MaxTime: c.MaxTime, Log: logf,
		Done:          done,
		StopOnFailure: c.OnFailure.Stops(),
		Probes:        experiment.Probes{WaitInterval: c.Waits, KernelWaits: c.KernelWaits, Counters: c.Counters, MeasureCost: c.MeasureCollectors},
		// A mix of few, long statements (dss-mix): each is kept, with its
		// server CPU, for the comparison query by query (analysis).
		Driver: driver.Config{Clients: c.Clients, Warmup: c.Warmup, Duration: c.Duration, Procs: c.DriverThreads, Executions: c.wl.LongStatements,
			Rate: c.Rate, RateSeed: int64(c.Seed), LatencyLimit: c.LatencyLimit},
		LoadPct:  c.LoadPct,
		Then:     c.countedTime(),
		Progress: report.Progress(stderr),
	}
}

// countedTime is the dry run's estimate of the counted part that follows
// the timed runs (0 when nothing is counted after them).
func (c Experiment) countedTime() time.Duration {
	if !c.counting || c.Method.Counted() {
		return 0
	}
	return counting.PrintPlan(io.Discard, c.Count, 1+c.observerCount(), c.Count.Rounds, c.wl.LongStatements, "")
}

// writeResults writes summary.json and the report in c's format, and
// says where the results are.
func (c Experiment) writeResults(sum result.Summary, runs []result.Run, stdout io.Writer, logf func(string, ...any)) error {
	if err := result.WriteSummary(filepath.Join(c.Out, "summary.json"), sum); err != nil {
		return err
	}
	if err := report.WriteDir(c.Out, c.Format, c.Wide, sum, runs, stdout); err != nil {
		return err
	}
	if c.Format == spec.FormatText {
		fmt.Fprintf(stdout, "\nresults: %s\n", c.Out)
	} else {
		logf("results: %s", c.Out)
	}
	return nil
}

// ThreadsFor is the driver's thread count for a run of clients sessions:
// --driver-threads if given, else the default for that many.
func (c Experiment) ThreadsFor(clients int) int {
	if c.IsChosen("driver-threads") || c.resuming {
		return c.DriverThreads
	}
	return driver.DefaultProcs(clients)
}

// CheckOut refuses an --out directory that already holds an experiment,
// a sweep or a study, before anything starts.
func CheckOut(dir string) error {
	for _, f := range []string{"results.jsonl", experimentFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return usagef("--out %s already holds an experiment's results; choose another directory, or continue it with --resume %s", dir, dir)
		}
	}
	for _, f := range []string{report.SweepFile, ReliabilityFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return usagef("--out %s already holds a sweep's or a study's results; choose another directory", dir)
		}
	}
	return nil
}

// environment records where and how the experiment runs, with the
// server's settings as found, before any observer.
func environment(ctx context.Context, t engine.Server, c Experiment, command []string) (*result.Environment, error) {
	settings, err := t.ChangedSettings(ctx)
	if err != nil {
		return nil, err
	}
	return &result.Environment{
		Command:   command,
		Obsbench:  cmp.Or(c.out.Version, "dev"),
		Machine:   collect.ThisMachine(),
		Settings:  settings,
		Standby:   c.Standby.Describe(c.StandbyDelay),
		Scripts:   c.scripts,
		QueryMode: workloadspec.QueryModeName(c.Spec),
	}, nil
}

// OpenServer opens the server of engine name: the external one of o.DSN,
// which option flag gave, or a managed one.
func OpenServer(ctx context.Context, name string, o engine.Options, flag string) (engine.Server, error) {
	e, err := engine.Lookup(name)
	if err != nil {
		return nil, spec.FromEngine(err, flag)
	}
	s, err := e.Open(ctx, o)
	return s, spec.FromEngine(err, flag)
}

// Open is OpenServer of c's engine, journaling in c's state directory
// and starting a managed server in c's environment.
func (c Experiment) Open(ctx context.Context, o engine.Options, flag string) (engine.Server, error) {
	o.StateDir, o.Getenv = c.out.StateDir, c.out.Getenv
	return OpenServer(ctx, c.Engine, o, flag)
}

// ReliabilityFile is the audit study's reliability check, in its results
// directory: a directory holding one is a study's (CheckOut).
const ReliabilityFile = "reliability.json"
