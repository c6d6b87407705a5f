package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// The capacity probe's length: long enough for a steady rate of units
// on a busy machine, short beside an experiment.
const (
	probeWarmup   = time.Second
	probeDuration = 3 * time.Second
)

// probeRate sets cfg's rate (Driver.Rate) to the one at which the
// baseline keeps LoadPct of its server's CPU busy: of the CPU it keeps
// busy in a closed loop (a twin's quota, or what the machine gives it).
// CPU per unit is not constant: at a rate each unit wakes an idle
// session's backend rather than finding it at work, so a closed loop's
// capacity overstates a rate's, and the rate is found by probes at a
// rate, each scaling the last by the busy share it missed by. Where the
// server's CPU is not read (a server on another machine), the rate is
// LoadPct of the closed loop's units a second. The runs measured are the
// A/A arm's phase of a duet or a split (a twin under its quota, or the
// server both groups share), else a run of the baseline. Resuming, the
// rate is the finished runs'. The probes are said, not recorded.
func probeRate(ctx context.Context, cfg Config, arms []Arm) (Config, error) {
	if cfg.LoadPct <= 0 {
		return cfg, nil
	}
	for _, r := range cfg.Done {
		if r.Driver.Rate != nil {
			cfg.Driver.Rate = r.Driver.Rate.Asked
			return cfg, nil
		}
	}
	a, ok := probeArm(cfg, arms)
	if !ok {
		return cfg, fmt.Errorf("--load: the plan has no baseline to measure the capacity of")
	}
	closed, err := probe(ctx, cfg, a, 0)
	if err != nil {
		return cfg, err
	}
	share := cfg.LoadPct / 100
	rate := share * closed.units
	note := fmt.Sprintf("%s completed %.0f units/s in a closed loop", closed.whose, closed.units)
	if closed.cpus > 0 {
		target := share * closed.cpus
		var at probed
		probes := 0
		for ; probes < maxLoadProbes; probes++ {
			if at, err = probe(ctx, cfg, a, rate); err != nil {
				return cfg, err
			}
			if at.cpus <= 0 || math.Abs(at.cpus-target) <= loadTolerance*target {
				break
			}
			rate = min(rate*target/at.cpus, closed.units)
		}
		note += fmt.Sprintf(", its server %.2f CPUs busy; at %.0f units/s %.2f CPUs (%.0f%%, after %d probe(s) at a rate)",
			closed.cpus, at.asked, at.cpus, 100*at.cpus/closed.cpus, min(probes+1, maxLoadProbes))
	}
	cfg.Driver.Rate = rate
	if cfg.Log != nil {
		cfg.Log("capacity probe: %s; --load %g%% drives %.0f units/s", note, cfg.LoadPct, rate)
	}
	return cfg, nil
}

// The probes at a rate: at most maxLoadProbes, ending when the server's
// busy CPU is within loadTolerance of the share asked.
const (
	maxLoadProbes = 3
	loadTolerance = 0.05
)

// LoadProbeTime is the most the capacity probes take, each restart
// costing restart: a closed loop and maxLoadProbes at a rate.
func LoadProbeTime(restart time.Duration) time.Duration {
	return (1 + maxLoadProbes) * (probeWarmup + probeDuration + restart)
}

// probed is what a capacity probe at the rate asked (0: a closed loop)
// measured: the units a second the baseline completed and, where read,
// the server CPU it kept busy, in CPUs.
type probed struct {
	asked, units, cpus float64
	whose              string
}

// probe runs arm a once, briefly, at rate (0: a closed loop).
func probe(ctx context.Context, cfg Config, a Arm, rate float64) (probed, error) {
	pc := cfg
	pc.Driver.Rate, pc.Driver.Warmup, pc.Driver.Duration, pc.Driver.Executed = rate, probeWarmup, probeDuration, nil
	r, err := runArm(ctx, pc, a, 1, 0)
	if err == nil && r.Error != "" {
		err = errors.New(r.Error)
	}
	if err != nil {
		return probed{}, fmt.Errorf("--load: the capacity probe failed: %w", err)
	}
	p := probed{asked: rate, units: unitsPerS(r.Driver), whose: "the server"}
	if s := r.Usage.Server; s != nil && r.Driver.Seconds > 0 {
		p.cpus = s.Seconds / r.Driver.Seconds
	}
	if d := r.Duet; d != nil {
		off := unitsPerS(d.Off)
		switch a.Method {
		case MethodDuet: // each twin is driven at the rate: the slower one's
			p.whose, p.cpus = "the slower twin under its quota", d.OnCPUs
			if off < p.units {
				p.units, p.cpus = off, d.OffCPUs
			}
		case MethodSplit: // the groups share the server and the rate
			p.whose, p.units, p.cpus = "the server, both groups of sessions", p.units+off, d.OnCPUs+d.OffCPUs
		}
	}
	if p.units <= 0 {
		return p, fmt.Errorf("--load: the capacity probe completed no unit of work")
	}
	return p, nil
}

// probeArm is the arm whose run measures the baseline's capacity: a
// duet's or a split's A/A arm, else a run of the baseline on its own.
func probeArm(cfg Config, arms []Arm) (Arm, bool) {
	for _, a := range arms {
		if (a.Name == AAName || a.Name == SplitAAName) && (a.Method == MethodDuet || a.Method == MethodSplit) {
			return a, true
		}
	}
	for _, o := range cfg.Observers {
		if o.Name == observer.Baseline {
			return Arm{Name: o.Name, Observer: o, Method: MethodRounds}, true
		}
	}
	return Arm{}, false
}

// unitsPerS is the units of work a driver result completed a second.
func unitsPerS(d result.DriverResult) float64 {
	if d.Seconds <= 0 {
		return 0
	}
	return float64(d.Units) / d.Seconds
}
