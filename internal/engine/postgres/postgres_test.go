package postgres_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/pgbench"
	"github.com/obsbench/obsbench/internal/workload"
)

// newServer starts a managed server with the credit dataset loaded.
func newServer(t *testing.T) *postgres.Server {
	t.Helper()
	s, _ := newManaged(t)
	return s
}

// newManaged is newServer that also returns the managed server, which
// provides observers' sinks.
func newManaged(t *testing.T) (*postgres.Server, *postgres.Instance) {
	t.Helper()
	ctx := context.Background()
	pg := servertest.Postgres(t)
	dsn := pg.DSN("obsbench")
	if err := postgres.CreateDatabase(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	s := postgres.New(dsn, postgres.Options{Restart: pg.Restart, Host: pg})
	ds, _ := dataset.Lookup("credit")
	if err := s.Load(ctx, ds); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s, pg
}

// connect opens a connection of pgx to dsn, closed when the test ends at
// the latest.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// query runs a one-value query on s, on a connection of its own.
func query(t *testing.T, s *postgres.Server, sql string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, s.DSN())
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// Every catalog entry applies (its settings, libraries and extensions are in
// force) and reverts to exactly the settings the server had before.
func TestCatalogAppliesAndReverts(t *testing.T) {
	s, pg := newManaged(t)
	for _, o := range servertest.Catalog(t).All("postgres") {
		t.Run(o.Name, func(t *testing.T) {
			before, after := servertest.ApplyThenRevert(t, s, o, func(engine.Applied) {
				for _, name := range o.SettingNames() {
					got := query(t, s, "SELECT setting FROM pg_settings WHERE name = $1", name)
					want := strings.ReplaceAll(o.Settings[name], observer.SinkDirPlaceholder, pg.SinkDir())
					if got != want {
						t.Errorf("after Apply %s = %q; want %q", name, got, want)
					}
				}
				libs := query(t, s, "SHOW shared_preload_libraries")
				for _, l := range o.Preload {
					if !strings.Contains(libs, l) {
						t.Errorf("shared_preload_libraries = %q; want it to hold %s", libs, l)
					}
				}
				for _, e := range o.Extensions {
					if n := query(t, s, "SELECT count(*)::text FROM pg_extension WHERE extname = $1", e); n != "1" {
						t.Errorf("extension %s not created", e)
					}
				}
			})
			servertest.SettingsRestored(t, before, after)
			if len(after) != len(before) {
				t.Errorf("after Revert %d settings; want %d", len(after), len(before))
			}
			for _, e := range o.Extensions {
				if n := query(t, s, "SELECT count(*)::text FROM pg_extension WHERE extname = $1", e); n != "0" {
					t.Errorf("extension %s left behind", e)
				}
			}
		})
	}
}

// Each observer that records events recorded exactly the statements the
// driver executed: the logging collector, the stream that waits for its
// client and the statistics extension block rather than drop. The lossy
// stream drops, and the count shows it. So in each query mode of a
// pgbench script.
func TestEventsRecordedEqualExecuted(t *testing.T) {
	s := newServer(t)
	wl, _ := workload.Lookup("credit-top1")
	for _, o := range servertest.EventObservers(t, "postgres", 5) {
		if o.Sink != nil && o.Sink.Lossy {
			// On a slow machine one second of short statements fits
			// under the catalog's 1 MiB/s reader and nothing is lost;
			// a reader of 32 KiB/s falls behind at any speed.
			sink := *o.Sink
			sink.Rate = "32KiB"
			o.Sink = &sink
		}
		t.Run(o.Name, func(t *testing.T) {
			// The prepared statements of credit-top1, then a pgbench script
			// in each query mode: a simple query is logged as "statement:",
			// an extended one as "execute <unnamed>:", a prepared one as
			// "execute obsbench_N:", and each must be counted. A lossy
			// sink runs credit-top1 only: what it must show is that it
			// drops, the sink's doing whatever the query mode, and each
			// run waits seconds for its slow reader to drain.
			runs := []workload.Meta{wl}
			for _, m := range pgbench.QueryModes {
				if o.Sink != nil && o.Sink.Lossy {
					break
				}
				runs = append(runs, pgbench.SQLMeta(modeScript, "none", m))
			}
			counts := countedRuns(t, s, o, runs, o.Sink != nil && o.Sink.Lossy)
			for i, w := range runs {
				got, executed := counts[i][0], counts[i][1]
				what := w.Name
				if i > 0 {
					what = "pgbench script, --query-mode " + string(pgbench.QueryModes[i-1])
				}
				if o.Sink != nil && o.Sink.Lossy {
					if got >= executed || got == 0 {
						t.Errorf("%s: events recorded = %d of %d executed; want some, and fewer than executed (a lossy stream read slowly)", what, got, executed)
					}
					continue
				}
				if ok, want := servertest.RecordedAsItShould(o, got, executed); !ok {
					t.Errorf("%s: events recorded = %d; want %s", what, got, want)
				}
			}
		})
	}
}

// modeScript is a pgbench script with variables in a select list and a
// \gset, on no table: it runs in every query mode.
var modeScript = func() *pgbench.Script {
	s, err := pgbench.ParseScript("modes.sql", "\\set a random(1, 1000)\nSELECT :a::int + 1;\nSELECT 'row ' || :a::text AS r \\gset\n")
	if err != nil {
		panic(err)
	}
	return s
}()

// countedRuns applies o once, runs each of ws with 4 sessions, counting
// o's events over each run as an experiment's run does (StartEvents before
// it, Count after), and reverts o: for each run the events recorded and
// the statements executed. Whether every event is counted does not depend
// on how many there are: a run is 80 ms, 600 ms when the sink is lossy
// (long enough to fill what its slow reader drains), and longer when it
// executed nothing, or, lossy, lost nothing: on a starved machine 336
// statements in 500 ms logged less than the sink's pipe holds. A lossy
// sink that never drops still fails, after runs of 2 and 8 s.
func countedRuns(t *testing.T, s *postgres.Server, o observer.Observer, ws []workload.Meta, lossy bool) [][2]int64 {
	t.Helper()
	ctx := context.Background()
	a, revert := servertest.Apply(t, s, o)
	defer revert()
	var out [][2]int64
	for _, w := range ws {
		cfg := driver.Config{Clients: 4, Warmup: 20 * time.Millisecond, Duration: 60 * time.Millisecond}
		most := time.Second
		if lossy {
			cfg.Warmup, cfg.Duration, most = 100*time.Millisecond, 500*time.Millisecond, 5*time.Second
		}
		var got int64
		var res driver.Result
		// On a starved machine a run this short can end before the
		// sessions' first statement: it is run again, longer.
		for ; ; cfg.Duration *= 4 {
			ev := servertest.StartEvents(t, a, w.Tag)
			res = servertest.RunWorkload(t, s.Dial, cfg, w)
			var err error
			if got, err = ev.Count(ctx); err != nil {
				t.Fatalf("Count: %v", err)
			}
			if res.Executed > 0 && !(lossy && got >= res.Executed) || cfg.Duration > most {
				break
			}
		}
		out = append(out, [2]int64{got, res.Executed})
	}
	return out
}

func TestMissingLibraryNamesPackage(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	o := observer.Observer{Name: "needs-nothing-real", Engine: "postgres", Description: "x",
		Preload:  []string{"obsbench_no_such_lib"},
		Requires: []observer.Requirement{{Library: "obsbench_no_such_lib", Package: "postgresql-{{major}}-nothing"}}}
	err := s.Check(ctx, o)
	var missing *engine.MissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "apt-get install postgresql-15-nothing") {
		t.Errorf("Check = %v; want a MissingError naming postgresql-15-nothing", err)
	}
	before := query(t, s, "SHOW shared_preload_libraries")
	if _, err := s.Apply(ctx, o); !errors.As(err, &missing) {
		t.Errorf("Apply = %v; want a MissingError", err)
	}
	if after := query(t, s, "SHOW shared_preload_libraries"); after != before {
		t.Errorf("shared_preload_libraries = %q after a refused Apply; want %q", after, before)
	}
}

