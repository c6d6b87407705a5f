package servertest

import (
	"context"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/engine"
)

// WaitOpener is an adapter's server as OpenWaits uses it.
type WaitOpener interface {
	OpenWaits(ctx context.Context) (engine.WaitSource, error)
}

// OpenWaits opens s's wait source, closed when the test ends.
func OpenWaits(t testing.TB, ctx context.Context, s WaitOpener) engine.WaitSource {
	t.Helper()
	src, err := s.OpenWaits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close(context.Background()) })
	return src
}

// SampleWaits samples src's waits as a run does, every 10 ms for a
// second: 100 ticks due, of which a loaded machine delays many.
func SampleWaits(t testing.TB, ctx context.Context, src collect.WaitSource) (on, off collect.Waits) {
	t.Helper()
	ws := collect.NewWaitSampler(src, 10*time.Millisecond, true)
	ws.Start(ctx)
	time.Sleep(time.Second)
	on, off, err := ws.Stop()
	if err != nil {
		t.Fatal(err)
	}
	return on, off
}

// MostTicksSeeLock fails t unless on has the 20 ticks that tell a sampler
// that works and at least half of them saw one of the lock waits named.
func MostTicksSeeLock(t testing.TB, on collect.Waits, lockWaits ...string) {
	t.Helper()
	var lock int64
	for _, w := range lockWaits {
		lock += on.Counts[w]
	}
	if on.Ticks < 20 || lock < on.Ticks/2 {
		t.Fatalf("%d ticks, lock samples %d, want most ticks to see the lock: %v", on.Ticks, lock, on.Counts)
	}
}
