package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// states samples what the run's client backends are doing (-states):
// pg_stat_activity's state and wait event of every client backend of
// the database but the sampler's own, every interval. Where a transaction's
// time goes (running, waiting for a lock its peer holds, for the WAL flush,
// or for its client's next statement) tells a slow client from a slow
// server: a backend "idle in transaction" is waiting for the tool.
type states struct {
	mu     sync.Mutex
	counts map[string]int64
	ticks  int64
	err    error
	stop   context.CancelFunc
	done   chan struct{}
}

const statesSQL = `SELECT coalesce(state, 'starting'), coalesce(wait_event_type || ':' || wait_event, '')
FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname = $1 AND pid <> pg_backend_pid()`

func startStates(ctx context.Context, dsn, database string, every time.Duration) (*states, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("states sampler: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &states{counts: map[string]int64{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer conn.Close(context.Background())
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			rows, err := conn.Query(ctx, statesSQL, database)
			if err != nil {
				if ctx.Err() == nil {
					s.err = err
				}
				return
			}
			tick := map[string]int64{}
			for rows.Next() {
				var state, wait string
				if err := rows.Scan(&state, &wait); err != nil {
					s.err = err
					return
				}
				label := state
				if wait != "" {
					label += " " + wait
				}
				tick[label]++
			}
			rows.Close()
			s.mu.Lock()
			s.ticks++
			for k, v := range tick {
				s.counts[k] += v
			}
			s.mu.Unlock()
		}
	}()
	return s, nil
}

// finish stops sampling and returns each label's share of the backends'
// samples.
func (s *states) finish() (map[string]float64, error) {
	s.stop()
	<-s.done
	var total int64
	for _, n := range s.counts {
		total += n
	}
	shares := map[string]float64{}
	for k, n := range s.counts {
		shares[k] = float64(n) / float64(total)
	}
	return shares, s.err
}

// formatStates is one line of the shares, largest first.
func formatStates(shares map[string]float64) string {
	keys := slices.Collect(maps.Keys(shares))
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(shares[b], shares[a]), strings.Compare(a, b))
	})
	var parts []string
	for _, k := range keys {
		if shares[k] >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.1f%%", k, 100*shares[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// writeStates adds each tool's mean shares of the backends' states over
// its runs, and what they say per transaction: the time a backend spends
// per transaction (sessions ÷ transactions/s) split into waiting for its
// client (ClientRead, in or out of a transaction) and the rest.
func writeStates(p func(string, ...any), samples []sample, every time.Duration, clients int) {
	p("\nbackends' states (pg_stat_activity every %v during the measured runs; mean share of the samples over each tool's runs):\n", every)
	labels := map[string]bool{}
	mean := map[string]map[string]float64{}
	client, tps := map[string]float64{}, map[string]float64{}
	for _, tool := range []string{"obsbench", "pgbench"} {
		mean[tool] = map[string]float64{}
		n := 0
		for _, s := range samples {
			if s.tool != tool || s.states == nil {
				continue
			}
			n++
			tps[tool] += s.tps
			for k, v := range s.states {
				mean[tool][k] += v
				labels[k] = true
			}
		}
		tps[tool] /= float64(max(n, 1))
		for k := range mean[tool] {
			mean[tool][k] /= float64(max(n, 1))
			if strings.HasSuffix(k, "Client:ClientRead") {
				client[tool] += mean[tool][k]
			}
		}
	}
	keys := slices.Collect(maps.Keys(labels))
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Compare(mean["obsbench"][b]+mean["pgbench"][b], mean["obsbench"][a]+mean["pgbench"][a])
	})
	p("| state and wait | obsbench | pgbench |")
	p("|---|---:|---:|")
	for _, k := range keys {
		if mean["obsbench"][k]+mean["pgbench"][k] >= 0.005 {
			p("| %s | %.1f%% | %.1f%% |", k, 100*mean["obsbench"][k], 100*mean["pgbench"][k])
		}
	}
	p("| waiting for the client (all ClientRead) | %.1f%% | %.1f%% |", 100*client["obsbench"], 100*client["pgbench"])
	p("\nper transaction, each backend spends %d sessions ÷ transactions/s (mean of the runs) of time:", clients)
	for _, tool := range []string{"obsbench", "pgbench"} {
		per := 1e6 * float64(clients) / tps[tool]
		p("- %s: %.0f µs, of which %.0f µs waiting for its client and %.0f µs the rest", tool, per, client[tool]*per, (1-client[tool])*per)
	}
}
