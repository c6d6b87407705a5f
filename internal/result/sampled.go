package result

import "math"

// sampledZ is the normal quantile of SampledInterval: 99.9% two-sided,
// wide enough that a catalog's tests and a user's runs of many
// conditions rarely see a sample that is right called wrong.
const sampledZ = 3.29

// SampledInterval is, for an observer that records a sample of the
// statements (SampleRate), the counts a sample of that rate records 999
// times in 1,000 among Executed statements: the binomial count's normal
// approximation, widened by one either side for its discreteness. ok is
// false where the observer records every statement.
func (e *Events) SampledInterval() (lo, hi int64, ok bool) {
	if e == nil || e.SampleRate <= 0 || e.Volume {
		return 0, 0, false
	}
	n, p := float64(e.Executed), e.SampleRate
	mean, sd := n*p, math.Sqrt(n*p*(1-p))
	lo = max(0, int64(math.Floor(mean-sampledZ*sd))-1)
	hi = min(e.Executed, int64(math.Ceil(mean+sampledZ*sd))+1)
	return lo, hi, true
}

// OutsideSample says whether a sampling observer's count lies outside
// its SampledInterval, which it returns; false for an observer that
// records every statement.
func (e *Events) OutsideSample() (lo, hi int64, outside bool) {
	lo, hi, ok := e.SampledInterval()
	return lo, hi, ok && (e.Recorded < lo || e.Recorded > hi)
}