// A server obsbench may not restart refuses observers that need a restart,
// before changing anything, but takes those that reload.
// ApplyRestarts says which observers' Apply restarts the server (the
// runner leaves out its own restart before them): a library to preload
// does, until it is in force; a reload-only setting and the baseline do
// not; a server obsbench may not restart never does.
func TestApplyRestarts(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	cat, _ := observer.Builtin()
	pgss, _ := cat.Lookup("postgres", "pg-stat-statements")
	logs := observer.Observer{Name: "log-all", Engine: "postgres", Description: "x", Settings: map[string]string{"log_statement": "all"}}
	for _, tt := range []struct {
		o    observer.Observer
		want bool
	}{{pgss, true}, {logs, false}, {observer.Observer{Name: observer.Baseline}, false}} {
		if got, err := s.ApplyRestarts(ctx, tt.o); err != nil || got != tt.want {
			t.Errorf("ApplyRestarts(%s) = %v, %v; want %v", tt.o.Name, got, err, tt.want)
		}
	}
	a, err := s.Apply(ctx, pgss)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.ApplyRestarts(ctx, pgss); err != nil || got {
		t.Errorf("ApplyRestarts(pg-stat-statements) with it in force = %v, %v; want false", got, err)
	}
	if err := a.Revert(ctx); err != nil {
		t.Fatal(err)
	}
	unmanaged := postgres.New(s.DSN(), postgres.Options{})
	if got, err := unmanaged.ApplyRestarts(ctx, pgss); err != nil || got {
		t.Errorf("ApplyRestarts(pg-stat-statements) without a restarter = %v, %v; want false", got, err)
	}
}

