package capture_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// captureSettings make a server log what a capture needs.
var captureSettings = map[string]string{
	"logging_collector": "on", "log_destination": "csvlog", "log_statement": "all",
	"log_connections": "on", "log_disconnections": "on",
	"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track": "all",
}

const tag = "obsbench-replay-test"

// knownSessions runs a known set of sessions on pg: session k runs
// 20+10k statements, ad hoc and prepared with parameters (NULL, a comma,
// a quote and a newline among them), one of which fails. It returns each
// session's statements as the server ran them, in order.
func knownSessions(t *testing.T, s *postgres.Server) [][]string {
	t.Helper()
	ctx := context.Background()
	var want [][]string
	for k := range 3 {
		sess, err := s.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ran []string
		for i := range 20 + 10*k {
			var sql string
			switch {
			case i%4 == 3:
				sql = fmt.Sprintf("SELECT %d AS k, $1::text AS v /* %s */", k, tag)
				st, err := sess.Prepare(ctx, sql)
				if err != nil {
					t.Fatal(err)
				}
				var arg any = fmt.Sprintf("it's %d,\n%d", k, i)
				if i%8 == 7 {
					arg = nil
				}
				if err := st.Exec(ctx, arg); err != nil {
					t.Fatal(err)
				}
			case i == 5:
				sql = fmt.Sprintf("SELECT no_such_column FROM pg_class /* %s */", tag)
				if err := sess.ExecSQL(ctx, sql); err == nil {
					t.Fatal("a bad statement ran")
				}
			default:
				sql = fmt.Sprintf("SELECT %d, %d, 'x' /* %s */", k, i, tag)
				if err := sess.ExecSQL(ctx, sql); err != nil {
					t.Fatal(err)
				}
			}
			ran = append(ran, sql)
		}
		sess.Close(ctx)
		want = append(want, ran)
	}
	return want
}

