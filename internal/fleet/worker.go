package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// WorkerConfig is what a worker needs before it hears its coordinator.
type WorkerConfig struct {
	// Coordinator is unix:/path/to/socket or host:port.
	Coordinator string
	Token       string
	// Pin is the SHA-256 of the coordinator's certificate: over TCP the
	// worker speaks TLS and checks it (ListenTLS).
	Pin   string
	Index int
	// Build turns the experiment the coordinator sends (with the files
	// its workload reads) into the workload and the dialer of its
	// sessions.
	Build func(s spec.Spec, a engine.SessionAddress, files map[string][]byte) (workload.Meta, driver.Dialer, error)
	// Log receives notes; nil: none.
	Log func(format string, args ...any)
}

// ErrCoordinatorLost means the worker stopped because its coordinator
// went away or fell silent.
var ErrCoordinatorLost = errors.New("lost the coordinator")

// Dial connects to a coordinator address: unix:/path, or host:port over
// TLS with the coordinator's certificate pinned.
func Dial(ctx context.Context, addr, pin string) (net.Conn, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
	return dialTLS(ctx, addr, pin)
}

// Work registers with the coordinator and runs what it asks until the
// coordinator ends the experiment (nil) or is lost (ErrCoordinatorLost).
func Work(ctx context.Context, cfg WorkerConfig) error {
	logf := cfg.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	nc, err := Dial(ctx, cfg.Coordinator, cfg.Pin)
	if err != nil {
		return fmt.Errorf("connect to the coordinator at %s: %w", cfg.Coordinator, err)
	}
	c := newConn(nc)
	defer c.close()
	host, _ := os.Hostname()
	if err := c.send(message{Kind: kindHello, Hello: &hello{Index: cfg.Index, Token: cfg.Token, Host: host, PID: os.Getpid(), CPUs: runtime.NumCPU()}}); err != nil {
		return err
	}
	nc.SetReadDeadline(time.Now().Add(assignTimeout))
	m, err := c.receive()
	if err != nil {
		return fmt.Errorf("the coordinator at %s did not take this worker (wrong token or index?): %w", cfg.Coordinator, err)
	}
	if m.Kind != kindAssign || m.Assign == nil {
		return fmt.Errorf("coordinator sent %q; want %s", m.Kind, kindAssign)
	}
	wl, dial, err := cfg.Build(m.Assign.Spec, m.Assign.Address, m.Assign.Files)
	if err != nil {
		c.send(message{Kind: kindAssigned, Err: err.Error()})
		return err
	}
	if err := c.send(message{Kind: kindAssigned}); err != nil {
		return err
	}
	logf("worker %d: registered; workload %s", cfg.Index, wl.Name)
	w := &worker{c: c, nc: nc, wl: wl, dial: dial, logf: logf, index: cfg.Index}
	return w.serve(ctx)
}

type worker struct {
	c     *conn
	nc    net.Conn
	wl    workload.Meta
	dial  driver.Dialer
	logf  func(string, ...any)
	index int
	// starts and stops deliver the running run's messages from the
	// reader.
	starts chan message
	stops  chan int
}

// serve reads the coordinator's messages; a run goes on in its own
// goroutine while the reader watches for stop, start and silence.
func (w *worker) serve(ctx context.Context) error {
	// A worker told to stop (SIGTERM: its pod deleted) leaves at once:
	// closing the connection ends the reader below, and the coordinator
	// sees the worker gone rather than a worker whose runs all fail.
	defer context.AfterFunc(ctx, func() { w.nc.Close() })()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w.starts = make(chan message, 1)
	w.stops = make(chan int, 1)
	runs := make(chan message, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range runs {
			w.run(ctx, m)
		}
	}()
	defer func() {
		close(runs)
		<-done
	}()
	for {
		w.nc.SetReadDeadline(time.Now().Add(silenceLimit))
		m, err := w.c.receive()
		if err != nil {
			cause := fmt.Errorf("%w: %v", ErrCoordinatorLost, err)
			cancel(cause) // stop the sessions at once
			if ctx.Err() != nil && context.Cause(ctx) != cause {
				return context.Cause(ctx)
			}
			return cause
		}
		switch m.Kind {
		case kindBye:
			cancel(nil)
			return nil
		case kindPing:
		case kindClock:
			w.c.send(message{Kind: kindClock, RunID: m.RunID, Clock: time.Now().UnixNano()})
		case kindRun:
			select {
			case runs <- m:
			default:
				w.c.send(message{Kind: kindFailed, RunID: m.RunID, Err: "a run is still going on"})
			}
		case kindStart:
			select {
			case w.starts <- m:
			default:
			}
		case kindStop:
			select {
			case w.stops <- m.RunID:
			default:
			}
		}
	}
}

