package driver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/obsbench/obsbench/internal/workload"
)

// running is one RunPart's sessions as they run: a worker each, the event
// loops they share (none: a goroutine each), and what stops them.
type running struct {
	cfg     Config
	loops   []*SocketLoop
	workers []*worker
	seconds int      // of the measured window, rounded up
	labels  []int    // each second's label, an index into names
	names   []string // Config.Labels, each once
	secs    *secondHist
	// rateSecs counts, at a rate, each second's units by their latency
	// from the scheduled start (nil in a closed loop).
	rateSecs *secondHist
	start    time.Time // the run's second 0: its warm-up starts there

	wg sync.WaitGroup
	// stop is read between Ops; stopping tells Ops that wait
	// (workload.Stopping) that the run ends.
	stop     atomic.Bool
	stopping chan struct{}
	stopOnce sync.Once
	// done closes when every session has run out of work
	// (workload.ErrDone); left counts the sessions still running.
	done     chan struct{}
	left     atomic.Int64
	loopErrs []error
	// lanes[i] is session i's schedule at a rate (nil: a closed loop).
	lanes []*lane
}

func newRunning(cfg Config, loops []*SocketLoop) *running {
	seconds := int((cfg.Duration + time.Second - 1) / time.Second)
	r := &running{cfg: cfg, loops: loops, workers: make([]*worker, cfg.Clients), seconds: seconds,
		stopping: make(chan struct{}), done: make(chan struct{}), loopErrs: make([]error, len(loops))}
	r.left.Store(int64(cfg.Clients))
	r.labels, r.names = labelIndex(cfg.Labels, seconds)
	r.secs = newSecondHist(seconds)
	if cfg.Rate > 0 {
		r.rateSecs = newSecondHist(seconds)
	}
	return r
}

// prepare has the workload prepare each session's operation.
func prepare(ctx context.Context, cfg Config, sessions []Session, w workload.Workload) ([]workload.Op, error) {
	ops := make([]workload.Op, cfg.Clients)
	for i, s := range sessions {
		var err error
		if ops[i], err = w.Worker(ctx, s, cfg.stream(i)); err != nil {
			return nil, fmt.Errorf("session %d: %w", cfg.FirstSession+i, err)
		}
	}
	return ops, nil
}

// begin sets the run's second 0: now, or the moment Config.Begin says
// every driver starts at, slept until.
func (r *running) begin(ctx context.Context) error {
	r.start = time.Now()
	if r.cfg.Begin == nil {
		return nil
	}
	at, err := r.cfg.Begin(ctx)
	if err != nil {
		return err
	}
	if !sleepUntil(ctx, at) {
		return ctx.Err()
	}
	r.start = at
	return nil
}

// startSessions starts every session's loop: on a goroutine of its own,
// or in turn on the event loops, each loop on a goroutine.
func (r *running) startSessions(ctx context.Context, sessions []Session, ops []workload.Op) {
	cfg := r.cfg
	wctx := workload.WithStopping(ctx, r.stopping)
	bodies := make([][]func(), len(r.loops))
	r.lanes = openLanes(cfg, len(r.loops), r.start)
	for i := range r.workers {
		wk := r.newWorker(sessions[i], cfg.FirstSession+i)
		if r.lanes != nil {
			wk.lane, wk.limit, wk.rate = r.lanes[i], cfg.LatencyLimit, newArrivals()
		}
		r.workers[i] = wk
		r.wg.Add(1)
		op, sctx := ops[i], wctx
		if r.loops != nil {
			sctx = workload.WithSleeper(wctx, r.loops[cfg.loopOf(i, len(r.loops))])
		}
		body := func() {
			defer r.wg.Done()
			wk.loop(sctx, op, &r.stop, r.start, cfg.Warmup, cfg.Duration, cfg.Executed)
			// A session that ends, done or failed, no longer holds the run
			// open; a failure is reported when the run ends.
			if r.left.Add(-1) == 0 {
				close(r.done)
			}
		}
		if r.loops == nil {
			go body()
		} else {
			k := cfg.loopOf(i, len(r.loops))
			bodies[k] = append(bodies[k], body)
		}
	}
	for k, l := range r.loops {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.loopErrs[k] = l.Run(wctx, bodies[k])
		}()
	}
}

// newWorker is the worker of session s, numbered id.
func (r *running) newWorker(s Session, id int) *worker {
	wk := &worker{
		perSecond: make([]int64, r.seconds),
		secs:      r.secs,
		rateSecs:  r.rateSecs,
		hist:      hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3),
		labels:    r.labels,
	}
	for range r.names {
		wk.labelHist = append(wk.labelHist, hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3))
	}
	if r.cfg.Executions {
		wk.keep = true
		wk.session = id
		wk.clock, _ = s.(ServerClock)
	}
	return wk
}

// halt ends the run: each session stops after its statement in flight.
func (r *running) halt() {
	r.stop.Store(true)
	r.stopOnce.Do(func() { close(r.stopping) })
	for _, l := range r.loops {
		l.Interrupt() // its sessions' sleeps end at stopping
	}
}

// until waits until d after the start, or until every session has run
// out of work; false if ctx ended first.
func (r *running) until(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(time.Until(r.start.Add(d)))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// measure waits out the warm-up and the window, telling Config.Window
// when the window opens and closes, then stops the sessions and waits
// for them. closed is when the window closed: at its end, or at the last
// statement when every session ran out of work first.
func (r *running) measure(ctx context.Context) (closed time.Time, err error) {
	cfg := r.cfg
	if r.until(ctx, cfg.Warmup) {
		if err := r.ranOutInWarmup(); err != nil {
			return closed, err
		}
		if cfg.Window != nil {
			cfg.Window(true)
		}
		if r.until(ctx, cfg.Warmup+cfg.Duration) {
			closed = time.Now()
			select {
			case <-r.done:
				// Out of work: the window ends with the last statement,
				// not when this goroutine woke.
				closed = lastEnd(r.workers)
			default:
			}
			if cfg.Window != nil {
				cfg.Window(false)
			}
		}
	}
	r.halt()
	r.wg.Wait()
	if err := ctx.Err(); err != nil {
		return closed, err
	}
	if err := errors.Join(r.loopErrs...); err != nil {
		return closed, fmt.Errorf("driver: %w", err)
	}
	return closed, nil
}

// ranOutInWarmup refuses a run whose sessions ran out of work before the
// window opened, not merely before this goroutine looked: with a short or
// no warm-up, a little work can end between the timer and here, inside
// the window. Once done is closed every session has ended (left's atomic
// count orders their writes before it), so their last statements can be
// read. A session's failure is the error then, rather than the lack of
// work.
func (r *running) ranOutInWarmup() error {
	select {
	case <-r.done:
	default:
		return nil
	}
	if !lastEnd(r.workers).Before(r.start.Add(r.cfg.Warmup)) {
		return nil
	}
	r.halt()
	r.wg.Wait()
	if _, err := collate(r.cfg, time.Millisecond, r.workers, r.run(), r.names, 0); err != nil {
		return err
	}
	return fmt.Errorf("driver: every session ran out of work within the %v warm-up; shorten --warmup", r.cfg.Warmup)
}

// window is how long the measured window was: cfg.Duration, or, when
// every session ran out of work before its end, as long as the work
// took, from the time base its statements are counted in.
func (r *running) window(closed time.Time) time.Duration {
	if closed.Before(r.start.Add(r.cfg.Warmup + r.cfg.Duration)) {
		return max(closed.Sub(r.start.Add(r.cfg.Warmup)), time.Millisecond)
	}
	return r.cfg.Duration
}
