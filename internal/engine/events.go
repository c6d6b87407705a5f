package engine

import (
	"context"

	"github.com/obsbench/obsbench/internal/result"
)

// EventCounter counts events recorded since it was started.
type EventCounter interface {
	Count(ctx context.Context) (int64, error)
}

// LostCounter is an EventCounter that also reads the engine's own count of
// events it failed to record since it was started; ok is false when the
// observer has no such counter.
type LostCounter interface {
	EngineLost(ctx context.Context) (n int64, ok bool, err error)
}

// BufferLostCounter is an EventCounter that also reads the engine's count
// of whole buffers of events it dropped since it was started.
type BufferLostCounter interface {
	EngineLostBuffers(ctx context.Context) (n int64, ok bool, err error)
}

// BlockedCounter is an EventCounter that also reads how long the
// engine's event firing was blocked waiting for room for its events (an
// engine that blocks rather than drop), in the engine's own unit.
type BlockedCounter interface {
	EngineBlocked(ctx context.Context) (n int64, ok bool, err error)
}

// VolumeCounter is an EventCounter whose events are not one per statement:
// its count is the observer's volume, not compared with the statements.
type VolumeCounter interface {
	Volume() bool
}

// EventNoter is an EventCounter that can say what its count cannot tell
// (a ring that wrapped, deleted rollover files), after Count.
type EventNoter interface {
	EventNotes() []string
}

// FileCounter is an EventCounter over log files that can say what each
// file held: an audit trail must be shown complete across its rotations.
// CountFiles returns nil files (and no error) when the events are not in
// files; Count counts them then.
type FileCounter interface {
	CountFiles(ctx context.Context) ([]result.FileCount, error)
}
