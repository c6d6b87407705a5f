package mariadb_test

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/pgbench"
	"github.com/obsbench/obsbench/internal/workload"
)

// newManaged starts a managed MariaDB with the credit dataset loaded, and
// returns the engine on it with restarts and sinks.
func newManaged(t *testing.T) (*mariadb.Server, *mariadb.Instance) {
	t.Helper()
	m := servertest.MariaDB(t, nil)
	s, err := mariadb.New(m.DSN("obsbench"), mariadb.Options{Startup: m, Host: m, Password: m.Password()})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := dataset.Lookup("credit")
	if err := s.Load(context.Background(), d); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s, m
}

// query runs a one-value query on the server.
func query(t *testing.T, m *mariadb.Instance, q string, args ...any) string {
	t.Helper()
	db := servertest.OpenMariaDB(t, m, "")
	// Closed at once: an open session keeps an uninstalled plugin in use.
	defer db.Close()
	var v sql.NullString
	if err := db.QueryRow(q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v.String
}

func TestCatalogAppliesAndReverts(t *testing.T) {
	s, m := newManaged(t)
	all := servertest.Catalog(t).All("mariadb")
	if len(all) < 10 {
		t.Fatalf("%d mariadb observers in the catalog; want at least 10", len(all))
	}
	for _, o := range all {
		t.Run(o.Name, func(t *testing.T) {
			before, after := servertest.ApplyThenRevert(t, s, o, func(engine.Applied) {
				for _, name := range o.SettingNames() {
					got := query(t, m, "SELECT @@GLOBAL."+name)
					want := strings.ReplaceAll(o.Settings[name], observer.SinkDirPlaceholder, m.SinkDir())
					if !sameSetting(got, want) {
						t.Errorf("after Apply %s = %q; want %q", name, got, want)
					}
				}
				for _, p := range o.Extensions {
					if n := query(t, m, "SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_LIBRARY = ?", p+".so"); n != "1" {
						t.Errorf("plugin %s not installed", p)
					}
				}
			})
			servertest.SettingsRestored(t, before, after)
			for k, v := range after {
				if _, ok := before[k]; !ok {
					t.Errorf("after Revert %s = %q is new", k, v)
				}
			}
			for _, p := range o.Extensions {
				if n := query(t, m, "SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_LIBRARY = ?", p+".so"); n != "0" {
					t.Errorf("plugin %s left installed", p)
				}
			}
		})
	}
}

// sameSetting compares a variable's value with a catalog value: booleans
// read back as 1/0 or ON/OFF, numbers with decimals.
func sameSetting(got, want string) bool {
	if strings.EqualFold(got, want) || map[string]string{"1": "ON", "0": "OFF"}[got] == want {
		return true
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && g == w
}

// modeScript is a pgbench script with a variable in a select list and a
// \gset, on no table: it runs in simple and prepared mode.
var modeScript = func() *pgbench.Script {
	s, err := pgbench.ParseScript("modes.sql", "\\set a random(1, 1000)\nSELECT :a + 1;\nSELECT :a * 2 AS r \\gset\n")
	if err != nil {
		panic(err)
	}
	return s
}()

func TestEventsRecordedEqualExecuted(t *testing.T) {
	s, _ := newManaged(t)
	wl, _ := workload.Lookup("credit-top1")
	for _, o := range servertest.EventObservers(t, "mariadb", 6) {
		t.Run(o.Name, func(t *testing.T) {
			// credit-top1's prepared statements, then a pgbench script sent
			// as text (COM_QUERY, --query-mode simple) and prepared
			// (COM_STMT_EXECUTE): each must be counted.
			runs := []workload.Meta{wl, pgbench.SQLMeta(modeScript, "none", pgbench.Simple), pgbench.SQLMeta(modeScript, "none", pgbench.Prepared)}
			for i, w := range runs {
				what := []string{wl.Name, "pgbench script, --query-mode simple", "pgbench script, --query-mode prepared"}[i]
				if o.Events.PreparedOnly && w.TextStatements {
					continue // not counted: the experiment says why (startEvents)
				}
				res, got, lost := runCounted(t, s, o, w, 100*time.Millisecond)
				if res.Executed == 0 {
					// A loaded machine can hold a slow sink's writes past
					// the short window: a run of nothing checks nothing.
					t.Logf("%s: no statement completed in 100ms; again for 1s", what)
					res, got, lost = runCounted(t, s, o, w, time.Second)
				}
				if lost > 0 {
					t.Errorf("%s: the engine lost %d events", what, lost)
				}
				if strings.Contains(o.Name, "history") {
					// A ring buffer of 10,000 events holds the newest: the
					// workload's, and the sessions' Quit events.
					if got > 10000 || got < min(res.Executed, 10000-10) {
						t.Errorf("%s: events in the ring = %d; want up to 10,000 and all but the sessions' quits of %d executed", what, got, res.Executed)
					}
					continue
				}
				if ok, want := servertest.RecordedAsItShould(o, got, res.Executed); !ok {
					t.Errorf("%s: events recorded = %d; want %s", what, got, want)
				}
			}
		})
	}
}

// runCounted applies o, runs the workload for d with 4 sessions, counts
// o's events and the engine's lost events (-1: it has no counter), and
// reverts it. Whether every event is counted does not depend on how many
// there are, so the exactness tests run briefly; the tests of losses run
// long enough to overflow what they fill.
func runCounted(t *testing.T, s *mariadb.Server, o observer.Observer, wl workload.Meta, d time.Duration) (res driver.Result, got, lost int64) {
	t.Helper()
	ctx := context.Background()
	a, revert := servertest.Apply(t, s, o)
	defer revert()
	ev := servertest.StartEvents(t, a, wl.Tag)
	res = servertest.RunWorkload(t, s.Dial, driver.Config{Clients: 4, Warmup: 100 * time.Millisecond, Duration: d}, wl)
	got, err := ev.Count(ctx)
	if err != nil {
		t.Fatalf("Count: %v", err)
	}
	if o.Events.Source == "sql" && o.Events.Mark == "" && got != res.Executed {
		logLateCount(t, s, ev, got, res)
	}
	lost, ok, err := ev.(engine.LostCounter).EngineLost(ctx)
	if err != nil {
		t.Fatalf("EngineLost: %v", err)
	}
	if !ok {
		lost = -1
	}
	return res, got, lost
}

// logLateCount says, for a cumulative SQL counter that missed statements, what
// the same counter reads two seconds later and how many prepared
// statements the server says it executed (Com_stmt_execute, since its
// start): whether the count came late or the statements were never
// counted.
func logLateCount(t *testing.T, s *mariadb.Server, ev engine.EventCounter, got int64, res driver.Result) {
	t.Helper()
	time.Sleep(2 * time.Second)
	later, err := ev.Count(context.Background())
	var executes string
	if db, err := sql.Open("mysql", s.DSN()); err == nil {
		_ = db.QueryRow("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'COM_STMT_EXECUTE'").Scan(&executes)
		db.Close()
	}
	t.Logf("counted %d of %d executed; 2s later %d (%v); the server's Com_stmt_execute since its start: %s", got, res.Executed, later, err, executes)
}

// A ring buffer far smaller than the run loses events, and the count says
// so; a full audit device makes server_audit count failed writes in its
// own lost-events counter.
func TestLostEventsReported(t *testing.T) {
	s, _ := newManaged(t)
	wl, _ := workload.Lookup("credit-top1")
	cat, _ := observer.Builtin()

	t.Run("tiny ring buffer", func(t *testing.T) {
		o, _ := cat.Lookup("mariadb", "perf-schema-statements-history")
		o.Settings = map[string]string{"performance_schema": "ON", "performance_schema_events_statements_history_long_size": "100"}
		res, got, _ := runCounted(t, s, o, wl, time.Second)
		if got > 100 || got < 90 || res.Executed <= 1000 {
			t.Errorf("ring of 100 holds %d events of %d executed; want 100 of over 1,000 (the rest lost)", got, res.Executed)
		}
	})
	t.Run("audit device full", func(t *testing.T) {
		o, _ := cat.Lookup("mariadb", "server-audit-file")
		o.Sink = &observer.Sink{Kind: observer.SinkSlowDir, WriteDelay: "1us", Capacity: "64KiB"}
		o.Settings["server_audit_file_path"] = observer.SinkDirPlaceholder + "/audit.log"
		res, got, lost := runCounted(t, s, o, wl, time.Second)
		if lost <= 0 || got >= res.Executed {
			t.Errorf("audit on a full 64 KiB device: %d recorded of %d executed, Server_audit_writes_failed grew by %d; want records lost and counted", got, res.Executed, lost)
		}
		t.Logf("%d recorded of %d executed; Server_audit_writes_failed +%d", got, res.Executed, lost)
	})
}

func TestSplitAndRestartRefused(t *testing.T) {
	ctx := context.Background()
	s, m := newManaged(t)
	cat, _ := observer.Builtin()
	for name, wantSwitched := range map[string]bool{
		"general-log-file": true, "server-audit-file": true, "perf-schema-statements-history": true,
		"slow-log-all": false, "perf-schema": false,
	} {
		o, _ := cat.Lookup("mariadb", name)
		_, sw, err := s.Split(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(sw.Settings) > 0 || len(sw.EnableSQL) > 0; got != wantSwitched {
			t.Errorf("%s: switchable = %v; want %v (switched: %v)", name, got, wantSwitched, sw.Settings)
		}
	}
	// The same server as an external one: no restarts, no sinks.
	ext, err := mariadb.New(m.DSN("obsbench"), mariadb.Options{Password: m.Password()})
	if err != nil {
		t.Fatal(err)
	}
	o, _ := cat.Lookup("mariadb", "perf-schema")
	var re *engine.RestartError
	if err := ext.Check(ctx, o); !errors.As(err, &re) {
		t.Errorf("Check(perf-schema) on an external server = %v; want a RestartError", err)
	}
	o, _ = cat.Lookup("mariadb", "general-log-file-slow")
	var se *engine.SinkError
	if err := ext.Check(ctx, o); !errors.As(err, &se) {
		t.Errorf("Check(general-log-file-slow) on an external server = %v; want a SinkError", err)
	}
}

// What observers -v says without a server (StaticSplit, from the
// documented scopes) is what Split says on a real one
// (information_schema.SYSTEM_VARIABLES), for every observer of the
// catalog.
func TestStaticSplit(t *testing.T) {
	s, _ := newManaged(t)
	servertest.SplitMatchesStatic(t, s, "mariadb", mariadb.Engine{}.StaticSplit)
}
