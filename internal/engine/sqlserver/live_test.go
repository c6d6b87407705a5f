package sqlserver_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/engine/sqlserver"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/workload"
)

// The engine against a live SQL Server. No SQL Server runs on this
// machine, so CI here never runs these: they run where
// OBSBENCH_TEST_MSSQL names a server (sqlserver://sa:secret@host:1433) on
// which obsbench may create its database obsbench and its sessions.
func liveServer(t *testing.T) *sqlserver.Server {
	t.Helper()
	dsn := os.Getenv("OBSBENCH_TEST_MSSQL")
	if dsn == "" {
		t.Skip("CI here has no SQL Server: set OBSBENCH_TEST_MSSQL=sqlserver://user:password@host:1433 to run the SQL Server integration tests")
	}
	j, err := journal.Create(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := j.Close(); err != nil {
			t.Errorf("journal: %v", err)
		}
	})
	s, err := sqlserver.New(dsn, sqlserver.Options{Database: "obsbench", Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	d, _ := dataset.Lookup("credit")
	if err := s.Load(ctx, d); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

func run(t *testing.T, s *sqlserver.Server, wl workload.Meta) driver.Result {
	t.Helper()
	res := servertest.RunWorkload(t, s.Dial, driver.Config{Clients: 4, Warmup: 200 * time.Millisecond, Duration: 2 * time.Second}, wl)
	if res.Executed == 0 {
		t.Fatal("no statement executed")
	}
	return res
}

// Every catalog observer applies, records (when it counts events) one
// event per statement with none dropped, and reverts to the server's
// settings, sessions and traces exactly as before.
func TestLiveCatalog(t *testing.T) {
	s := liveServer(t)
	ctx := context.Background()
	cat, _ := observer.Builtin()
	wl, _ := workload.Lookup("credit-top1")
	for _, o := range cat.All("sqlserver") {
		t.Run(o.Name, func(t *testing.T) {
			if err := s.Check(ctx, o); err != nil {
				if _, ok := err.(*sqlserver.NoAvailabilityGroupError); ok {
					t.Skipf("no availability group here: %v", err)
				}
				t.Fatalf("Check: %v", err)
			}
			before, after := servertest.ApplyThenRevert(t, s, o, func(a engine.Applied) {
				ev, err := a.StartEvents(ctx, wl.Tag)
				if err != nil {
					t.Fatalf("StartEvents: %v", err)
				}
				res := run(t, s, wl)
				if ev != nil {
					got, err := ev.Count(ctx)
					lost, _, lerr := ev.(engine.LostCounter).EngineLost(ctx)
					if err != nil || lerr != nil {
						t.Errorf("Count: %v, %v", err, lerr)
					} else if strings.Contains(o.Name, "lossy") {
						if got+lost < res.Executed {
							t.Errorf("recorded %d + dropped %d < executed %d", got, lost, res.Executed)
						}
					} else if got != res.Executed || lost != 0 {
						t.Errorf("recorded %d, dropped %d; want %d recorded (statements executed), none dropped", got, lost, res.Executed)
					}
				}
			})
			if !maps.Equal(before, after) {
				t.Errorf("settings after revert differ: %s", diff(before, after))
			}
		})
	}
}

// Inspect lists the server's own observers (the default trace and
// system_health, where they run) and sees a session obsbench applied.
func TestLiveInspect(t *testing.T) {
	s := liveServer(t)
	ctx := context.Background()
	servertest.ApplyForTest(t, s, "sqlserver", "xe-statements-counter")
	in, err := s.Inspect(ctx, servertest.Catalog(t).All("sqlserver"))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Observers) != 1 || in.Observers[0] != "xe-statements-counter" {
		t.Errorf("observers in force = %v; want xe-statements-counter", in.Observers)
	}
	if !strings.Contains(strings.Join(in.Sessions, "\n"), "obsbench_xe_statements_counter (running): event_counter") {
		t.Errorf("sessions = %v; want obsbench's running with its event_counter", in.Sessions)
	}
	t.Logf("%s\ntraces:\n%s\nsessions:\n%s", in.Version, strings.Join(in.Traces, "\n"), strings.Join(in.Sessions, "\n"))
}

// The collectors read real rows: counters move with the workload, waits
// are read, nothing errs.
func TestLiveCollectors(t *testing.T) {
	s := liveServer(t)
	ctx := context.Background()
	c0, err := s.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w0, err := s.WaitProfile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wl, _ := workload.Lookup("credit-top1")
	res := run(t, s, wl)
	c1, err := s.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := c1["batch_requests"] - c0["batch_requests"]; d < float64(res.Executed) {
		t.Errorf("batch requests grew by %v; want at least the %d statements executed", d, res.Executed)
	}
	if len(w0) == 0 {
		t.Error("no wait statistics")
	}
}

func diff(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s: new %q", k, v))
		}
	}
	return strings.Join(out, "; ")
}
