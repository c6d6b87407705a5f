package experiment

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// runAlternation runs the workload once while switching the reloadable part
// of the arm's observer on and off on a random schedule; the part that needs
// a restart is in force for the whole run, in both phases. Slow drift of the
// machine then cancels: each on phase is compared with the off phases right
// before and after it. A short check run with the observer in force
// throughout then counts its events against the statements executed.
func runAlternation(ctx context.Context, cfg Config, a Arm, salt uint64) (r result.Run, err error) {
	t := cfg.Target
	held, switched, err := t.Split(ctx, a.Observer)
	if err != nil {
		return r, err
	}
	r.Held = held.Summary()
	_, revert, err := applyChecked(ctx, cfg, held, a.Name, &r)
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, revert()) }()
	if err := t.Verify(ctx, cfg.Dataset); err != nil {
		return r, err
	}

	ac := cfg.Alternation
	seconds := int(ac.Duration / time.Second)
	phases := Schedule(seconds, ac.MinPhase, ac.MaxPhase, rand.New(rand.NewPCG(cfg.Seed, salt)))
	sw := &switcher{target: t, observer: switched, enabled: len(switched.Settings) > 0 || len(switched.EnableSQL) > 0}
	probes, err := newProbeWindow(ctx, cfg.Probes, t)
	if err != nil {
		return r, err
	}
	defer probes.release(ctx)
	sampleByPhase(probes, sw, a.Name)
	win := &altWindow{switcher: sw, phases: phases, cpu: cfg.cpuWindow(), probes: probes, stop: make(chan struct{})}
	dcfg := cfg.Driver
	dcfg.Duration = time.Duration(seconds) * time.Second
	dcfg.Labels = phaseLabels(phases, seconds)
	dcfg.Window = func(open bool) { win.toggle(ctx, open) }
	faults := faultWatch(t)
	r.Started = time.Now()
	res, derr := cfg.drive(ctx, dcfg)
	win.end(ctx)
	r.Usage = win.cpu.Usage
	probes.record(&r, a.Name != CollectorArm)
	if serr := sw.off(context.WithoutCancel(ctx)); serr != nil {
		r.Error = "switching off: " + serr.Error()
		return r, fmt.Errorf("switch %s off: %w", a.Name, serr)
	}
	r.Phases = phases
	if ctx.Err() != nil {
		r.Error = "interrupted"
		return r, ctx.Err()
	}
	r.Driver = res
	switch {
	case derr != nil:
		r.Error = derr.Error()
		return r, nil
	case sw.err != nil:
		// The observer may be half on: later runs could not be trusted.
		r.Error = "switching: " + sw.err.Error()
		return r, fmt.Errorf("switch %s: %w", a.Name, sw.err)
	case win.cpu.Err != nil:
		r.Error = "cpu: " + win.cpu.Err.Error()
	}
	if f := faults(); f != "" && r.Error == "" {
		r.Error = f
	}
	if switched.Events != nil {
		r.Events, err = checkEvents(ctx, cfg, sw)
	}
	return r, err
}

// sampleByPhase has the wait sampler, if any, file its samples by phase,
// the first phase off; the arm that measures the sampler itself switches
// it instead: paused in off phases.
func sampleByPhase(probes *probeWindow, sw *switcher, arm string) {
	if probes.sampler == nil {
		return
	}
	probes.sampler.SetObserverOn(false)
	sw.phase = probes.sampler.SetObserverOn
	if arm == CollectorArm {
		probes.sampler.SetObserverOn(true)
		probes.sampler.Pause(true)
		sw.phase = func(on bool) { probes.sampler.Pause(!on) }
	}
}

// altWindow follows an alternation run's measured window: the switcher
// follows the phases from its first second, the CPU and probe windows
// cover it.
type altWindow struct {
	switcher *switcher
	phases   []result.Phase
	cpu      *collect.Window
	probes   *probeWindow
	wg       sync.WaitGroup
	stop     chan struct{} // closed when the window closes
}