// run runs one share of sessions and reports its part.
func (w *worker) run(ctx context.Context, m message) {
	req := m.Run
	id := m.RunID
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go w.cancelOnStop(ctx, id, cancel)
	var executed atomic.Int64
	var cpu0, cpu1 time.Duration
	cfg := driver.Config{
		Clients: req.Clients, FirstSession: req.FirstSession, Warmup: req.Warmup, Duration: req.Duration,
		Procs: min(req.Procs, driver.DefaultProcs(req.Clients)), Labels: req.Labels, Executions: req.Executions, Executed: &executed,
		Rate: req.Rate, RateSeed: req.RateSeed, LatencyLimit: req.LatencyLimit,
		Window: func(open bool) {
			if open {
				cpu0 = processCPU()
			} else {
				cpu1 = processCPU()
			}
		},
		Begin: func(ctx context.Context) (time.Time, error) { return w.begin(ctx, id) },
	}
	progress := make(chan struct{})
	go func() {
		defer close(progress)
		w.reportProgress(ctx, id, &executed)
	}()
	p, err := driver.RunPart(ctx, cfg, w.dial, w.wl.New())
	cancel()
	<-progress
	if err != nil {
		w.c.send(message{Kind: kindFailed, RunID: id, Err: err.Error()})
		return
	}
	if cpu1 == 0 {
		cpu1 = processCPU()
	}
	wire, err := p.Wire()
	if err != nil {
		w.c.send(message{Kind: kindFailed, RunID: id, Err: err.Error()})
		return
	}
	w.c.send(message{Kind: kindPart, RunID: id, Part: &part{PartWire: wire, CPUSeconds: (cpu1 - cpu0).Seconds()}})
}

// cancelOnStop cancels run id when the coordinator stops it; a stop for
// another run is stale.
func (w *worker) cancelOnStop(ctx context.Context, id int, cancel context.CancelFunc) {
	for {
		select {
		case sid := <-w.stops:
			if sid == id {
				cancel()
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// begin is run id's start barrier (driver.Config.Begin): it says the
// sessions are ready, and returns the start the coordinator gives.
func (w *worker) begin(ctx context.Context, id int) (time.Time, error) {
	if err := w.c.send(message{Kind: kindReady, RunID: id}); err != nil {
		return time.Time{}, err
	}
	for {
		select {
		case s := <-w.starts:
			if s.RunID == id {
				return time.Unix(0, s.Start), nil
			}
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// reportProgress sends the statements executed since the last report,
// four times a second until ctx ends, then the last count (before the
// part).
func (w *worker) reportProgress(ctx context.Context, id int, executed *atomic.Int64) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	var sent int64
	for end := false; !end; {
		select {
		case <-t.C:
		case <-ctx.Done():
			end = true // the last count goes before the part
		}
		if n := executed.Load(); n > sent {
			w.c.send(message{Kind: kindProgress, RunID: id, Progress: n - sent})
			sent = n
		}
	}
}

// processCPU is this process's CPU time so far, 0 if unreadable.
func processCPU() time.Duration {
	d, _ := collect.SelfCPU()
	return d
}
