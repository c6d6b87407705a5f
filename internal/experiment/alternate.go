package experiment

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
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
	var (
		sampler *collect.Sampler
		cpuErr  error
		wg      sync.WaitGroup
		stop    = make(chan struct{})
	)
	dcfg := cfg.Driver
	dcfg.Duration = time.Duration(seconds) * time.Second
	dcfg.Window = func(open bool) {
		if open {
			sampler, cpuErr = collect.StartSampler(t.ServerPID())
			wg.Add(1)
			go func() {
				defer wg.Done()
				sw.follow(ctx, phases, time.Now(), stop)
			}()
			return
		}
		close(stop)
		if sampler != nil {
			r.ServerCPU, r.DriverCPU, r.Noise, r.CPUPerSecond, cpuErr = sampler.Stop()
		}
	}
	r.Started = time.Now()
	res, derr := driver.Run(ctx, dcfg, t.Dial, cfg.Workload.New())
	select {
	case <-stop:
	default:
		close(stop) // the window never closed: interrupted or failed early
	}
	wg.Wait()
	if serr := sw.off(context.WithoutCancel(ctx)); serr != nil {
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
		r.Error = "switching: " + sw.err.Error()
		return r, nil
	case cpuErr != nil:
		r.Error = "cpu: " + cpuErr.Error()
	}
	if switched.Events != nil {
		r.Events, err = checkEvents(ctx, cfg, sw)
	}
	return r, err
}

// switcher turns the switchable part of an observer on and off.
type switcher struct {
	target   Target
	observer observer.Observer
	enabled  bool // false for the A/A arm: phases are marked, nothing switches
	applied  Applied
	err      error
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
		t0 := time.Now()
		var err error
		if phases[i].On {
			err = s.on(ctx)
		} else {
			err = s.off(ctx)
		}
		phases[i].SwitchMS = float64(time.Since(t0).Microseconds()) / 1000
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

func (s *switcher) off(ctx context.Context) error {
	if s.applied == nil {
		return nil
	}
	err := s.applied.Revert(ctx)
	s.applied = nil
	return err
}

// checkEvents runs the workload briefly with the whole observer in force
// and counts the events it recorded against the statements executed.
func checkEvents(ctx context.Context, cfg Config, sw *switcher) (*result.Events, error) {
	if err := sw.on(ctx); err != nil {
		return nil, err
	}
	defer sw.off(context.WithoutCancel(ctx))
	events, err := sw.applied.StartEvents(ctx, cfg.Workload.Tag)
	if err != nil || events == nil {
		return nil, err
	}
	dcfg := cfg.Driver
	dcfg.Warmup, dcfg.Duration, dcfg.Window = 0, cfg.Alternation.CheckDuration, nil
	res, err := driver.Run(ctx, dcfg, cfg.Target.Dial, cfg.Workload.New())
	if err != nil {
		return &result.Events{Error: "check run: " + err.Error()}, nil
	}
	n, err := events.Count(ctx)
	ev := &result.Events{Recorded: n, Executed: res.Executed}
	if err != nil {
		ev.Error = err.Error()
	}
	return ev, nil
}