// toggle opens or closes the window: the driver's Config.Window.
func (w *altWindow) toggle(ctx context.Context, open bool) {
	if !open {
		close(w.stop)
		w.cpu.Close()
		w.probes.close(ctx)
		return
	}
	// The driver counts seconds from this moment: take it before
	// anything else, so that the switches line up with its seconds.
	opened := time.Now()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.switcher.follow(ctx, w.phases, opened, w.stop)
	}()
	w.cpu.Toggle(true)
	w.probes.open(ctx)
}

// end closes the window after the run, also one that never closed (the
// run interrupted or failed early), and waits for the switcher to stop.
func (w *altWindow) end(ctx context.Context) {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.cpu.Close()
	w.probes.close(ctx)
	w.wg.Wait()
}

// phaseLabels labels each second of an alternation window "on" or "off"
// by its phase, leaving the first second of every phase unlabelled, as
// the analysis drops it (the switch settles in it): the driver then keeps
// the latency of on and off phases apart, over the seconds their
// throughput is compared in.
func phaseLabels(phases []result.Phase, seconds int) []string {
	labels := make([]string, seconds)
	for _, p := range phases {
		for sec := p.Start + 1; sec < p.End && sec < seconds; sec++ {
			labels[sec] = "off"
			if p.On {
				labels[sec] = "on"
			}
		}
	}
	return labels
}

// switcher turns the switchable part of an observer on and off.
type switcher struct {
	target   engine.Target
	observer observer.Observer
	enabled  bool // false for the A/A arm: phases are marked, nothing switches
	applied  engine.Applied
	err      error
	// phase, if set, learns of every switch once it took effect.
	phase func(on bool)
}

// follow switches at each phase start (whole seconds after start) until
// stop is closed, recording in each phase how long its switch took.
func (s *switcher) follow(ctx context.Context, phases []result.Phase, start time.Time, stop <-chan struct{}) {
	for i := 1; i < len(phases); i++ {
		t := time.NewTimer(time.Until(start.Add(time.Duration(phases[i].Start) * time.Second)))
		select {
		case <-stop:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		var err error
		if phases[i].On {
			err = s.on(ctx)
		} else {
			err = s.off(ctx)
		}
		if s.phase != nil {
			s.phase(phases[i].On)
		}
		// From the scheduled start: a late timer counts against the phase.
		due := start.Add(time.Duration(phases[i].Start) * time.Second)
		phases[i].SwitchMS = float64(time.Since(due).Microseconds()) / 1000
		if err != nil && s.err == nil {
			s.err = err
			return
		}
	}
}

func (s *switcher) on(ctx context.Context) error {
	if !s.enabled || s.applied != nil {
		return nil
	}
	a, err := s.target.Apply(ctx, s.observer)
	if err == nil {
		s.applied = a
	}
	return err
}

// off reverts the switched part; after a failed revert it stays marked on,
// so that the next off tries again.
func (s *switcher) off(ctx context.Context) error {
	if s.applied == nil {
		return nil
	}
	if err := s.applied.Revert(ctx); err != nil {
		return err
	}
	s.applied = nil
	return nil
}

// checkEvents runs the workload briefly with the whole observer in force
// and counts the events it recorded against the statements executed.
func checkEvents(ctx context.Context, cfg Config, sw *switcher) (_ *result.Events, err error) {
	if err := sw.on(ctx); err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, sw.off(context.WithoutCancel(ctx))) }()
	events, err := startEvents(ctx, cfg, sw.applied, sw.observer)
	if err != nil || events == nil {
		return nil, err
	}
	dcfg := cfg.Driver
	dcfg.Warmup, dcfg.Duration, dcfg.Window = 0, cfg.Alternation.CheckDuration, nil
	res, err := cfg.drive(ctx, dcfg)
	if err != nil {
		return &result.Events{Error: "check run: " + err.Error()}, nil
	}
	return countEvents(ctx, events, res.Executed, sw.observer), nil
}
