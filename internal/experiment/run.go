package experiment

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// faultWatch notes the server's complaints before a run; failed says, after
// it, whether there were new ones.
func faultWatch(t engine.Target) (failed func() string) {
	fr, ok := t.(engine.FaultReporter)
	if !ok {
		return func() string { return "" }
	}
	n0, _ := fr.ServerFaults()
	return func() string {
		n, last := fr.ServerFaults()
		if n == n0 {
			return ""
		}
		return fmt.Sprintf("log lines were lost: the server failed %d time(s) to write its log (%s)", n-n0, last)
	}
}

// countEvents compares what events recorded with the statements executed,
// of which o records a sample where its events say so.
func countEvents(ctx context.Context, events engine.EventCounter, executed int64, o observer.Observer) *result.Events {
	var n int64
	var files []result.FileCount
	var err error
	if fc, ok := events.(engine.FileCounter); ok {
		files, err = fc.CountFiles(ctx)
		n = result.Records(files)
	}
	if files == nil && err == nil {
		n, err = events.Count(ctx)
	}
	ev := &result.Events{Recorded: n, Executed: executed, Files: files}
	if o.Events != nil {
		ev.SampleRate = o.Events.Sampled
	}
	if err != nil {
		ev.Error = err.Error()
	}
	if lc, ok := events.(engine.LostCounter); ok {
		lost, has, err := lc.EngineLost(ctx)
		switch {
		case err != nil && ev.Error == "":
			ev.Error = "engine's lost-event counter: " + err.Error()
		case has:
			ev.EngineLost = &lost
		}
	}
	if bc, ok := events.(engine.BufferLostCounter); ok {
		lost, has, err := bc.EngineLostBuffers(ctx)
		switch {
		case err != nil && ev.Error == "":
			ev.Error = "engine's dropped-buffer counter: " + err.Error()
		case has:
			ev.EngineLostBuffers = &lost
		}
	}
	if bc, ok := events.(engine.BlockedCounter); ok {
		n, has, err := bc.EngineBlocked(ctx)
		switch {
		case err != nil && ev.Error == "":
			ev.Error = "engine's blocked-time counter: " + err.Error()
		case has:
			ev.EngineBlocked = &n
		}
	}
	if vc, ok := events.(engine.VolumeCounter); ok {
		ev.Volume = vc.Volume()
	}
	if en, ok := events.(engine.EventNoter); ok {
		ev.Notes = en.EventNotes()
	}
	return ev
}

// startEvents starts counting o's events, unless its counter cannot see
// the workload's statements: then the count is an error that says why.
func startEvents(ctx context.Context, cfg Config, a engine.Applied, o observer.Observer) (engine.EventCounter, error) {
	if o.Events != nil && o.Events.PreparedOnly && cfg.Workload.TextStatements {
		return uncountable("not counted: this observer's count sees only executions of prepared statements, and the workload sends its statements as text (--query-mode simple; --query-mode prepared is counted)"), nil
	}
	return a.StartEvents(ctx, cfg.Workload.Tag)
}

// uncountable is a count that cannot be made, with the reason.
type uncountable string

func (u uncountable) Count(context.Context) (int64, error) { return 0, errors.New(string(u)) }

// Load runs a run's workload sessions. By default they run in this
// process (driver.Run over the target's Dial); a Load spreads them over
// worker processes that reach the same server.
type Load interface {
	Run(ctx context.Context, cfg driver.Config) (driver.Result, error)
}

// LocalLoad is a Load whose sessions run in other processes on this
// machine: their CPU is the driver's, not other processes' noise.
type LocalLoad interface {
	Load
	PIDs() []int
}

// drive runs one run's sessions with dcfg.
func (cfg Config) drive(ctx context.Context, dcfg driver.Config) (driver.Result, error) {
	if cfg.Load != nil {
		return cfg.Load.Run(ctx, dcfg)
	}
	return driver.Run(ctx, dcfg, cfg.Target.Dial, cfg.Workload.New())
}

// cpuWindow samples the CPU of the server and the driver over a window.
func (cfg Config) cpuWindow() *collect.Window {
	w := &collect.Window{Root: cfg.Target.ServerPID(), Also: companions(cfg.Target)}
	if l, ok := cfg.Load.(LocalLoad); ok {
		w.Drivers = l.PIDs()
	}
	return w
}

