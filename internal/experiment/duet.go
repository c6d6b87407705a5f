package experiment

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// MethodDuet runs two identical servers (twins) at the same time, the
// observer in force in one of them, and compares their throughput phase
// by phase: whatever the machine does to one twin it does to the other
// in the same seconds, so its drift cancels in the ratio (duet
// benchmarking, Bulej et al., ICPE 2020). The twins swap roles in the
// order ABBA, so that a difference between them cancels too.
const MethodDuet = result.MethodDuet

// Twins are the second server of a duet and how the two are isolated;
// the experiment's Target and Load are the first twin's.
type Twins struct {
	Target engine.Target
	Load   Load // nil: sessions in this process
	// Groups hold each twin's server (first, second) at an equal CPU
	// share, ShareCPUs each; nil: not isolated.
	Groups    [2]Group
	ShareCPUs float64
	// LoadGroups hold each twin's load apart from its server, at a share
	// that its load does not reach: the quota is the server's alone, so
	// that the overhead is the server's, X/(S+X), and not diluted by the
	// driver's CPU to X/(S+D+X). Nil (sessions in this process, or not
	// isolated): the load is not placed.
	LoadGroups [2]Group
}

// Group is a CPU share that processes can be put in (a cgroup).
type Group interface {
	// Add moves processes, and those descended from them, into the group.
	Add(pids ...int) error
	// Usage is the CPU its processes used so far, in seconds.
	Usage() (float64, error)
	// Throttled is how long its processes were held back so far, in
	// seconds.
	Throttled() (float64, error)
}

// TwinNames name the twins in results: the experiment's Target is "a".
var TwinNames = [2]string{"a", "b"}

// DuetOn is the twin the observer is in force in at a duet arm's round
// (from 1): A, B, B, A, then again, or B, A, A, B when flipped. Over every
// four rounds each twin has it twice, and a difference between the twins
// that drifts linearly cancels too.
func DuetOn(round int, flipped bool) int {
	on := 0
	switch (round - 1) % 4 {
	case 1, 2:
		on = 1
	}
	if flipped {
		on = 1 - on
	}
	return on
}

// DuetFlipped draws whether an arm's order starts in twin B, from the
// seed and the arm's name. Arms share their rounds, so with one order for
// all, the observer of the phase before would mostly have been in the
// same twin as the current arm's: whatever it leaves behind in its twin
// (a log file being written back, a cold cache after its restart) would
// add to every arm's cost, and to the A/A arm's. Drawn per arm, it falls
// on either twin as often, and adds to the noise instead.
func DuetFlipped(seed uint64, arm string) bool {
	h := fnv.New64a()
	h.Write([]byte(arm))
	return rand.New(rand.NewPCG(seed, h.Sum64())).IntN(2) == 1
}

// duetArms are the arms of a duet experiment: the A/A arm (nothing
// applied in either twin: how far two identical twins fall apart), each
// observer whole, and with Probes.MeasureCost the wait sampler (sampling
// one twin and not the other), each run in cfg.Rounds phases.
func duetArms(cfg Config) []Arm {
	var base observer.Observer
	arms := []Arm{{Name: AAName, Method: MethodDuet, Reps: cfg.Rounds}}
	for _, o := range cfg.Observers {
		if o.Name == observer.Baseline {
			base = o
			continue
		}
		arms = append(arms, Arm{Name: o.Name, Observer: o, Method: MethodDuet, Reps: cfg.Rounds, Measures: result.MeasuresWhole})
	}
	arms[0].Observer = base
	if cfg.Probes.MeasureCost && cfg.Probes.WaitInterval > 0 {
		arms = append(arms, Arm{Name: CollectorArm, Observer: base, Method: MethodDuet, Reps: cfg.Rounds, Measures: result.MeasuresWhole})
	}
	for i := range arms {
		arms[i].Flipped = DuetFlipped(cfg.Seed, arms[i].Name)
	}
	return arms
}

