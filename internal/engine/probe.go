package engine

import (
	"context"

	"github.com/obsbench/obsbench/internal/collect"
)

// Prober is a Target whose engine reports waits and activity counters.
type Prober interface {
	// OpenWaits opens a wait source on a connection of its own.
	OpenWaits(ctx context.Context) (WaitSource, error)
	// Counters returns cumulative activity counters by name.
	Counters(ctx context.Context) (map[string]float64, error)
	// WaitProfile returns the engine's own cumulative wait profile (a
	// wait-sampling extension), nil when it has none.
	WaitProfile(ctx context.Context) (map[string]int64, error)
}

// WaitProfileDiffer is a Prober that diffs its own wait profiles: an
// engine whose statistics can be cleared while a window runs says so by
// an error, rather than let the clear pass for a window without waits.
type WaitProfileDiffer interface {
	DiffWaitProfile(before, after map[string]int64) (map[string]int64, error)
}

// EngineWaitGrowth is what the engine's wait profile grew by from before
// to after: its own diff (WaitProfileDiffer), else each wait's growth
// above zero.
func EngineWaitGrowth(p Prober, before, after map[string]int64) (map[string]int64, error) {
	if d, ok := p.(WaitProfileDiffer); ok {
		return d.DiffWaitProfile(before, after)
	}
	out := map[string]int64{}
	for k, v1 := range after {
		if d := v1 - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out, nil
}

// WaitSource is a collect.WaitSource that must be closed.
type WaitSource interface {
	collect.WaitSource
	Close(ctx context.Context) error
	// BackendPID is the server process serving the source, 0 if unknown.
	BackendPID() int
}

// GaugePrefix marks a counter that is a level, not a cumulative count (a
// replica's lag): it is recorded as its value at the window's end, under
// its name without the prefix, instead of as a rate.
const GaugePrefix = "gauge_"

// Streamed is a target whose observers may send their events to a live
// stream that obsbench reads (a managed PostgreSQL's stderr pipe).
type Streamed interface {
	// StreamBytes is how many bytes the stream's reader has received.
	StreamBytes() int64
}