// Config is one experiment.
type Config struct {
	Target    engine.Target
	Workload  workload.Meta
	Dataset   dataset.Dataset
	Observers []observer.Observer // the conditions; baseline among them
	// Method chooses how each observer is compared with the baseline.
	Method Method
	// Arms, if set, are the arms Arms made of this config, which the
	// caller planned with already; else Run makes them.
	Arms []Arm
	// Rounds is how often each round-based condition runs.
	Rounds int
	// Alternation configures the alternation runs.
	Alternation Alternation
	// TargetResolution, when > 0, is the overhead in percent each
	// alternation comparison should be able to detect (80% power): the A/A
	// arm runs first and the observers' runs are made long enough, within
	// MaxTime for the whole experiment.
	TargetResolution float64
	MaxTime          time.Duration
	// Log, if set, receives notes for the user (the resolution plan).
	Log    func(format string, args ...any)
	Seed   uint64
	Driver driver.Config
	// LoadPct, when > 0, drives the runs at this percentage of the
	// capacity a closed-loop probe of the baseline measures first
	// (probeRate): Driver.Rate is set from it.
	LoadPct float64
	// Then is about how long what comes after the timed steps takes (the
	// counted part): the progress lines' time left includes it, so that
	// their last says what is still to come, not "0s".
	Then time.Duration
	// Load runs the sessions elsewhere than in this process (workers);
	// nil: here.
	Load Load
	Out  string // directory for results.jsonl
	// Probes are the collectors besides CPU.
	Probes Probes
	// StopOnFailure ends the experiment after a run that failed (the
	// server dropped the connection, restarted, or a statement failed);
	// by default the failed run is recorded and the experiment goes on.
	StopOnFailure bool
	// Done holds, when resuming, the runs already finished, by Seq: they
	// are not run again. The experiment appends to the existing
	// results.jsonl instead of creating it.
	Done map[int]result.Run
	// Progress, if set, is called before and after each run.
	Progress func(Progress)
	// Twins is the second server of --method duet; nil otherwise.
	Twins *Twins
	// Split is the groups of sessions of --method split; nil otherwise.
	Split *Split

	// ready, if set, is called once the run's observer is applied, right
	// before its load starts (a duet's twins meet there); onWindow, if
	// set, as its measured window opens and closes.
	ready    func(ctx context.Context) error
	onWindow func(open bool)
}

// Progress reports where the experiment is.
type Progress struct {
	Seq, Total    int
	Round, Rounds int
	Condition     string
	Done          bool        // false: the run starts; true: it ended
	Run           *result.Run // when Done
	Elapsed       time.Duration
	Remaining     time.Duration // estimate
	// Executed counts the statements of the run so far, live: a display
	// can read it while the run goes on.
	Executed *atomic.Int64
}

// SettingsChangedError means a revert left the server's settings different
// from before the observer was applied.
type SettingsChangedError struct {
	Observer string
	Diffs    []string
}

func (e *SettingsChangedError) Error() string {
	return fmt.Sprintf("after reverting %s the server's settings differ from before: %s", e.Observer, strings.Join(e.Diffs, "; "))
}

