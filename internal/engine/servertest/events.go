package servertest

import (
	"context"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// StartEvents starts counting a's events of the statements tagged tag, as
// an experiment's run does before it, and fails t unless a counts them.
func StartEvents(t testing.TB, a engine.Applied, tag string) engine.EventCounter {
	t.Helper()
	ev, err := a.StartEvents(context.Background(), tag)
	if err != nil || ev == nil {
		t.Fatalf("StartEvents = %v, %v; want a counter", ev, err)
	}
	return ev
}

// RunUntilRotated runs wl on 4 sessions of dial, 2 s at a time, until the
// trail that ev counts spans at least 3 files (a loaded machine writes
// less per second), 5 times at most: the statements executed.
func RunUntilRotated(t testing.TB, dial driver.Dialer, wl workload.Meta, ev engine.EventCounter) (executed int64) {
	t.Helper()
	for range 5 {
		executed += RunWorkload(t, dial, driver.Config{Clients: 4, Duration: 2 * time.Second}, wl).Executed
		if files, _ := ev.(engine.FileCounter).CountFiles(context.Background()); len(files) >= 3 {
			break
		}
	}
	return executed
}

// AuditTrailComplete reports an error unless the trail that ev counts
// holds one record per statement executed, rotated into at least 2
// files, and returns its files.
func AuditTrailComplete(t testing.TB, ev engine.EventCounter, executed int64) []result.FileCount {
	t.Helper()
	files, err := ev.(engine.FileCounter).CountFiles(context.Background())
	if err != nil {
		t.Fatalf("CountFiles: %v", err)
	}
	total := result.Records(files)
	if len(files) < 2 {
		t.Errorf("records in %d file(s); want the trail rotated into at least 2", len(files))
	}
	if total != executed || total == 0 {
		t.Errorf("audit records = %d in %d files %v; want %d (statements executed)", total, len(files), files, executed)
	}
	return files
}
