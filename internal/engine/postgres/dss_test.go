package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/server/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// The dss dataset loads, dss-mix's stored functions can be created twice,
// every query of the mix runs, and the mix runs for a while without error.
func TestDSSMix(t *testing.T) {
	ctx := context.Background()
	pg := servertest.Postgres(t)
	dsn := pg.DSN("obsbench")
	if err := postgres.CreateDatabase(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	s := postgres.New(dsn, postgres.Options{})
	wl, err := workload.Lookup("dss-mix")
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := dataset.Lookup(wl.Dataset)
	began := time.Now()
	if err := s.Load(ctx, ds); err != nil {
		t.Fatal(err)
	}
	t.Logf("dss loaded in %v", time.Since(began).Round(time.Millisecond))
	for range 2 {
		if err := s.Setup(ctx, wl.SetupFor("postgres")); err != nil {
			t.Fatal(err)
		}
	}
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	res, err := driver.Run(ctx, driver.Config{Clients: 1, Duration: time.Minute}, dial, workload.DSSEachOnce(1))
	if err != nil {
		t.Fatalf("each query once: %v", err)
	}
	if n := len(workload.DSSQueryNames()); res.Executed != int64(n) {
		t.Errorf("ran %d queries; want the %d of the mix", res.Executed, n)
	}
	t.Logf("each query once: %.1f s", res.Seconds)
	for i, name := range workload.DSSQueryNames() {
		res, err := driver.Run(ctx, driver.Config{Clients: 1, Duration: time.Minute}, dial, workload.DSSOnce(1, i+1))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.1f ms", name, res.Latency.Max)
	}
	res, err = driver.Run(ctx, driver.Config{Clients: 2, Duration: 3 * time.Second}, dial, wl.New())
	if err != nil || res.Measured == 0 {
		t.Fatalf("mix: %d statements, %v", res.Measured, err)
	}
	t.Logf("mix: %.0f statements/s, p50 %.1f ms, p99 %.0f ms", res.Throughput, res.Latency.P50, res.Latency.P99)
}