// Run executes the experiment and returns its runs. A run whose workload
// fails is recorded with its error and the experiment goes on; a failure to
// apply, revert or verify stops it, since later runs could not be trusted.
func Run(ctx context.Context, cfg Config) ([]result.Run, error) {
	if err := checkTargets(ctx, cfg); err != nil {
		return nil, err
	}
	var err error
	arms := cfg.Arms
	if arms == nil {
		if arms, err = Arms(ctx, cfg); err != nil {
			return nil, err
		}
	}
	if cfg, err = probeRate(ctx, cfg, arms); err != nil {
		return nil, err
	}
	w, err := openRuns(cfg)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	pl := newPlanned(cfg, arms)
	var runs []result.Run
	for i := 0; i < len(pl.steps) || (i == len(pl.steps) && pl.grow(cfg, runs)); i++ {
		st := pl.steps[i]
		if err := ctx.Err(); err != nil {
			return runs, err
		}
		a := arms[st.Arm]
		if done, ok := cfg.Done[i+1]; ok {
			if done.Condition != a.Name {
				return runs, fmt.Errorf("resume: run %d in results.jsonl is %s, but the plan has %s there: the experiment's plan changed (another server state?)", i+1, done.Condition, a.Name)
			}
			runs = append(runs, done)
			if i == 0 && pl.pilot && done.Error == "" {
				plan := planResolution(cfg, arms, done, time.Duration(done.Driver.Seconds*float64(time.Second)))
				cfg.Alternation.Duration = plan.Duration
			}
			continue
		}
		r, p, err := pl.run(ctx, cfg, i)
		if err != nil && r.Started.IsZero() {
			return runs, err
		}
		if werr := w.Append(r); werr != nil {
			return runs, werr
		}
		runs = append(runs, r)
		if err != nil {
			return runs, err
		}
		if r.Error != "" && cfg.StopOnFailure {
			return runs, fmt.Errorf("run %d (%s) failed: %s; stopping, as --on-failure stop asks (the observer was reverted)", r.Seq, r.Condition, r.Error)
		}
		if i == 0 && pl.pilot && r.Error == "" {
			plan := planResolution(cfg, arms, r, time.Since(pl.start))
			cfg.Alternation.Duration = plan.Duration
			if cfg.Log != nil {
				cfg.Log("%s", plan.Message)
			}
		}
		pl.finished(cfg, p, &r, i)
	}
	return runs, nil
}

// checkTargets checks, before anything changes, that the server (and a
// duet's twin) can take every observer and holds the dataset.
func checkTargets(ctx context.Context, cfg Config) error {
	targets := []engine.Target{cfg.Target}
	if cfg.Method.Twins() {
		if cfg.Twins == nil {
			return errors.New("--method duet needs a twin server")
		}
		targets = append(targets, cfg.Twins.Target)
	}
	for _, t := range targets {
		for _, o := range cfg.Observers {
			if err := t.Check(ctx, o); err != nil {
				return err
			}
		}
		if err := t.Verify(ctx, cfg.Dataset); err != nil {
			return err
		}
	}
	return nil
}

// openRuns opens results.jsonl: a new one, or, resuming, the one whose
// finished runs are cfg.Done, to append to.
func openRuns(cfg Config) (*result.Writer, error) {
	path := filepath.Join(cfg.Out, "results.jsonl")
	if cfg.Done != nil {
		return result.Open(path)
	}
	return result.Create(path)
}

// planned is an experiment's steps in the order they run, with the arms
// they run and when the first began.
type planned struct {
	arms   []Arm
	aa     int // the A/A arm's index in arms, -1 for none
	steps  []Step
	rounds int
	// pilot: the A/A arm's first run sizes the alternation runs
	// (Config.TargetResolution).
	pilot bool
	start time.Time
}

func newPlanned(cfg Config, arms []Arm) *planned {
	aa := slices.IndexFunc(arms, func(a Arm) bool { return a.Name == AAName })
	pl := &planned{arms: arms, aa: aa, pilot: cfg.TargetResolution > 0 && aa >= 0 && !cfg.Method.Paired()}
	pl.steps = planArms(arms, aa, pl.pilot, cfg.Seed)
	for _, st := range pl.steps {
		pl.rounds = max(pl.rounds, st.Round)
	}
	pl.start = time.Now()
	return pl
}

// grow adds a duet's phases when its planned ones are done and do not
// resolve --target-resolution yet, runs being what ran.
func (pl *planned) grow(cfg Config, runs []result.Run) bool {
	more, msg := duetGrowth(cfg, pl.arms, runs, pl.rounds, time.Since(pl.start))
	if msg != "" && cfg.Log != nil {
		cfg.Log("%s", msg)
	}
	if more == 0 {
		return false
	}
	for j := range pl.arms {
		pl.arms[j].Reps += more
	}
	pl.rounds += more
	pl.steps = planArms(pl.arms, pl.aa, false, cfg.Seed)
	return true
}

