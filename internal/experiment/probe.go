package experiment

import (
	"context"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/result"
)

// Probes configures the collectors that run beside the CPU sampler in every
// measured window.
type Probes struct {
	// WaitInterval is how often active sessions' waits are sampled; 0
	// leaves the wait sampler off.
	WaitInterval time.Duration
	// KernelWaits looks a session that reports no wait up in /proc, when
	// the server's processes are on this machine.
	KernelWaits bool
	// Counters takes the engine's counters at the window's start and end.
	Counters bool
	// MeasureCost adds an arm that pauses and resumes the wait sampler on
	// an alternation schedule, with no observer: the sampler's own cost.
	MeasureCost bool
}

// CollectorArm names the arm that measures the wait sampler's cost.
const CollectorArm = "collector: wait sampler"

// probeWindow runs the probes over one measured window.
type probeWindow struct {
	cfg     Probes
	target  engine.Target
	prober  engine.Prober
	src     engine.WaitSource
	sampler *collect.WaitSampler

	opened                time.Time
	counters0             map[string]float64
	profile0              map[string]int64
	seconds               float64
	counters1             map[string]float64
	profile1              map[string]int64
	waitsOn, waitsOff     collect.Waits
	samplerCPU0           float64 // CPU seconds of the sampler's backend at open
	samplerCPU            float64 // ... used during the window; -1: unknown
	waitErr, counterErr   error
	profileErr            error
	sampled, countersRead bool
}

// newProbeWindow prepares the probes cfg asks for and the target supports;
// it opens the wait source now, outside the window.
func newProbeWindow(ctx context.Context, cfg Probes, t engine.Target) (*probeWindow, error) {
	p := &probeWindow{cfg: cfg, target: t}
	pr, ok := t.(engine.Prober)
	if !ok {
		return p, nil
	}
	p.prober = pr
	if cfg.WaitInterval > 0 {
		src, err := pr.OpenWaits(ctx)
		if err != nil {
			return nil, err
		}
		p.src = src
		p.sampler = collect.NewWaitSampler(src, cfg.WaitInterval, cfg.KernelWaits && t.ServerPID() > 0)
	}
	return p, nil
}

// open starts the window: counters first, then the sampler.
func (p *probeWindow) open(ctx context.Context) {
	if p.prober == nil {
		return
	}
	if p.cfg.Counters {
		p.counters0, p.counterErr = p.prober.Counters(ctx)
		p.profile0, p.profileErr = p.prober.WaitProfile(ctx)
	}
	p.opened = time.Now()
	if p.sampler != nil {
		p.samplerCPU0 = p.backendCPU()
		p.sampler.Start(ctx)
	}
}

// close ends the window; it is safe to call again or without open.
func (p *probeWindow) close(ctx context.Context) {
	if p.opened.IsZero() || p.seconds > 0 {
		return
	}
	p.seconds = time.Since(p.opened).Seconds()
	if p.sampler != nil {
		p.waitsOn, p.waitsOff, p.waitErr = p.sampler.Stop()
		p.sampled = true
		if end := p.backendCPU(); end >= 0 && p.samplerCPU0 >= 0 {
			p.samplerCPU = end - p.samplerCPU0
		} else {
			p.samplerCPU = -1
		}
	}
	if p.cfg.Counters && p.counterErr == nil {
		ctx = context.WithoutCancel(ctx)
		p.counters1, p.counterErr = p.prober.Counters(ctx)
		if p.profileErr == nil {
			p.profile1, p.profileErr = p.prober.WaitProfile(ctx)
		}
		p.countersRead = p.counterErr == nil
	}
}

// backendCPU is the CPU seconds of the sampler's server process so far, -1
// when it is not on this machine.
func (p *probeWindow) backendCPU() float64 {
	pid := p.src.BackendPID()
	if pid <= 0 || p.target.ServerPID() <= 0 {
		return -1
	}
	s, err := collect.ProcessCPU(pid)
	if err != nil {
		return -1
	}
	return s
}

// release closes the wait source.
func (p *probeWindow) release(ctx context.Context) {
	if p.src != nil {
		p.src.Close(context.WithoutCancel(ctx))
		p.src = nil
	}
}

// record stores what the probes saw in r. alternated says whether the
// run switched an observer (then the off-phase waits are kept apart).
func (p *probeWindow) record(r *result.Run, alternated bool) {
	if p.sampled {
		on := p.waitsOn
		r.Waits = &on
		if alternated {
			off := p.waitsOff
			r.WaitsOff = &off
		}
		r.WaitInterval = p.cfg.WaitInterval.Seconds()
		if p.samplerCPU >= 0 && p.target.ServerPID() > 0 {
			pct := collect.MachinePct(p.samplerCPU, p.seconds)
			r.WaitSamplerCPUPct = &pct
		}
		if p.waitErr != nil {
			r.ProbeErrors = append(r.ProbeErrors, "waits: "+p.waitErr.Error())
		}
	}
	if p.counterErr != nil {
		r.ProbeErrors = append(r.ProbeErrors, "counters: "+p.counterErr.Error())
	}
	if p.profileErr != nil {
		r.ProbeErrors = append(r.ProbeErrors, "engine wait profile: "+p.profileErr.Error())
	}
	if p.countersRead && p.seconds > 0 {
		r.Counters = map[string]float64{}
		for k, v1 := range p.counters1 {
			if name, gauge := strings.CutPrefix(k, engine.GaugePrefix); gauge {
				r.Counters[name] = v1
				continue
			}
			if v0, ok := p.counters0[k]; ok {
				r.Counters[k] = (v1 - v0) / p.seconds
			}
		}
		if p.profile0 != nil && p.profile1 != nil {
			waits, err := engine.EngineWaitGrowth(p.prober, p.profile0, p.profile1)
			if err != nil {
				r.ProbeErrors = append(r.ProbeErrors, "engine wait profile: "+err.Error())
			} else {
				r.EngineWaits = waits
			}
		}
	}
}
