package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// MethodSplit drives one server with two equal groups of sessions at the
// same time, the observer's per-session part set in the sessions of one
// group and not the other, and compares the groups' throughput phase by
// phase: the machine, the server and what the observer shares (its
// preloaded library, its log's collector) are the same for both, so only
// the per-session cost is in their ratio. The groups take the observer in
// the order A, B, B, A (DuetOn), as a duet's twins do.
const MethodSplit = result.MethodSplit

// GroupNames name a split's groups of sessions in results.
var GroupNames = TwinNames

// Split is what --method split needs beside its one server: the engine's
// division of an observer, and the statements that set its session part.
// The groups are the run's sessions taken in turn (driver.Config.Groups),
// driven by one driver: each event loop carries sessions of both groups,
// so that what delays a driver thread delays both alike.
type Split struct {
	// ServerCPU reads each group's backends' CPU where the sessions can
	// (their backends are this machine's processes): its CPU per
	// statement, the cost itself, beside throughput.
	ServerCPU bool
	Divide    func(o observer.Observer) (observer.SessionPart, error)
	SQL       func(settings map[string]string) []string
}

// splitArms are the arms of a split: the A/A arm (nothing set in either
// group) and each observer's per-session part. An observer that cannot
// be split is refused by name, with the reason.
func splitArms(cfg Config) ([]Arm, error) {
	if cfg.Split == nil {
		return nil, errors.New("a split needs the engine's division of its observers")
	}
	base := observer.Observer{Name: observer.Baseline}
	arms := []Arm{{Name: AAName, Method: MethodSplit, Reps: cfg.Rounds}}
	var errs []error
	for _, o := range cfg.Observers {
		if o.Name == observer.Baseline {
			base = o
			continue
		}
		part, err := cfg.Split.Divide(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		arms = append(arms, Arm{Name: o.Name, Observer: o, Method: MethodSplit, Reps: cfg.Rounds, Measures: result.MeasuresPerSession, Part: &part})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	arms[0].Observer = base
	for i := range arms {
		arms[i].Flipped = DuetFlipped(cfg.Seed, arms[i].Name)
	}
	return arms, nil
}

// MethodSplitDuet is a duet and, beside it, a split of the first twin.
const MethodSplitDuet = result.MethodSplitDuet

// SplitSuffix ends the name of an observer's split arm beside its duet
// arm (MethodSplitDuet).
const SplitSuffix = result.SplitSuffix

// splitDuetArms are a duet's arms and a split's beside them, the split's
// A/A arm named SplitAAName and each observer's split arm with
// SplitSuffix: the same observers measured whole by the twins and per
// session in the first twin, at its share.
func splitDuetArms(cfg Config) ([]Arm, error) {
	split, err := splitArms(cfg)
	if err != nil {
		return nil, err
	}
	split[0].Name = SplitAAName
	for i := range split[1:] {
		split[1+i].Name += SplitSuffix
	}
	for i := range split {
		split[i].Flipped = DuetFlipped(cfg.Seed, split[i].Name)
	}
	return append(duetArms(cfg), split...), nil
}

// runSplit runs one phase of a split arm: the server reset, the arm's
// shared part applied to it, then both groups driven at once, the
// observer's session part set in the sessions of the group whose turn it
// is. The run returned is that group's, with the other's in Duet.
func runSplit(ctx context.Context, cfg Config, a Arm, round int) (r result.Run, err error) {
	on := DuetOn(round, a.Flipped)
	shared, name := a.Observer, a.Name
	if a.Part != nil {
		shared = a.Part.Shared
	}
	r.Condition = name
	applied, revert, err := applyChecked(ctx, cfg, shared, name, &r)
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, revert()) }()
	if err := cfg.Target.Verify(ctx, cfg.Dataset); err != nil {
		return r, err
	}
	if cfg.Twins != nil {
		// Beside a duet: the first twin's server at its share, as in
		// the duet's phases, and the groups driven from this process
		// (the twin's worker drives one group of sessions).
		cfg.Load = nil
		if err := place(cfg, cfg.Twins.Groups[0], cfg.Twins.LoadGroups[0]); err != nil {
			return r, fmt.Errorf("twin %s: %w", TwinNames[0], err)
		}
	}
	var events engine.EventCounter
	if a.Part != nil {
		if events, err = startEvents(ctx, cfg, applied, shared); err != nil {
			return r, fmt.Errorf("count events of %s: %w", name, err)
		}
	}
	faults := faultWatch(cfg.Target)
	r.Started = time.Now()
	cpu := cfg.cpuWindow()
	dcfg := cfg.Driver
	dcfg.Groups, dcfg.GroupSQL = 2, make([][]string, 2)
	if a.Part != nil {
		dcfg.GroupSQL[on], dcfg.GroupSQL[1-on] = cfg.Split.SQL(a.Part.Session), cfg.Split.SQL(a.Part.Unobserved)
		r.Held = strings.Join(a.Part.SharedWork(), ", ")
	}
	dcfg.Window = cpu.Toggle
	dcfg.ServerCPU = cfg.Split.ServerCPU
	res, derr := cfg.drive(ctx, dcfg)
	cpu.Close()
	r.Usage = cpu.Usage
	if ctx.Err() != nil {
		r.Error = "interrupted"
		return r, ctx.Err()
	}
	if derr != nil {
		r.Driver, r.Error = res, derr.Error()
		return r, nil
	}
	if len(res.Groups) != 2 {
		return r, fmt.Errorf("the split's load gave %d group(s) of sessions, not 2", len(res.Groups))
	}
	r.Driver = res.Groups[on]
	r.Duet = splitRecord(res.Groups, on)
	if cpu.Err != nil {
		r.Error = "cpu: " + cpu.Err.Error()
	}
	if events != nil {
		// Only the observed group's sessions set the observer: its
		// statements are the ones to be recorded.
		r.Events = countEvents(ctx, events, r.Driver.Executed, shared)
	}
	if f := faults(); f != "" && r.Error == "" {
		r.Error = f
	}
	return r, nil
}

