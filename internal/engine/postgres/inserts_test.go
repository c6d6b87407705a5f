package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// Study 4's point: the same single-int rows cost one WAL flush each when
// every insert commits, and far fewer in transactions of many rows.
func TestBatchedInsertsFlushWALLess(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	perRow := map[string]float64{}
	for _, name := range []string{"inserts-autocommit", "inserts-batched"} {
		wl, err := workload.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "inserts-batched" {
			if wl, err = wl.WithParams(map[string]int{"batch": 500}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Setup(ctx, wl.Setup); err != nil {
			t.Fatal(err)
		}
		before, err := s.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res := servertest.RunWorkload(t, s.Dial, driver.Config{Clients: 1, Duration: 2 * time.Second}, wl)
		time.Sleep(600 * time.Millisecond) // statistics are published at most every 500 ms
		after, err := s.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		flushes := after["wal_sync"] - before["wal_sync"]
		perRow[name] = flushes / float64(res.Executed)
		t.Logf("%s: %d rows, %.0f WAL flushes, %.0f commits", name, res.Executed, flushes, after["xact_commit"]-before["xact_commit"])
	}
	if perRow["inserts-autocommit"] < 0.5 {
		t.Errorf("autocommit: %.3f WAL flushes per row; want about one (each commit flushes)", perRow["inserts-autocommit"])
	}
	if perRow["inserts-batched"] > perRow["inserts-autocommit"]/10 {
		t.Errorf("batched: %.4f WAL flushes per row against autocommit's %.3f; want at most a tenth", perRow["inserts-batched"], perRow["inserts-autocommit"])
	}
}
