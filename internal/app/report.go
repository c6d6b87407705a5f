package app

import (
	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/result"
)

// Gate fails a finished experiment whose observers exceed the limits it
// was given (analysis.Limits.Gate); err, when the experiment failed.
func (c Experiment) Gate(sum *result.Summary, err error) error {
	if err != nil || sum == nil {
		return err
	}
	return c.limits().Gate(*sum)
}

// limits are the gates of c's flags.
func (c Experiment) limits() analysis.Limits {
	return analysis.Limits{Overhead: c.MaxOverhead, Counted: c.MaxCountedOverhead, Latency: c.MaxLatencyAdded}
}
