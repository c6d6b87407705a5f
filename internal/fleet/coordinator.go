package fleet

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/spec"
)

// Timeouts of the protocol.
const (
	helloTimeout = 10 * time.Second // a connection says who it is
	// assignTimeout bounds a worker's wait for its assignment, which may
	// carry a large capture file over a slow link.
	assignTimeout = 10 * time.Minute
	replyTimeout  = 30 * time.Second // a worker answers a request (connecting its sessions included)
	stopTimeout   = 10 * time.Second // a stopped worker reports
	pingEvery     = 500 * time.Millisecond
	// silenceLimit is how long a worker goes on without hearing from its
	// coordinator: pings come every pingEvery.
	silenceLimit = 3 * time.Second
	// The start instant is named ahead of now so that every worker hears
	// it before it comes: by ten of the slowest worker's round trips, as
	// measured for the run's clocks, within these bounds. A worker on
	// this machine answers in well under a millisecond, one across a
	// network in a few; a start heard late only shortens the warm-up.
	minStartLead = 50 * time.Millisecond
	maxStartLead = 200 * time.Millisecond
)

// Config is what a coordinator hands its workers.
type Config struct {
	Workers int
	// Token is the secret a worker must present (TokenEnv).
	Token   string
	Spec    spec.Spec
	Address engine.SessionAddress
	// Files are the files the workload reads (scripts, a capture), by
	// the paths the spec names: workers need not see this file system.
	Files map[string][]byte
	// Log receives notes for the user; nil: none.
	Log func(format string, args ...any)
}

// Coordinator runs sessions on registered workers: it is an
// experiment.Load.
type Coordinator struct {
	cfg    Config
	ln     net.Listener
	events chan event
	mu     sync.Mutex
	// workers[i] is worker i while it is connected.
	workers []*remote
	joined  chan struct{} // a worker registered
	closing chan struct{}
	wg      sync.WaitGroup
	runID   int
}

// remote is a registered worker.
type remote struct {
	hello
	c *conn
	// offset is the worker's clock minus the coordinator's; clockErr
	// bounds its error (half the round trip).
	offset, clockErr time.Duration
}

// event is a message from worker Index, or its connection's end (Err).
type event struct {
	index int
	w     *remote
	m     message
	err   error
}

// WorkerError is a run that failed in one worker.
type WorkerError struct {
	Index int
	Host  string
	PID   int
	Err   error
}

func (e *WorkerError) Error() string {
	return fmt.Sprintf("worker %d (pid %d on %s): %v", e.Index, e.PID, e.Host, e.Err)
}

func (e *WorkerError) Unwrap() error { return e.Err }

// NewCoordinator accepts workers on ln until Close.
func NewCoordinator(ln net.Listener, cfg Config) *Coordinator {
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	c := &Coordinator{cfg: cfg, ln: ln, events: make(chan event, 4096), workers: make([]*remote, cfg.Workers),
		joined: make(chan struct{}, 1), closing: make(chan struct{})}
	c.wg.Add(2)
	go c.accept()
	go c.ping()
	return c
}

// Addr is where workers connect.
func (c *Coordinator) Addr() net.Addr { return c.ln.Addr() }

// Close stops accepting and disconnects every worker, which then stop.
func (c *Coordinator) Close() error {
	select {
	case <-c.closing:
		return nil
	default:
	}
	close(c.closing)
	err := c.ln.Close()
	c.mu.Lock()
	for _, w := range c.workers {
		if w != nil {
			w.c.send(message{Kind: kindBye})
			w.c.close()
		}
	}
	c.mu.Unlock()
	c.wg.Wait()
	return err
}

func (c *Coordinator) accept() {
	defer c.wg.Done()
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := c.register(nc); err != nil {
				c.cfg.Log("a worker from %s was turned away: %v", nc.RemoteAddr(), err)
				nc.Close()
			}
		}()
	}
}

