package servertest

// The checks below are the same assertions every adapter's tests make on
// a real server of its own, in the adapter's SQL.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/workload"
)

// dssTimes is how many times DSSMix runs each query of dss-mix alone:
// once shows that it runs and gives its latency in the log (the measured
// latencies are bench/mix-stratified's).
const dssTimes = 1

// DSSServer is an adapter's server as DSSMix uses it.
type DSSServer interface {
	Load(ctx context.Context, d dataset.Dataset) error
	Setup(ctx context.Context, stmts []string) error
	Dial(ctx context.Context) (driver.Session, error)
}

// DSSQueries are the adapter's SQL for DSSMix's checks of the loaded data,
// each answering one value as text, and how to run one.
type DSSQueries struct {
	// Mismatched counts the orders whose total is not the sum of their
	// lines.
	Mismatched string
	// Sum is the sum of all order totals, as the server prints a
	// two-decimal sum.
	Sum   string
	Query func(t *testing.T, sql string) string
}

// DSSMix checks that the dss dataset loads exactly (every order's total
// is the sum of its lines; the sum of all totals is the generator's),
// that dss-mix's set-up can run twice, that every query of the mix runs
// (its latency alone is logged), and that the mix runs on 2 sessions
// without error.
func DSSMix(t *testing.T, s DSSServer, d workload.Dialect, q DSSQueries) {
	t.Helper()
	ctx := context.Background()
	wl, err := workload.Lookup("dss-mix")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Scaled(wl.Dataset, wl.Value("scale"))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := s.Load(ctx, ds); err != nil {
		t.Fatal(err)
	}
	t.Logf("dss loaded in %v", time.Since(began).Round(time.Millisecond))
	if n := q.Query(t, q.Mismatched); n != "0" {
		t.Errorf("%s orders' totals differ from the sum of their lines", n)
	}
	if got, want := q.Query(t, q.Sum), dssTotal(ds); got != want {
		t.Errorf("sum of order totals = %s; the generator's is %s", got, want)
	}
	for range 2 {
		if err := s.Setup(ctx, wl.SetupIn(d)); err != nil {
			t.Fatal(err)
		}
	}
	for i, dq := range workload.DSSWeights() {
		res, err := driver.Run(ctx, driver.Config{Clients: 1, Duration: time.Minute}, s.Dial, workload.DSSQuery(1, i, dssTimes))
		if err != nil {
			t.Fatalf("%s: %v", dq.Query, err)
		}
		if res.Executed != dssTimes {
			t.Errorf("%s ran %d times; want %d", dq.Query, res.Executed, dssTimes)
		}
		t.Logf("%s (weight %d): mean %.1f ms", dq.Query, dq.Weight, res.Latency.Mean)
	}
	res, err := driver.Run(ctx, driver.Config{Clients: 2, Duration: 2 * time.Second}, s.Dial, wl.New())
	if err != nil || res.Executed == 0 || res.Errors > 0 {
		t.Fatalf("mix: %d statements, %d errors, %v", res.Executed, res.Errors, err)
	}
	t.Logf("mix: %.0f statements/s, p50 %.1f ms, p99 %.0f ms", res.Throughput, res.Latency.P50, res.Latency.P99)
}

// dssTotal is the sum of d's order totals with two decimals.
func dssTotal(d dataset.Dataset) string {
	var cents int64
	for _, tb := range d.Tables {
		if tb.Name == "dss_orders" {
			for i := range tb.Rows {
				cents += int64(tb.Row(i)[4].(float64)*100 + 0.5)
			}
		}
	}
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}