// captureLog turns pg's csvlog files into a capture, keeping the driver
// sessions only.
func captureLog(t *testing.T, pg *postgres.Instance) *bytes.Buffer {
	t.Helper()
	ctx := context.Background()
	// The collector writes asynchronously: give it a moment.
	time.Sleep(time.Second)
	files, _ := filepath.Glob(filepath.Join(pg.DataDir(), "log", "*.csv"))
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no csvlog files")
	}
	var buf bytes.Buffer
	w := capture.NewWriter(&buf, capture.Header{Engine: "postgres", Source: "csvlog", Tag: tag})
	p, err := capture.NewParser("csvlog", capture.Filter{Applications: []string{"obsbench-driver"}}, w)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Parse(ctx, r, f)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func load(t *testing.T, buf *bytes.Buffer) *capture.Script {
	t.Helper()
	r, err := capture.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := capture.ReadScript(r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sessionsOf(s *capture.Script) [][]string {
	var out [][]string
	for _, sess := range s.Sessions {
		var sqls []string
		for _, st := range sess.Steps {
			sqls = append(sqls, st.SQL)
		}
		out = append(out, sqls)
	}
	return out
}

// statementCalls is what pg_stat_statements counted for the tagged
// statements: the server's own count of what ran.
func statementCalls(t *testing.T, pg *postgres.Instance) int64 {
	t.Helper()
	ctx := context.Background()
	conn := servertest.Connect(ctx, t, pg.DSN("postgres"))
	defer conn.Close(ctx)
	var n int64
	// A failed statement is not counted by pg_stat_statements.
	if err := conn.QueryRow(ctx, "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE '%"+tag+"%' AND query NOT LIKE '%pg_stat_statements%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A capture of a known set of sessions holds each session's statements in
// order; replaying it once (stress mode) makes the server run the same
// statements, in the same order per session: its own counters
// (pg_stat_statements) and a capture of the replay agree.
func TestCaptureThenReplay(t *testing.T) {
	ctx := context.Background()
	pg := servertest.PostgresWith(t, captureSettings)
	s := postgres.New(pg.DSN("postgres"), postgres.Options{})
	conn := servertest.Connect(ctx, t, pg.DSN("postgres"))
	if _, err := conn.Exec(ctx, "CREATE EXTENSION pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	want := knownSessions(t, s)
	script := load(t, captureLog(t, pg))
	if got := sessionsOf(script); !reflect.DeepEqual(got, want) {
		t.Fatalf("captured sessions:\n%q\nwant:\n%q", got, want)
	}
	total := 0
	for _, w := range want {
		total += len(w)
	}
	if script.Statements != int64(total) {
		t.Errorf("Statements = %d; want %d", script.Statements, total)
	}
	// Parameters survive: NULL stays NULL, text keeps its comma, quote
	// and newline.
	p := script.Sessions[1].Steps[3].Params
	if len(p) != 1 || p[0] != "it's 1,\n3" {
		t.Errorf("session 1 statement 4 params = %q; want [\"it's 1,\\n3\"]", p)
	}
	if p := script.Sessions[0].Steps[7].Params; len(p) != 1 || p[0] != nil {
		t.Errorf("session 0 statement 8 params = %v; want [nil]", p)
	}
	before := statementCalls(t, pg)
	ok := int64(total - len(want)) // each session has one failing statement

	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	wl := script.Meta(capture.ReplayOptions{Mode: capture.Stress, Passes: 1})
	res, err := driver.Run(ctx, driver.Config{Clients: wl.DefaultClients, Duration: time.Minute}, dial, wl.New())
	if err != nil {
		t.Fatal(err)
	}
	if res.Executed != int64(total) || res.Errors != int64(len(want)) {
		t.Errorf("replay executed %d with %d errors; want %d with %d", res.Executed, res.Errors, total, len(want))
	}
	if len(res.ErrorSamples) != 1 || !strings.Contains(res.ErrorSamples[0], "no_such_column") {
		t.Errorf("ErrorSamples = %q; want the missing column's error once", res.ErrorSamples)
	}
	if got := statementCalls(t, pg) - before; got != ok {
		t.Errorf("pg_stat_statements counted %d calls of the replayed statements; want %d", got, ok)
	}
	// The replay's own capture: the original's and the replay's sessions
	// both in the log now, the replay's last.
	again := sessionsOf(load(t, captureLog(t, pg)))
	if len(again) != 2*len(want) || !reflect.DeepEqual(sortSessions(again[len(want):]), sortSessions(want)) {
		t.Errorf("the replay's sessions as the server logged them:\n%q\nwant (in any session order):\n%q", again[len(want):], want)
	}
}

// sortSessions orders sessions by their first statement: replayed sessions
// connect in parallel.
func sortSessions(s [][]string) [][]string {
	out := append([][]string(nil), s...)
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], "\n") < strings.Join(out[j], "\n") })
	return out
}

// Sync mode keeps the captured timing: a capture whose sessions span about
// 1.5 s takes that long at speed 1 and a third of it at speed 3.
func TestSyncModeKeepsTiming(t *testing.T) {
	ctx := context.Background()
	pg := servertest.PostgresWith(t, captureSettings)
	s := postgres.New(pg.DSN("postgres"), postgres.Options{})
	sess, err := s.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := sess.ExecSQL(ctx, fmt.Sprintf("SELECT %d /* %s */", i, tag)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	sess.Close(ctx)
	script := load(t, captureLog(t, pg))
	if script.Span < 1400*time.Millisecond || script.Span > 2*time.Second {
		t.Fatalf("Span = %v; want about 1.5 s", script.Span)
	}
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	for _, speed := range []float64{1, 3} {
		wl := script.Meta(capture.ReplayOptions{Mode: capture.Sync, Speed: speed, Passes: 1})
		began := time.Now()
		res, err := driver.Run(ctx, driver.Config{Clients: 1, Duration: time.Minute}, dial, wl.New())
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(began)
		// From the first statement to the last: the span less the
		// capture's start before its first statement.
		want := time.Duration(float64(script.Span-script.Sessions[0].Steps[0].At) / speed)
		if took < want || took > want+700*time.Millisecond {
			t.Errorf("speed %v: replay took %v; want about %v", speed, took, want)
		}
		// Three of the four statements follow a captured wait of 500 ms
		// / speed: counted in their latency, it would be the median's.
		// The median, not the maximum: one statement stalled by a loaded
		// machine is not a wait.
		if wait := 500 / speed; res.Latency.P50 >= wait/2 {
			t.Errorf("speed %v: median latency %.0f ms (max %.0f); want the waits between statements (%.0f ms) kept out of it", speed, res.Latency.P50, res.Latency.Max, wait)
		}
	}
	// At speed 0.01 the second statement is due some 50 s in: a 2 s run
	// ends at its window, not when the waiting session wakes.
	wl := script.Meta(capture.ReplayOptions{Mode: capture.Sync, Speed: 0.01})
	began := time.Now()
	res, err := driver.Run(ctx, driver.Config{Clients: 1, Duration: 2 * time.Second}, dial, wl.New())
	if err != nil {
		t.Fatal(err)
	}
	// The first statement normally completes in the window; on a loaded
	// machine its connection may take the window (executed 0). What is
	// tested is that the run ends at the window, not at the second
	// statement's time.
	if took := time.Since(began); took > 5*time.Second || res.Executed > 1 {
		t.Errorf("slow sync replay: took %v, executed %d; want it to end at its 2 s window after at most the first statement", took, res.Executed)
	}
}