func TestRestartRefusedWithoutRestarter(t *testing.T) {
	ctx := context.Background()
	managed := newServer(t)
	s := postgres.New(managed.DSN(), postgres.Options{})
	cat, _ := observer.Builtin()
	o, _ := cat.Lookup("postgres", "pg-stat-statements")
	var re *engine.RestartError
	if err := s.Check(ctx, o); !errors.As(err, &re) {
		t.Errorf("Check(pg-stat-statements) = %v; want a RestartError", err)
	}
	if _, err := s.Apply(ctx, o); !errors.As(err, &re) {
		t.Errorf("Apply(pg-stat-statements) = %v; want a RestartError", err)
	}
	if n := query(t, s, "SELECT count(*)::text FROM pg_file_settings WHERE sourcefile LIKE '%auto.conf'"); n != "0" {
		t.Errorf("postgresql.auto.conf has %s entries after a refused Apply; want 0", n)
	}
	reload := observer.Observer{Name: "log-all-no-collector", Engine: "postgres", Description: "x",
		Settings: map[string]string{"log_statement": "all"}}
	a, err := s.Apply(ctx, reload)
	if err != nil {
		t.Fatalf("Apply(reload-only) = %v", err)
	}
	if got := query(t, s, "SHOW log_statement"); got != "all" {
		t.Errorf("log_statement = %q after Apply; want all", got)
	}
	if err := a.Revert(ctx); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SHOW log_statement"); got != "none" {
		t.Errorf("log_statement = %q after Revert; want none", got)
	}
}

func TestLoadVerifiesAndNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	ds, _ := dataset.Lookup("credit")
	for _, tb := range ds.Tables {
		if got := query(t, s, "SELECT count(*)::text FROM "+tb.Name); got != strconv.Itoa(tb.Rows) {
			t.Errorf("%s has %s rows; want %d", tb.Name, got, tb.Rows)
		}
	}
	if err := s.Load(ctx, ds); err != nil {
		t.Errorf("second Load = %v; want nil (already loaded)", err)
	}
	conn := connect(t, s.DSN())
	if _, err := conn.Exec(ctx, "DELETE FROM payment WHERE payment_no = 1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(ctx, ds); err == nil || !strings.Contains(err.Error(), "payment has 15553 rows, want 15554") {
		t.Errorf("Verify = %v; want a row-count error", err)
	}
	if err := s.Load(ctx, ds); err == nil || !strings.Contains(err.Error(), "does not hold dataset credit") {
		t.Errorf("Load over other contents = %v; want a refusal", err)
	}
}