// runDuet runs one phase of a duet arm: both twins reset, the arm's
// observer applied in the twin whose turn it is (none in the A/A arm),
// each twin placed in its CPU share, then both driven at once. The run
// returned is the observer's twin's, with the other twin's in Duet.
func runDuet(ctx context.Context, cfg Config, a Arm, round int) (result.Run, error) {
	on := DuetOn(round, a.Flipped)
	base := observer.Observer{Name: observer.Baseline}
	if i := slices.IndexFunc(cfg.Observers, func(o observer.Observer) bool { return o.Name == observer.Baseline }); i >= 0 {
		base = cfg.Observers[i]
	}
	m := newMeeting()
	var (
		runs  [2]result.Run
		errs  [2]error
		share [2]groupWindow // the servers'
		load  [2]groupWindow // the loads', where apart
		wg    sync.WaitGroup
	)
	for i := range 2 {
		c := cfg
		c.Twins = nil
		if i == 1 {
			c.Target, c.Load = cfg.Twins.Target, cfg.Twins.Load
		}
		o := base
		switch {
		case a.Name == CollectorArm && i != on:
			c.Probes.WaitInterval = 0 // the sampler's twin is the observer's
		case a.Name == CollectorArm, a.Name == AAName:
		case i == on:
			o = a.Observer
		}
		group, loadGroup := cfg.Twins.Groups[i], cfg.Twins.LoadGroups[i]
		c.ready = func(ctx context.Context) error {
			if err := place(c, group, loadGroup); err != nil {
				return fmt.Errorf("twin %s: %w", TwinNames[i], err)
			}
			return m.arrive(ctx, i)
		}
		c.onWindow = func(open bool) {
			share[i].toggle(group, open)
			load[i].toggle(loadGroup, open)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer m.leave(i)
			runs[i], errs[i] = runOne(ctx, c, o)
		}()
	}
	wg.Wait()
	r, off := runs[on], runs[1-on]
	r.Duet = duetRecord(cfg, runs, on, share, load)
	var err error
	for _, i := range []int{on, 1 - on} {
		if errs[i] != nil {
			err = errors.Join(err, fmt.Errorf("twin %s: %w", TwinNames[i], errs[i]))
		}
	}
	if r.Started.IsZero() {
		r.Started = off.Started
	}
	// The other twin is part of the experiment, not noise: what the
	// sampler counted as other processes' CPU holds it.
	r.Usage = withoutTwin(r.Usage, off.Usage)
	r.Duet.OffUsage = withoutTwin(off.Usage, runs[on].Usage)
	if r.Error == "" && off.Error != "" {
		r.Error = fmt.Sprintf("twin %s (without the observer): %s", TwinNames[1-on], off.Error)
	}
	r.ApplySeconds, r.RevertSeconds = max(r.ApplySeconds, off.ApplySeconds), max(r.RevertSeconds, off.RevertSeconds)
	return r, err
}

// duetRecord is what a phase's twins did beside each other: the other
// twin's driver, each twin's CPU, held time and server CPU per statement
// from its groups (on is the observer's twin).
func duetRecord(cfg Config, runs [2]result.Run, on int, share, load [2]groupWindow) *result.Duet {
	r, off := runs[on], runs[1-on]
	d := &result.Duet{
		On: TwinNames[on], Off: off.Driver, OffUsage: off.Usage, ShareCPUs: cfg.Twins.ShareCPUs,
		OnCPUs: share[on].cpus(r), OffCPUs: share[1-on].cpus(off), OnThrottledS: share[on].held, OffThrottledS: share[1-on].held,
		OnServerUS: share[on].perStmt(r.Driver), OffServerUS: share[1-on].perStmt(off.Driver),
	}
	if len(cfg.serverProcesses()) == 0 {
		// External twins: no quota holds a server that is not on this
		// machine, and its group measured nothing.
		d.ShareCPUs, d.OnCPUs, d.OffCPUs, d.OnThrottledS, d.OffThrottledS = 0, 0, 0, 0, 0
	}
	if cfg.Twins.LoadGroups[0] != nil {
		d.LoadApart = true
		d.OnLoadCPUs, d.OffLoadCPUs = load[on].rate(), load[1-on].rate()
		d.LoadThrottledS = load[on].held + load[1-on].held
	}
	return d
}

// place puts a twin's server in its group and its load in the load's;
// a load with no group of its own goes with its server, held to the
// server's share rather than left to take the other twin's CPU.
func place(c Config, server, load Group) error {
	if server == nil {
		return nil
	}
	if load == nil {
		return server.Add(append(c.serverProcesses(), c.loadProcesses()...)...)
	}
	return errors.Join(server.Add(c.serverProcesses()...), load.Add(c.loadProcesses()...))
}