// register reads a worker's hello, checks its token and index, sends it
// its assignment and waits until it has built its workload.
func (c *Coordinator) register(nc net.Conn) error {
	wc := newConn(nc)
	nc.SetDeadline(time.Now().Add(helloTimeout))
	m, err := wc.receive()
	if err != nil {
		return fmt.Errorf("no hello: %w", err)
	}
	if m.Kind != kindHello || m.Hello == nil {
		return fmt.Errorf("first message %q; want %s", m.Kind, kindHello)
	}
	h := *m.Hello
	if subtle.ConstantTimeCompare([]byte(h.Token), []byte(c.cfg.Token)) != 1 {
		return errors.New("wrong token")
	}
	if h.Index < 0 || h.Index >= c.cfg.Workers {
		return fmt.Errorf("index %d: this experiment has workers 0 to %d", h.Index, c.cfg.Workers-1)
	}
	c.mu.Lock()
	taken := c.workers[h.Index] != nil
	c.mu.Unlock()
	if taken {
		return fmt.Errorf("worker %d is registered already", h.Index)
	}
	// The worker answers once it has read the files and built the
	// workload from them.
	nc.SetDeadline(time.Now().Add(replyTimeout + filesTimeout(c.cfg.Files)))
	if err := wc.sendWithin(message{Kind: kindAssign, Assign: &assign{Spec: c.cfg.Spec, Address: c.cfg.Address, Files: c.cfg.Files}}, filesTimeout(c.cfg.Files)); err != nil {
		return err
	}
	if m, err = wc.receive(); err != nil {
		return fmt.Errorf("worker %d: no answer to its assignment: %w", h.Index, err)
	}
	if m.Kind != kindAssigned || m.Err != "" {
		return fmt.Errorf("worker %d cannot run the experiment: %s", h.Index, m.Err)
	}
	nc.SetDeadline(time.Time{})
	w := &remote{hello: h, c: wc}
	c.mu.Lock()
	if c.workers[h.Index] != nil {
		c.mu.Unlock()
		return fmt.Errorf("worker %d is registered already", h.Index)
	}
	c.workers[h.Index] = w
	c.mu.Unlock()
	c.cfg.Log("worker %d registered: pid %d on %s, %d CPUs", h.Index, h.PID, h.Host, h.CPUs)
	select {
	case c.joined <- struct{}{}:
	default:
	}
	for {
		m, err := wc.receive()
		if err != nil {
			c.mu.Lock()
			c.workers[h.Index] = nil
			c.mu.Unlock()
			wc.close()
			c.events <- event{index: h.Index, w: w, err: fmt.Errorf("connection lost: %w", err)}
			return nil
		}
		c.events <- event{index: h.Index, w: w, m: m}
	}
}

// ping tells every worker, twice a second, that its coordinator is there.
func (c *Coordinator) ping() {
	defer c.wg.Done()
	t := time.NewTicker(pingEvery)
	defer t.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-t.C:
			for _, w := range c.registered() {
				w.c.send(message{Kind: kindPing})
			}
		}
	}
}

func (c *Coordinator) registered() []*remote {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*remote
	for _, w := range c.workers {
		if w != nil {
			out = append(out, w)
		}
	}
	return out
}

// Wait waits until every worker has registered, at most timeout.
func (c *Coordinator) Wait(ctx context.Context, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		var missing []string
		for i, w := range c.workers {
			if w == nil {
				missing = append(missing, fmt.Sprint(i))
			}
		}
		c.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-c.joined:
		case <-deadline.C:
			return fmt.Errorf("worker %s did not register within %v", strings.Join(missing, ", "), timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// share is the sessions worker i of n runs: a contiguous block, the
// first clients%n workers one more.
func share(clients, n, i int) (first, count int) {
	base, extra := clients/n, clients%n
	first = i*base + min(i, extra)
	count = base
	if i < extra {
		count++
	}
	return first, count
}

// Run runs one run's sessions on the workers (experiment.Load). A worker
// that fails or disconnects fails the run, named; the others are stopped.
func (c *Coordinator) Run(ctx context.Context, cfg driver.Config) (driver.Result, error) {
	if err := c.Wait(ctx, replyTimeout); err != nil {
		return driver.Result{}, err
	}
	c.drain()
	c.runID++
	id := c.runID
	ws := c.registered()
	if len(ws) != c.cfg.Workers {
		return driver.Result{}, errors.New("a worker left before the run")
	}
	if cfg.Clients < len(ws) {
		return driver.Result{}, fmt.Errorf("%d sessions cannot be shared by %d workers: give --clients at least %d", cfg.Clients, len(ws), len(ws))
	}
	r := &run{c: c, id: id, ws: ws, busy: map[int]bool{}}
	if err := r.clocks(ctx); err != nil {
		return driver.Result{}, err
	}
	for i, w := range ws {
		first, n := share(cfg.Clients, len(ws), i)
		req := &runRequest{FirstSession: first, Clients: n, Warmup: cfg.Warmup, Duration: cfg.Duration,
			Procs: cfg.Procs, Labels: cfg.Labels, Executions: cfg.Executions,
			Rate: cfg.Rate * float64(n) / float64(cfg.Clients), RateSeed: cfg.RateSeed, LatencyLimit: cfg.LatencyLimit}
		if err := w.c.send(message{Kind: kindRun, RunID: id, Run: req}); err != nil {
			return driver.Result{}, r.fail(ctx, &WorkerError{w.Index, w.Host, w.PID, err})
		}
		r.busy[w.Index] = true
	}
	return r.finish(ctx, cfg)
}

// drain drops messages of runs that ended, and notes workers gone.
func (c *Coordinator) drain() {
	for {
		select {
		case e := <-c.events:
			if e.err != nil {
				c.cfg.Log("worker %d (pid %d on %s) left between runs: %v", e.index, e.w.PID, e.w.Host, e.err)
			}
		default:
			return
		}
	}
}