// Split puts what needs a restart in the held part and what a reload
// switches in the other, with the event counter.
func TestSplit(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	cat, _ := observer.Builtin()
	tests := []struct {
		name           string
		held, switched []string
	}{
		{"log-statements-file", []string{"logging_collector"}, []string{"log_destination", "log_statement"}},
		{"pgaudit-read", []string{"logging_collector"}, []string{"log_destination", "pgaudit.log"}},
		{"pg-wait-sampling", nil, nil},
		// Off is track=none, held; on is track=all, switched.
		{"pg-stat-statements", []string{"pg_stat_statements.track"}, []string{"pg_stat_statements.track"}},
	}
	for _, tt := range tests {
		o, _ := cat.Lookup("postgres", tt.name)
		held, sw, err := s.Split(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := held.SettingNames(); strings.Join(got, ",") != strings.Join(tt.held, ",") {
			t.Errorf("Split(%s) held %v; want %v", tt.name, got, tt.held)
		}
		if got := sw.SettingNames(); strings.Join(got, ",") != strings.Join(tt.switched, ",") {
			t.Errorf("Split(%s) switched %v; want %v", tt.name, got, tt.switched)
		}
		for n, off := range o.AlternateOff {
			if held.Settings[n] != off || sw.Settings[n] != o.Settings[n] {
				t.Errorf("Split(%s) %s: held %q, switched %q; want off value %q held, %q switched", tt.name, n, held.Settings[n], sw.Settings[n], off, o.Settings[n])
			}
		}
		if strings.Join(held.Preload, ",") != strings.Join(o.Preload, ",") || sw.Events != o.Events || len(sw.Preload) > 0 {
			t.Errorf("Split(%s): preload held %v switched %v, events %v; want preload held, events switched", tt.name, held.Preload, sw.Preload, sw.Events)
		}
	}
}

// On an external server the dataset goes into a schema of obsbench's own:
// the user's tables of the same names are not touched, and a schema of
// that name that obsbench did not create is refused.
func TestDatasetInItsOwnSchema(t *testing.T) {
	ctx := context.Background()
	pg := servertest.Postgres(t)
	dsn := pg.DSN("userdb")
	if err := postgres.CreateDatabase(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	user := postgres.New(dsn, postgres.Options{})
	execSQL(t, dsn, "CREATE TABLE member (x int)", "INSERT INTO member VALUES (42)")
	s := postgres.New(dsn, postgres.Options{Schema: "obsbench"})
	ds, _ := dataset.Lookup("credit")
	if err := s.Load(ctx, ds); err != nil {
		t.Fatalf("Load into schema: %v", err)
	}
	if err := s.Verify(ctx, ds); err != nil {
		t.Fatal(err)
	}
	if got := query(t, user, "SELECT string_agg(x::text, ',') FROM public.member"); got != "42" {
		t.Errorf("the user's table member holds %q after Load; want it untouched (42)", got)
	}
	if err := s.Load(ctx, ds); err != nil {
		t.Errorf("second Load (dataset already there): %v", err)
	}
	other := postgres.New(dsn, postgres.Options{Schema: "users_own"})
	execSQL(t, dsn, "CREATE SCHEMA users_own")
	if err := other.Load(ctx, ds); err == nil || !strings.Contains(err.Error(), "was not created by obsbench") {
		t.Errorf("Load into a schema obsbench did not create = %v; want a refusal", err)
	}
}

func execSQL(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, dsn)
	defer conn.Close(ctx)
	for _, st := range stmts {
		if _, err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

// What observers -v says without a server (StaticSplit, from the
// documented contexts) is what Split says on a real one (pg_settings),
// for every observer of the catalog.
func TestStaticSplit(t *testing.T) {
	servertest.SplitMatchesStatic(t, newServer(t), "postgres", postgres.Engine{}.StaticSplit)
}
