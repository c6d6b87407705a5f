package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/result"
)

// run is one run on the workers.
type run struct {
	c    *Coordinator
	id   int
	ws   []*remote
	busy map[int]bool // workers still running
}

// next waits for the run's next event, or for ctx or a timeout.
func (r *run) next(ctx context.Context, timeout <-chan time.Time) (event, error) {
	for {
		select {
		case e := <-r.c.events:
			if e.err == nil && e.m.RunID != r.id && e.m.Kind != kindClock {
				continue // a stopped run's late message
			}
			return e, nil
		case <-timeout:
			return event{}, errors.New("timed out")
		case <-ctx.Done():
			return event{}, ctx.Err()
		}
	}
}

// clocks measures each worker's clock against the coordinator's: half a
// round trip bounds the error.
func (r *run) clocks(ctx context.Context) error {
	for _, w := range r.ws {
		t0 := time.Now()
		if err := w.c.send(message{Kind: kindClock, RunID: r.id, Clock: t0.UnixNano()}); err != nil {
			return &WorkerError{w.Index, w.Host, w.PID, err}
		}
		timeout := time.After(replyTimeout)
		for {
			e, err := r.next(ctx, timeout)
			if err != nil {
				return &WorkerError{w.Index, w.Host, w.PID, fmt.Errorf("clock: %w", err)}
			}
			if e.err != nil {
				return &WorkerError{e.index, e.w.Host, e.w.PID, e.err}
			}
			if e.index != w.Index || e.m.Kind != kindClock {
				continue
			}
			t1 := time.Now()
			mid := t0.Add(t1.Sub(t0) / 2)
			w.offset = time.Unix(0, e.m.Clock).Sub(mid)
			w.clockErr = t1.Sub(t0) / 2
			break
		}
	}
	return nil
}

// startLead is how far ahead of now the run's start is named: ten round
// trips to the slowest worker, within minStartLead and maxStartLead.
func (r *run) startLead() time.Duration {
	var trip time.Duration
	for _, w := range r.ws {
		trip = max(trip, 2*w.clockErr)
	}
	return min(maxStartLead, max(minStartLead, 10*trip))
}

// finish waits until every worker is ready, starts them together, follows
// the window and merges their parts.
func (r *run) finish(ctx context.Context, cfg driver.Config) (driver.Result, error) {
	ready := map[int]bool{}
	timeout := time.After(replyTimeout)
	for len(ready) < len(r.ws) {
		e, err := r.next(ctx, timeout)
		if err != nil {
			return driver.Result{}, r.fail(ctx, fmt.Errorf("waiting for the workers' sessions: %w", err))
		}
		if err := r.failure(e); err != nil {
			return driver.Result{}, r.fail(ctx, err)
		}
		if e.m.Kind == kindReady {
			ready[e.index] = true
		}
	}
	start := time.Now().Add(r.startLead())
	for _, w := range r.ws {
		if err := w.c.send(message{Kind: kindStart, RunID: r.id, Start: start.Add(w.offset).UnixNano()}); err != nil {
			return driver.Result{}, r.fail(ctx, &WorkerError{w.Index, w.Host, w.PID, err})
		}
	}
	window := func(open bool) {
		if cfg.Window != nil {
			cfg.Window(open)
		}
	}
	openT := time.NewTimer(time.Until(start.Add(cfg.Warmup)))
	closeT := time.NewTimer(time.Until(start.Add(cfg.Warmup + cfg.Duration)))
	defer openT.Stop()
	defer closeT.Stop()
	opened, closed := false, false
	parts := map[int]part{}
	for len(parts) < len(r.ws) {
		var e event
		select {
		case <-openT.C:
			opened = true
			window(true)
			continue
		case <-closeT.C:
			closed = true
			window(false)
			continue
		case e = <-r.c.events:
		case <-ctx.Done():
			return driver.Result{}, r.fail(ctx, ctx.Err())
		}
		if e.err == nil && e.m.RunID != r.id {
			continue
		}
		if err := r.failure(e); err != nil {
			return driver.Result{}, r.fail(ctx, err)
		}
		switch e.m.Kind {
		case kindProgress:
			if cfg.Executed != nil {
				cfg.Executed.Add(e.m.Progress)
			}
		case kindPart:
			if e.m.Part != nil {
				parts[e.index] = *e.m.Part
				delete(r.busy, e.index)
			}
		}
	}
	if opened && !closed {
		window(false) // every session ran out of work early
	}
	return r.merge(parts)
}

// failure is the error an event reports, nil for a message of progress.
func (r *run) failure(e event) error {
	switch {
	case e.err != nil:
		delete(r.busy, e.index)
		return &WorkerError{e.index, e.w.Host, e.w.PID, e.err}
	case e.m.Kind == kindFailed:
		delete(r.busy, e.index)
		return &WorkerError{e.index, e.w.Host, e.w.PID, errors.New(e.m.Err)}
	}
	return nil
}

// fail stops the workers still running and waits, a while, until they
// say they stopped; it returns err, naming the stopped workers.
func (r *run) fail(ctx context.Context, err error) error {
	for _, w := range r.ws {
		if r.busy[w.Index] {
			w.c.send(message{Kind: kindStop, RunID: r.id})
		}
	}
	var stopped []string
	for idx := range r.busy {
		stopped = append(stopped, fmt.Sprint(idx))
	}
	slices.Sort(stopped)
	timeout := time.After(stopTimeout)
	for len(r.busy) > 0 {
		e, werr := r.next(context.WithoutCancel(ctx), timeout)
		if werr != nil {
			r.c.cfg.Log("workers %v did not say they stopped within %v", stopped, stopTimeout)
			break
		}
		if e.err != nil || e.m.Kind == kindFailed || e.m.Kind == kindPart {
			delete(r.busy, e.index)
		}
	}
	if len(stopped) > 0 {
		return fmt.Errorf("%w; worker %s stopped", err, strings.Join(stopped, ", "))
	}
	return err
}

// merge combines the workers' parts, in session order, and says what each
// worker ran and cost.
func (r *run) merge(parts map[int]part) (driver.Result, error) {
	var ps []driver.Part
	var loads []result.WorkerLoad
	first := 0
	for _, w := range r.ws {
		p := parts[w.Index]
		dp, err := p.PartWire.Part()
		if err != nil {
			return driver.Result{}, &WorkerError{w.Index, w.Host, w.PID, err}
		}
		ps = append(ps, dp)
		load := result.WorkerLoad{Worker: w.Index, Host: w.Host, FirstSession: first, Sessions: dp.Result.Clients,
			Throughput: dp.Result.Throughput, CPU: result.CPU{Seconds: p.CPUSeconds},
			ClockOffsetMS: ms(w.offset), ClockErrorMS: ms(w.clockErr)}
		if s := dp.Result.Seconds * float64(max(w.CPUs, 1)); s > 0 {
			load.CPU.Pct = 100 * p.CPUSeconds / s
		}
		loads = append(loads, load)
		first += dp.Result.Clients
	}
	m := driver.Merge(ps)
	m.Workers = loads
	return m, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
