package mariadb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/server/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// dssTimes is how many times the test runs each query of dss-mix alone:
// a rough mean latency at a few seconds' cost for the slowest.
const dssTimes = 3

// The dss dataset loads exactly (every order's total is the sum of its
// lines; the sum of all totals is the generator's), dss-mix's stored
// functions can be created twice, every query of the mix runs with the
// same text as on PostgreSQL (its mean latency alone is logged: the table
// in internal/workload/dss.go), and the mix runs on 2 sessions without
// error.
func TestDSSMix(t *testing.T) {
	ctx := context.Background()
	m := servertest.MariaDB(t, nil)
	s, err := mariadb.New(m.DSN("obsbench"), mariadb.Options{Password: m.Password()})
	if err != nil {
		t.Fatal(err)
	}
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
	if n := query(t, m, "SELECT COUNT(*) FROM obsbench.dss_orders o WHERE o.total <> (SELECT SUM(l.quantity * l.price) FROM obsbench.dss_order_line l WHERE l.order_id = o.order_id)"); n != "0" {
		t.Errorf("%s orders' totals differ from the sum of their lines", n)
	}
	if got, want := query(t, m, "SELECT SUM(total) FROM obsbench.dss_orders"), dssTotal(ds); got != want {
		t.Errorf("sum of order totals = %s; the generator's is %s", got, want)
	}
	for range 2 {
		if err := s.Setup(ctx, wl.SetupIn(workload.MariaDB)); err != nil {
			t.Fatal(err)
		}
	}
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	for i, q := range workload.DSSWeights() {
		res, err := driver.Run(ctx, driver.Config{Clients: 1, Duration: time.Minute}, dial, workload.DSSQuery(1, i, dssTimes))
		if err != nil {
			t.Fatalf("%s: %v", q.Query, err)
		}
		if res.Executed != dssTimes {
			t.Errorf("%s ran %d times; want %d", q.Query, res.Executed, dssTimes)
		}
		t.Logf("%s (weight %d): mean %.1f ms", q.Query, q.Weight, res.Latency.Mean)
	}
	res, err := driver.Run(ctx, driver.Config{Clients: 2, Duration: 3 * time.Second}, dial, wl.New())
	if err != nil || res.Executed == 0 || res.Errors > 0 {
		t.Fatalf("mix: %d statements, %d errors, %v", res.Executed, res.Errors, err)
	}
	t.Logf("mix: %.0f statements/s, p50 %.1f ms, p99 %.0f ms", res.Throughput, res.Latency.P50, res.Latency.P99)
}

// dssTotal is the sum of d's order totals as the server prints a
// DECIMAL(12,2) sum.
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