// run runs step i by its arm's method, saying so to cfg.Progress first;
// p is the step's progress, to be finished.
func (pl *planned) run(ctx context.Context, cfg Config, i int) (r result.Run, p Progress, err error) {
	st := pl.steps[i]
	a := pl.arms[st.Arm]
	p = Progress{Seq: i + 1, Total: len(pl.steps), Round: st.Round, Rounds: pl.rounds, Condition: a.Name, Elapsed: time.Since(pl.start),
		Executed: new(atomic.Int64)}
	rc := cfg
	rc.Driver.Executed = p.Executed
	rc.Driver.RateSeed = roundRateSeed(cfg.Driver.RateSeed, st.Round)
	if i > 0 {
		p.Remaining = remaining(p.Elapsed, cfg, pl.arms, pl.steps, i)
	}
	if cfg.Progress != nil {
		cfg.Progress(p)
	}
	r, err = runArm(ctx, rc, a, st.Round, uint64(i))
	r.Seq, r.Round, r.Condition, r.Method, r.Measures = i+1, st.Round, a.Name, a.Method, a.Measures
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		// Interrupted mid-step (a restart whose pg_ctl was killed):
		// the interruption is the cause.
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return r, p, err
}

// roundRateSeed is the arrival schedule's seed of a round (a duet's or
// split's phase): the runs of one round, compared with each other, are
// offered the same arrivals, and each round a schedule of its own, so
// that the rate held and the latency read over many rounds are over
// many schedules, not one replayed.
func roundRateSeed(seed int64, round int) int64 {
	return int64(rand.New(rand.NewPCG(uint64(seed), uint64(round))).Uint64() >> 1)
}

// runArm runs arm a once, by its method: round is a duet's or a split's
// phase, seed an alternation's phase lengths.
func runArm(ctx context.Context, cfg Config, a Arm, round int, seed uint64) (result.Run, error) {
	switch a.Method {
	case MethodAlternation:
		return runAlternation(ctx, cfg, a, seed)
	case MethodDuet:
		return runDuet(ctx, cfg, a, round)
	case MethodSplit:
		return runSplit(ctx, cfg, a, round)
	}
	return runOne(ctx, cfg, a.Observer)
}

// finished tells cfg.Progress that step i ended with run r.
func (pl *planned) finished(cfg Config, p Progress, r *result.Run, i int) {
	if cfg.Progress == nil {
		return
	}
	p.Done, p.Run, p.Elapsed = true, r, time.Since(pl.start)
	p.Remaining = remaining(p.Elapsed, cfg, pl.arms, pl.steps, i+1)
	cfg.Progress(p)
}

// remaining estimates the time the steps from done on will take, and
// what comes after them (cfg.Then), from the time the first done steps
// took: each step weighs what its method
// runs (an alternation run its --alt-duration, a round or a duet's phase
// its warm-up and duration), so that an estimate made after short steps
// does not jump when long ones come.
func remaining(elapsed time.Duration, cfg Config, arms []Arm, steps []Step, done int) time.Duration {
	var past, left time.Duration
	for i, st := range steps {
		n := cfg.nominal(arms[st.Arm])
		if i < done {
			past += n
		} else {
			left += n
		}
	}
	if past <= 0 {
		return cfg.Then
	}
	return time.Duration(float64(elapsed)*float64(left)/float64(past)) + cfg.Then
}

// nominal is what one step of arm a runs: its measured time and warm-up.
func (cfg Config) nominal(a Arm) time.Duration {
	if a.Method == MethodAlternation {
		return cfg.Alternation.Duration + cfg.Driver.Warmup
	}
	return cfg.Driver.Duration + cfg.Driver.Warmup
}

// RunOnce measures one run of observer o outside an experiment's plan (a
// long reliability run of an audit trail): applied, run with cfg's driver
// and probes, events counted, reverted.
func RunOnce(ctx context.Context, cfg Config, o observer.Observer) (result.Run, error) {
	return runOne(ctx, cfg, o)
}

