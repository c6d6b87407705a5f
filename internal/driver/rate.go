package driver

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// A run at a fixed arrival rate (Config.Rate) is an open model, as pgbench
// -R runs one: units of work (a script's transaction, or one statement)
// arrive on a Poisson schedule whatever the server does, and a unit's
// latency runs from its scheduled start, so that the units queued behind
// a stalled one are charged for the stall (no coordinated omission).

// lane is one schedule of arrivals, shared by the sessions of one event
// loop and group (with a goroutine per session, of one group): whichever
// of them is free first takes the next arrival, as pgbench's clients take
// their thread's.
type lane struct {
	mu   sync.Mutex
	src  rand.PCG
	rnd  *rand.Rand
	mean float64   // seconds between arrivals, on average
	next time.Time // the latest arrival taken
	// opened and closed bound the measured window; atClose is the
	// stream and its latest arrival as they were when it closed, the
	// last taken before then.
	opened, closed time.Time
	atClose        struct {
		src  rand.PCG
		next time.Time
	}
	group int
}

// newLane is a schedule of rate arrivals a second from start, its stream
// numbered (seed, stream): lanes of the same numbers arrive alike.
func newLane(rate float64, start, opened, closed time.Time, seed, stream uint64, group int) *lane {
	l := &lane{mean: 1 / rate, next: start, opened: opened, closed: closed, group: group}
	l.src.Seed(seed, stream)
	l.rnd = rand.New(&l.src)
	l.atClose.src, l.atClose.next = l.src, l.next
	return l
}

// take is the lane's next arrival, and whether it counts in the window:
// due inside it and taken before it closed.
func (l *lane) take() (at time.Time, counts bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next = l.next.Add(gap(l.rnd, l.mean))
	if time.Now().Before(l.closed) {
		l.atClose.src, l.atClose.next = l.src, l.next
		return l.next, !l.next.Before(l.opened) && l.next.Before(l.closed)
	}
	return l.next, false
}

// gap is an exponential interval of the given mean in seconds, as
// pgbench draws its throttle delays.
func gap(rnd *rand.Rand, mean float64) time.Duration {
	return time.Duration(rnd.ExpFloat64() * mean * float64(time.Second))
}

// backlog counts the arrivals due inside the window that no session had
// taken when it closed, from a copy of the stream as it was then.
func (l *lane) backlog() int64 {
	l.mu.Lock()
	src, next := l.atClose.src, l.atClose.next
	l.mu.Unlock()
	rnd := rand.New(&src)
	var n int64
	for {
		next = next.Add(gap(rnd, l.mean))
		if !next.Before(l.closed) {
			return n
		}
		if !next.Before(l.opened) {
			n++
		}
	}
}

// openLanes gives each of cfg's sessions its lane: one per event loop and
// group, each with its sessions' share of the rate, or nil for a closed
// loop. The k-th loop's lanes of every group arrive alike, so that the
// groups of a split are offered the same units at the same moments, and
// so are the twins of a duet, given the same seed.
func openLanes(cfg Config, loops int, start time.Time) []*lane {
	opened := start.Add(cfg.Warmup)
	closed := opened.Add(cfg.Duration)
	if cfg.Rate <= 0 {
		return nil
	}
	loopOf := func(i int) int {
		if loops == 0 {
			return 0
		}
		return cfg.loopOf(i, loops)
	}
	type key struct{ loop, group int }
	members := map[key]int{}
	for i := range cfg.Clients {
		members[key{loopOf(i), cfg.group(i)}]++
	}
	byKey := map[key]*lane{}
	out := make([]*lane, cfg.Clients)
	for i := range cfg.Clients {
		k := key{loopOf(i), cfg.group(i)}
		if byKey[k] == nil {
			rate := cfg.Rate * float64(members[k]) / float64(cfg.Clients)
			stream := uint64(cfg.FirstSession)<<20 | uint64(k.loop)
			byKey[k] = newLane(rate, start, opened, closed, uint64(cfg.RateSeed), stream, k.group)
		}
		out[i] = byKey[k]
	}
	return out
}

