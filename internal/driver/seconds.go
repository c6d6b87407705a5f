package driver

import (
	"math/bits"
	"sync/atomic"

	"github.com/obsbench/obsbench/internal/result"
)

// secondBuckets is how many latency buckets a second has: exact below
// 8 µs, then 8 per power of two up to maxLatencyMicros (26 bits).
const secondBuckets = 8 * 24

// secondHist counts the latencies of the statements completed in each
// second of the window, all sessions together, in log-linear buckets (8
// per power of two), so that each second's percentiles can be read as
// pgbench's --aggregate-interval log reads its per-interval figures. A
// bucket is at most 1/8 of its value wide: a percentile read from it,
// the bucket's middle, is within 6.25% of the exact one. The sessions
// share it and add with atomics: one add per statement, beside a round
// trip to the server.
type secondHist struct {
	counts []atomic.Uint32 // second*secondBuckets + bucket
}

func newSecondHist(seconds int) *secondHist {
	return &secondHist{counts: make([]atomic.Uint32, seconds*secondBuckets)}
}

func (h *secondHist) record(second int, us int64) {
	h.counts[second*secondBuckets+bucketOf(us)].Add(1)
}

// plain is the counts of the first seconds as plain data, for the part.
func (h *secondHist) plain(seconds int) []uint32 {
	out := make([]uint32, seconds*secondBuckets)
	for i := range out {
		out[i] = h.counts[i].Load()
	}
	return out
}

// bucketOf is the bucket of a latency of us microseconds: us itself below
// 8, else 8 per power of two by the three bits after the leading one.
func bucketOf(us int64) int {
	if us < 8 {
		return int(max(us, 0))
	}
	n := bits.Len64(uint64(us)) // 4 or more
	sub := int(us>>(n-4)) & 7
	return min(8*(n-3)+sub, secondBuckets-1)
}

// bucketMiddle is the middle of bucket b, in microseconds.
func bucketMiddle(b int) float64 {
	if b < 8 {
		return float64(b)
	}
	n, sub := b/8+3, b%8
	low := int64(8+sub) << (n - 4)
	width := int64(1) << (n - 4)
	return float64(low) + float64(width-1)/2
}

// perSecondLatency reads each second's percentiles from counts (a
// secondHist's, or parts' added together); a second with no statement
// completed is all zeros.
func perSecondLatency(counts []uint32) []result.SecondLatency {
	seconds := len(counts) / secondBuckets
	out := make([]result.SecondLatency, seconds)
	for s := range seconds {
		row := counts[s*secondBuckets : (s+1)*secondBuckets]
		var total uint64
		for _, n := range row {
			total += uint64(n)
		}
		if total == 0 {
			continue
		}
		at := func(q float64) float64 {
			// The rank of the q-quantile, as HdrHistogram counts it.
			rank := uint64(q*float64(total) + 0.5)
			rank = max(rank, 1)
			var cum uint64
			for b, n := range row {
				cum += uint64(n)
				if cum >= rank {
					return bucketMiddle(b) / 1000
				}
			}
			return 0
		}
		out[s] = result.SecondLatency{Count: int64(total), P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: at(1)}
	}
	return out
}

// addCounts adds b to a, element by element, a growing to b's length.
func addCounts(a, b []uint32) []uint32 {
	if len(b) > len(a) {
		a = append(a, make([]uint32, len(b)-len(a))...)
	}
	for i, n := range b {
		a[i] += n
	}
	return a
}
