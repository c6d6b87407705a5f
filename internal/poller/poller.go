// Package poller runs a monitoring agent's queries against a server at a
// fixed interval, as postgres_exporter, pganalyze or PMM do: an observer
// whose cost is the server work its queries take.
package poller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/workload"
)

// Poller is a running agent.
type Poller struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	polls  atomic.Int64
	mu     sync.Mutex
	err    error // the first query that failed
}

// Start connects spec's sessions with dial and starts polling: each
// session sends every query once, so that a query the server refuses is
// an error of Start, and then at every multiple of the interval on the
// clock (as a scraper's schedule runs), a poll that overruns its interval
// skipping the times it missed rather than running two at once. The
// clock's multiples, not Start's: an experiment applies an observer for
// each run and measures a window after a warm-up, and polls counted from
// Start would fall in the warm-up of every run and never in a window
// shorter than the interval.
func Start(ctx context.Context, dial driver.Dialer, spec observer.Poller) (*Poller, error) {
	every, err := spec.Every()
	if err != nil {
		return nil, err
	}
	var sessions []driver.Session
	closeAll := func() {
		for _, s := range sessions {
			_ = s.Close(context.WithoutCancel(ctx))
		}
	}
	for range spec.Conns() {
		s, err := dial(ctx)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("poller: connect: %w", err)
		}
		sessions = append(sessions, s)
	}
	for _, s := range sessions {
		if err := poll(ctx, s, spec.Queries); err != nil {
			closeAll()
			return nil, err
		}
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &Poller{cancel: cancel}
	p.polls.Add(int64(len(sessions)))
	for _, s := range sessions {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer s.Close(context.WithoutCancel(pctx))
			for {
				next := time.Now().Truncate(every).Add(every)
				select {
				case <-pctx.Done():
					return
				case <-time.After(time.Until(next)):
				}
				if err := poll(pctx, s, spec.Queries); err != nil {
					if pctx.Err() == nil {
						p.fail(err)
					}
					return
				}
				p.polls.Add(1)
			}
		}()
	}
	return p, nil
}

// poll sends each query as text (a real agent's simple queries) and reads
// its rows to the end; a session without a text protocol prepares it.
func poll(ctx context.Context, s driver.Session, queries []string) error {
	for _, q := range queries {
		var err error
		if ex, ok := s.(workload.Execer); ok {
			err = ex.ExecSQL(ctx, q)
		} else {
			var st workload.Stmt
			if st, err = s.Prepare(ctx, q); err == nil {
				err = st.Exec(ctx)
			}
		}
		if err != nil {
			return fmt.Errorf("poller query %q: %w", q, err)
		}
	}
	return nil
}

func (p *Poller) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

// Polls is how many polls (a session sending every query) have run.
func (p *Poller) Polls() int64 { return p.polls.Load() }

// Stop ends the polling and closes the sessions; it returns the first
// query that failed meanwhile, so that an agent that stopped early does
// not pass for one that cost little.
func (p *Poller) Stop() error {
	p.cancel()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return errors.New("the poller stopped early: " + p.err.Error())
	}
	return nil
}

// For starts o's poller, if o has one, with dial; stop is nil without
// one.
func For(ctx context.Context, dial driver.Dialer, o observer.Observer) (stop func() error, err error) {
	if o.Poller == nil {
		return nil, nil
	}
	p, err := Start(ctx, dial, *o.Poller)
	if err != nil {
		return nil, fmt.Errorf("observer %s: %w", o.Name, err)
	}
	return p.Stop, nil
}