// serverProcesses are the processes of a run's server on this machine,
// with its companions.
func (cfg Config) serverProcesses() []int {
	var pids []int
	if pid := cfg.Target.ServerPID(); pid > 0 {
		pids = append(pids, pid)
	}
	return append(pids, companions(cfg.Target)...)
}

// loadProcesses are the processes of a run's load on this machine (its
// worker), none when the sessions run in this process.
func (cfg Config) loadProcesses() []int {
	if l, ok := cfg.Load.(LocalLoad); ok {
		return l.PIDs()
	}
	return nil
}

// withoutTwin takes the twin's server and driver CPU out of what u counts
// as other processes' (its Noise and each second's Other).
func withoutTwin(u, twin result.Usage) result.Usage {
	u.PerSecond = slices.Clone(u.PerSecond)
	for i := range u.PerSecond {
		if i < len(twin.PerSecond) {
			u.PerSecond[i].Other = max(0, u.PerSecond[i].Other-twin.PerSecond[i].Server-twin.PerSecond[i].Driver)
		}
	}
	twinPct := twin.Driver.Pct
	if twin.Server != nil {
		twinPct += twin.Server.Pct
	}
	u.Noise.OtherPct = max(0, u.Noise.OtherPct-twinPct)
	return u
}

// groupWindow reads a twin's group over the measured window: the CPU its
// processes used, and how long the quota held them back.
type groupWindow struct {
	used, held float64 // seconds
	opened     time.Time
	wall       float64 // seconds
	err        error
}

func (w *groupWindow) toggle(g Group, open bool) {
	if g == nil {
		return
	}
	used, err1 := g.Usage()
	held, err2 := g.Throttled()
	w.err = errors.Join(w.err, err1, err2)
	if open {
		w.used, w.held, w.opened = -used, -held, time.Now()
		return
	}
	w.used, w.held, w.wall = w.used+used, w.held+held, time.Since(w.opened).Seconds()
}

// perStmt is the group's CPU per statement of the window, in µs: its
// CPU rate over the group's window against the statements' over the
// driver's (the two windows open and close at the driver's word, but the
// group is read a moment after, later when the machine is busy); 0 when
// the group was not read.
func (w *groupWindow) perStmt(d result.DriverResult) float64 {
	if d.Throughput <= 0 {
		return 0
	}
	return 1e6 * w.rate() / d.Throughput
}

// rate is the group's CPU over its window, in CPUs: 0 when it was not
// read.
func (w *groupWindow) rate() float64 {
	if w.wall <= 0 || w.err != nil {
		return 0
	}
	return w.used / w.wall
}

// cpus is the CPU a twin used over its window, in CPUs: its group's where
// it had one (its server, and its load unless that has a group of its
// own), else its server's and driver's as the run measured them.
func (w *groupWindow) cpus(r result.Run) float64 {
	if w.wall > 0 && w.err == nil {
		return w.rate()
	}
	if r.Driver.Seconds <= 0 {
		return 0
	}
	s := r.Usage.Driver.Seconds
	if r.Usage.Server != nil {
		s += r.Usage.Server.Seconds
	}
	return s / r.Driver.Seconds
}

// meeting lets the two twins of a phase start their load together: each
// arrives once it is applied and placed, and waits for the other; a twin
// that failed before arriving leaves, and the other then stops too.
type meeting struct {
	arrived, left [2]chan struct{}
	once          [2]sync.Once
}

func newMeeting() *meeting {
	m := &meeting{}
	for i := range 2 {
		m.arrived[i], m.left[i] = make(chan struct{}), make(chan struct{})
	}
	return m
}

// arrive marks twin i ready and waits for the other.
func (m *meeting) arrive(ctx context.Context, i int) error {
	close(m.arrived[i])
	select {
	case <-m.arrived[1-i]:
		return nil
	case <-m.left[1-i]:
		select {
		case <-m.arrived[1-i]: // it arrived, then ended
			return nil
		default:
		}
		return fmt.Errorf("twin %s failed before the phase started", TwinNames[1-i])
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave marks twin i's run as over.
func (m *meeting) leave(i int) { m.once[i].Do(func() { close(m.left[i]) }) }