// backlogs counts each group's arrivals due in the window that no session
// had taken up when it closed, and all of them.
func backlogs(lanes []*lane, groups int) (byGroup []int64, all int64) {
	byGroup = make([]int64, max(1, groups))
	seen := map[*lane]bool{}
	for _, l := range lanes {
		if seen[l] {
			continue
		}
		seen[l] = true
		n := l.backlog()
		byGroup[l.group] += n
		all += n
	}
	return byGroup, all
}

// arrivals is one session's count of how it kept its lane's schedule
// (result.RateResult's counts, before the backlog is known).
type arrivals struct {
	started, skipped, completed, late int64
	latency, lag                      *hdrhistogram.Histogram
	// scheduled and sent are the unit in progress' arrival and the moment
	// it was sent.
	scheduled, sent time.Time
}

func newArrivals() *arrivals {
	return &arrivals{
		latency: hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3),
		lag:     hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3),
	}
}

// arrive waits for the session's next arrival: it takes its lane's next
// one, skips those already later than the limit, and sleeps until it has
// come. False when the run ended (or ctx did) first.
func (wk *worker) arrive(ctx context.Context) bool {
	for {
		at, counts := wk.lane.take()
		if wk.limit > 0 && time.Since(at) > wk.limit {
			if counts {
				wk.rate.skipped++
			}
			if closed(workload.Stopping(ctx)) {
				return false
			}
			continue
		}
		if counts {
			wk.rate.started++
		}
		if workload.Sleep(ctx, at) != nil {
			return false
		}
		wk.rate.scheduled, wk.rate.sent = at, time.Now()
		return true
	}
}

// unitDone counts the unit that ended at end, in second sec of the
// window.
func (wk *worker) unitDone(end time.Time, sec int) {
	a := wk.rate
	a.completed++
	lat := end.Sub(a.scheduled)
	if wk.limit > 0 && lat > wk.limit {
		a.late++
	}
	a.latency.RecordValue(clampMicros(lat))
	if wk.rateSecs != nil {
		wk.rateSecs.record(sec, clampMicros(lat))
	}
	a.lag.RecordValue(clampMicros(a.sent.Sub(a.scheduled)))
}

func clampMicros(d time.Duration) int64 {
	return min(max(d.Microseconds(), minLatencyMicros), maxLatencyMicros)
}

// rateOf sums the sessions' arrivals into rate's result, over a window of
// seconds with backlog arrivals left waiting; nil without a rate.
func rateOf(cfg Config, workers []*worker, seconds float64, backlog int64) (*result.RateResult, *hdrhistogram.Histogram, *hdrhistogram.Histogram) {
	if cfg.Rate <= 0 {
		return nil, nil, nil
	}
	r := &result.RateResult{Asked: cfg.Rate, Backlog: backlog, LimitMS: float64(cfg.LatencyLimit.Microseconds()) / 1000}
	lat := hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3)
	lag := hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3)
	for _, wk := range workers {
		if a := wk.rate; a != nil {
			r.Started += a.started
			r.Skipped += a.skipped
			r.Completed += a.completed
			r.Late += a.late
			lat.Merge(a.latency)
			lag.Merge(a.lag)
		}
	}
	r.Scheduled = r.Started + r.Skipped + r.Backlog
	summarizeRate(r, seconds, lat, lag)
	return r, lat, lag
}

// summarizeRate reads r's achieved rate and latencies from its counts and
// histograms.
func summarizeRate(r *result.RateResult, seconds float64, lat, lag *hdrhistogram.Histogram) {
	if seconds > 0 {
		r.Achieved = float64(r.Completed) / seconds
	}
	if lat != nil && lat.TotalCount() > 0 {
		r.Latency = latencyOf(lat)
	}
	if lag != nil && lag.TotalCount() > 0 {
		r.Lag = latencyOf(lag)
	}
}