// splitRecord is a split phase's groups as a duet's twins: the other
// group's load, and, where the sessions' server CPU was read, each
// group's server CPU (in CPUs) and its µs per statement.
func splitRecord(groups []result.DriverResult, on int) *result.Duet {
	d := &result.Duet{On: GroupNames[on], Off: groups[1-on]}
	g, off := groups[on], groups[1-on]
	if g.ServerSeconds > 0 && off.ServerSeconds > 0 && g.Measured > 0 && off.Measured > 0 && g.Seconds > 0 && off.Seconds > 0 {
		d.OnCPUs, d.OffCPUs = g.ServerSeconds/g.Seconds, off.ServerSeconds/off.Seconds
		d.OnServerUS, d.OffServerUS = 1e6*g.ServerSeconds/float64(g.Measured), 1e6*off.ServerSeconds/float64(off.Measured)
	}
	return d
}

// SplitAAName is a split's A/A arm in a plan of other methods too (an
// auto plan on one server), beside their A/A arm.
const SplitAAName = result.SplitAAName

// splitArm is o's split arm in an auto plan on one server, when o splits
// (Config.Split given): its per-session part measured by split, in
// cfg.Rounds phases of the run's duration.
func (cfg Config) splitArm(o observer.Observer) (Arm, bool) {
	if cfg.Method != MethodAuto || cfg.Split == nil {
		return Arm{}, false
	}
	part, err := cfg.Split.Divide(o)
	if err != nil {
		return Arm{}, false
	}
	return Arm{Name: o.Name, Observer: o, Method: MethodSplit, Reps: cfg.Rounds, Measures: result.MeasuresPerSession, Part: &part,
		Flipped: DuetFlipped(cfg.Seed, o.Name)}, true
}

// Divisible sorts observers' names (the baseline left out) into those
// that split between groups of sessions and those that do not.
func (s *Split) Divisible(observers []observer.Observer) (split, whole []string) {
	for _, o := range observers {
		if o.Name == observer.Baseline {
			continue
		}
		if _, err := s.Divide(o); err == nil {
			split = append(split, o.Name)
		} else {
			whole = append(whole, o.Name)
		}
	}
	return split, whole
}

// Check refuses every observer of observers that cannot be split, each
// named with its reason (*observer.Unsplittable), together.
func (s *Split) Check(observers []observer.Observer) error {
	var errs []error
	for _, o := range observers {
		if o.Name == observer.Baseline {
			continue
		}
		if _, err := s.Divide(o); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Plan lists, for a dry run, what each observer's split sets: in each
// session of the observed group, and on the server for both groups.
func (s *Split) Plan(observers []observer.Observer) ([]string, error) {
	if err := s.Check(observers); err != nil {
		return nil, err
	}
	var lines []string
	for _, o := range observers {
		if o.Name == observer.Baseline {
			continue
		}
		part, _ := s.Divide(o)
		lines = append(lines, o.Name+", in each session of the observed group:")
		for _, sql := range s.SQL(part.Session) {
			lines = append(lines, "  "+sql)
		}
		if len(part.Session) == 0 {
			lines = append(lines, "  nothing: its sessions take the server's settings")
		}
		if len(part.Unobserved) > 0 {
			lines = append(lines, o.Name+", in each session of the other group:")
			for _, sql := range s.SQL(part.Unobserved) {
				lines = append(lines, "  "+sql)
			}
		}
		if shared := part.SharedWork(); len(shared) > 0 {
			lines = append(lines, "  on the server, for both groups (not in the figure): "+strings.Join(shared, ", "))
		}
	}
	return lines, nil
}
