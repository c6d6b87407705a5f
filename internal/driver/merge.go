package driver

import (
	"fmt"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/obsbench/obsbench/internal/result"
)

// Part is what one driver ran of a run whose sessions several drivers
// shared: its result, and the histograms the result's latencies were read
// from. Percentiles do not add up; histograms do, so merged parts give
// the percentiles one driver recording every statement would have given.
type Part struct {
	Result  Result
	hist    *hdrhistogram.Histogram
	byLabel map[string]*hdrhistogram.Histogram
	seconds []uint32 // each second's latency buckets (secondHist)
	// rateLatency and rateLag are a run at a rate's units' latency and
	// lag from their scheduled starts (Result.Rate).
	rateLatency, rateLag *hdrhistogram.Histogram
	rateSeconds          []uint32 // each second's units' latency buckets
}

// PartWire is a Part as plain data for another process, its histograms in
// HdrHistogram's compressed encoding.
type PartWire struct {
	Result      Result            `json:"result"`
	Hist        []byte            `json:"hist,omitempty"`
	ByLabel     map[string][]byte `json:"hist_by_label,omitempty"`
	Seconds     []uint32          `json:"hist_per_second,omitempty"`
	RateLatency []byte            `json:"hist_rate_latency,omitempty"`
	RateLag     []byte            `json:"hist_rate_lag,omitempty"`
	RateSeconds []uint32          `json:"hist_rate_per_second,omitempty"`
}

// Wire encodes p.
func (p Part) Wire() (PartWire, error) {
	w := PartWire{Result: p.Result, Seconds: p.seconds, RateSeconds: p.rateSeconds}
	var err error
	if p.hist != nil {
		if w.Hist, err = p.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err != nil {
			return w, fmt.Errorf("encode latency histogram: %w", err)
		}
	}
	if p.rateLatency != nil {
		if w.RateLatency, err = p.rateLatency.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err != nil {
			return w, fmt.Errorf("encode latency histogram at the rate: %w", err)
		}
		if w.RateLag, err = p.rateLag.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err != nil {
			return w, fmt.Errorf("encode lag histogram: %w", err)
		}
	}
	for name, h := range p.byLabel {
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return w, fmt.Errorf("encode latency histogram of %s: %w", name, err)
		}
		if w.ByLabel == nil {
			w.ByLabel = map[string][]byte{}
		}
		w.ByLabel[name] = b
	}
	return w, nil
}

// Part decodes w.
func (w PartWire) Part() (Part, error) {
	p := Part{Result: w.Result, seconds: w.Seconds, rateSeconds: w.RateSeconds}
	var err error
	if len(w.Hist) > 0 {
		if p.hist, err = hdrhistogram.Decode(w.Hist); err != nil {
			return p, fmt.Errorf("decode latency histogram: %w", err)
		}
	}
	if len(w.RateLatency) > 0 {
		if p.rateLatency, err = hdrhistogram.Decode(w.RateLatency); err != nil {
			return p, fmt.Errorf("decode latency histogram at the rate: %w", err)
		}
		if p.rateLag, err = hdrhistogram.Decode(w.RateLag); err != nil {
			return p, fmt.Errorf("decode lag histogram: %w", err)
		}
	}
	for name, b := range w.ByLabel {
		h, err := hdrhistogram.Decode(b)
		if err != nil {
			return p, fmt.Errorf("decode latency histogram of %s: %w", name, err)
		}
		if p.byLabel == nil {
			p.byLabel = map[string]*hdrhistogram.Histogram{}
		}
		p.byLabel[name] = h
	}
	return p, nil
}

// summarize reads the result's throughput and latencies from its counts
// and histograms.
func (p *Part) summarize() {
	r := &p.Result
	if r.Seconds > 0 {
		r.Throughput = float64(r.Measured) / r.Seconds
	}
	if p.hist != nil {
		r.Latency = latencyOf(p.hist)
	}
	if p.seconds != nil {
		r.LatencyPerSecond = perSecondLatency(p.seconds)
	}
	r.LatencyBy = nil
	for name, h := range p.byLabel {
		if h.TotalCount() == 0 {
			continue
		}
		if r.LatencyBy == nil {
			r.LatencyBy = map[string]Latency{}
		}
		r.LatencyBy[name] = latencyOf(h)
	}
}