// runOne applies o, runs the workload, counts events, reverts and checks
// the revert. It returns a Run with a zero Started time when nothing was
// measured, and a non-nil error when the experiment must stop.
func runOne(ctx context.Context, cfg Config, o observer.Observer) (r result.Run, err error) {
	r.Condition = o.Name
	applied, revert, err := applyChecked(ctx, cfg, o, o.Name, &r)
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, revert()) }()

	if err := cfg.Target.Verify(ctx, cfg.Dataset); err != nil {
		return r, err
	}
	events, err := startEvents(ctx, cfg, applied, o)
	if err != nil {
		return r, fmt.Errorf("count events of %s: %w", o.Name, err)
	}
	probes, err := newProbeWindow(ctx, cfg.Probes, cfg.Target)
	if err != nil {
		return r, err
	}
	defer probes.release(ctx)
	faults := faultWatch(cfg.Target)
	if cfg.ready != nil {
		if err := cfg.ready(ctx); err != nil {
			return r, err
		}
	}
	r.Started = time.Now()
	cpu := cfg.cpuWindow()
	stream := newStreamSampler(cfg.Target, o)
	dcfg := cfg.Driver
	dcfg.Window = func(open bool) {
		cpu.Toggle(open)
		stream.toggle(open)
		if cfg.onWindow != nil {
			cfg.onWindow(open)
		}
		if open {
			probes.open(ctx)
		} else {
			probes.close(ctx)
		}
	}
	res, derr := cfg.drive(ctx, dcfg)
	cpu.Close()
	stream.close()
	probes.close(ctx)
	r.Usage = cpu.Usage
	r.StreamPerSecond = stream.perSecond()
	probes.record(&r, false)
	if ctx.Err() != nil {
		r.Error = "interrupted"
		return r, ctx.Err()
	}
	r.Driver = res
	if derr != nil {
		r.Error = derr.Error()
		return r, nil
	}
	if cpu.Err != nil {
		r.Error = "cpu: " + cpu.Err.Error()
	}
	if events != nil {
		r.Events = countEvents(ctx, events, res.Executed, o)
	}
	if f := faults(); f != "" && r.Error == "" {
		r.Error = f
	}
	return r, nil
}

// applyRestarts says whether t's Apply(o) restarts the server itself; when
// it cannot tell, no.
func applyRestarts(ctx context.Context, t engine.Target, o observer.Observer) bool {
	ar, ok := t.(engine.ApplyRestarter)
	if !ok {
		return false
	}
	restarts, err := ar.ApplyRestarts(ctx, o)
	return err == nil && restarts
}

// applyChecked brings the server to its starting state (a managed server
// restarts, unless applying o restarts it), records its settings, and
// applies o. The returned revert undoes
// o, even after ctx was cancelled, and checks that every setting is back as
// it was; it records the time both took in r.
func applyChecked(ctx context.Context, cfg Config, o observer.Observer, name string, r *result.Run) (engine.Applied, func() error, error) {
	if rs, ok := cfg.Target.(engine.Resetter); ok && !applyRestarts(ctx, cfg.Target, o) {
		if err := rs.Reset(ctx); err != nil {
			return nil, nil, fmt.Errorf("reset server before %s: %w", name, err)
		}
	}
	before, err := cfg.Target.Settings(ctx)
	if err != nil {
		return nil, nil, err
	}
	t0 := time.Now()
	applied, err := cfg.Target.Apply(ctx, o)
	if err != nil {
		return nil, nil, fmt.Errorf("apply %s: %w", name, err)
	}
	r.ApplySeconds = time.Since(t0).Seconds()
	revert := func() error {
		// A fresh context: ctx may be what was cancelled.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		t0 := time.Now()
		err := applied.Revert(rctx)
		r.RevertSeconds = time.Since(t0).Seconds()
		if err == nil {
			err = checkSettings(rctx, cfg.Target, name, before)
		}
		if err != nil {
			return fmt.Errorf("revert %s: %w", name, err)
		}
		return nil
	}
	return applied, revert, nil
}

func checkSettings(ctx context.Context, t engine.Target, name string, before map[string]string) error {
	after, err := t.Settings(ctx)
	if err != nil {
		return err
	}
	var diffs []string
	for k, v := range before {
		if a, ok := after[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s=%q is gone", k, v))
		} else if a != v {
			diffs = append(diffs, fmt.Sprintf("%s: %q -> %q", k, v, a))
		}
	}
	for k, a := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s=%q is new", k, a))
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return &SettingsChangedError{Observer: name, Diffs: diffs}
	}
	return nil
}

func companions(t engine.Target) []int {
	if c, ok := t.(engine.Companioned); ok {
		return c.CompanionPIDs()
	}
	return nil
}