// Merge combines parts, in the order of their sessions, into the result
// of one run: counts add up, each session keeps its row of per-second
// counts, and latencies are read from the merged histograms. The window is
// the longest part's (parts whose sessions ran out of work end early).
func Merge(parts []Part) Result {
	m := Part{hist: hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3)}
	r := &m.Result
	for _, p := range parts {
		r.Seconds = max(r.Seconds, p.Result.Seconds)
	}
	width := 0
	for _, p := range parts {
		for _, row := range p.Result.PerSecond {
			width = max(width, len(row))
		}
	}
	for _, p := range parts {
		q := p.Result
		r.Clients += q.Clients
		r.Measured += q.Measured
		r.Executed += q.Executed
		r.Units += q.Units
		r.Errors += q.Errors
		for _, row := range q.PerSecond {
			r.PerSecond = append(r.PerSecond, append(row[:len(row):len(row)], make([]int64, width-len(row))...))
		}
		for _, msg := range q.ErrorSamples {
			if len(r.ErrorSamples) < maxErrorSamples && !slices.Contains(r.ErrorSamples, msg) {
				r.ErrorSamples = append(r.ErrorSamples, msg)
			}
		}
		r.Executions = append(r.Executions, q.Executions...)
		if r.ExecutionsNote == "" {
			r.ExecutionsNote = q.ExecutionsNote
		}
		r.Statements = addStatements(r.Statements, q.Statements)
		for name, s := range q.StatementsBy {
			if r.StatementsBy == nil {
				r.StatementsBy = map[string][]result.StatementLatency{}
			}
			r.StatementsBy[name] = addStatements(r.StatementsBy[name], s)
		}
		if p.hist != nil {
			m.hist.Merge(p.hist)
		}
		m.seconds = addCounts(m.seconds, p.seconds)
		m.addRate(p)
		for name, h := range p.byLabel {
			if m.byLabel == nil {
				m.byLabel = map[string]*hdrhistogram.Histogram{}
			}
			if m.byLabel[name] == nil {
				m.byLabel[name] = hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3)
			}
			m.byLabel[name].Merge(h)
		}
	}
	m.summarize()
	if r.Rate != nil {
		summarizeRate(r.Rate, r.Seconds, m.rateLatency, m.rateLag)
		if m.rateSeconds != nil {
			r.Rate.LatencyPerSecond = perSecondLatency(m.rateSeconds)
		}
	}
	return m.Result
}

// addRate adds p's arrivals at a rate to m's.
func (m *Part) addRate(p Part) {
	q := p.Result.Rate
	if q == nil {
		return
	}
	if m.Result.Rate == nil {
		m.Result.Rate = &result.RateResult{LimitMS: q.LimitMS}
		m.rateLatency = hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3)
		m.rateLag = hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3)
	}
	r := m.Result.Rate
	r.Asked += q.Asked
	r.Scheduled += q.Scheduled
	r.Started += q.Started
	r.Skipped += q.Skipped
	r.Backlog += q.Backlog
	r.Completed += q.Completed
	r.Late += q.Late
	if p.rateLatency != nil {
		m.rateLatency.Merge(p.rateLatency)
		m.rateLag.Merge(p.rateLag)
	}
	m.rateSeconds = addCounts(m.rateSeconds, p.rateSeconds)
}

// addStatements adds b's per-statement latencies to a's, statement by
// statement (both list the same workload's statements in its order).
func addStatements(a, b []result.StatementLatency) []result.StatementLatency {
	for i, s := range b {
		if i >= len(a) {
			a = append(a, result.StatementLatency{Statement: s.Statement})
		}
		t := &a[i]
		n := t.Count + s.Count
		if n > 0 {
			t.MeanMS = (t.MeanMS*float64(t.Count) + s.MeanMS*float64(s.Count)) / float64(n)
		}
		t.Count = n
		if c := t.CPUCount + s.CPUCount; c > 0 {
			t.CPUMeanMS = (t.CPUMeanMS*float64(t.CPUCount) + s.CPUMeanMS*float64(s.CPUCount)) / float64(c)
			t.CPUCount = c
		}
	}
	return a
}
