package capture_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/engine/postgres"
)

// A real PostgreSQL writes the same sessions to a csvlog and a stderr log
// at once, under each log_line_prefix below in turn (a rotation in the
// middle of each); the stderr log's capture, read with the prefix, must be
// the csvlog's: the same sessions, statements, parameters (multi-line ones
// too) and, where the prefix has milliseconds, times. A prefix with no
// session or process id gives the statements in the log's order as one
// session.
func TestRealPostgresStderrLogs(t *testing.T) {
	ctx := context.Background()
	pg, admin, logDir := loggingShop(ctx, t, "csvlog,stderr", nil)
	exclude := capture.Filter{ExcludeUsers: []string{"obsbench_system", "postgres"}}
	web := capture.Filter{Applications: []string{"web"}}
	for _, tt := range []struct {
		name, prefix string
		verbose      bool
		sessions     bool // the prefix tells sessions apart
		times        bool // and has milliseconds
	}{
		{name: "debian", prefix: "%m [%p] %q%u@%d ", sessions: true, times: true},
		{name: "postgres default", prefix: "%m [%p] ", sessions: true, times: true},
		{name: "pgbadger verbose", prefix: "%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ", verbose: true, sessions: true},
		{name: "every escape", prefix: "%n|%c|%-12u|%5p|%b|%x|%v|%e|%Q|%i|%r|%a|%s|%%|", sessions: true, times: true},
		{name: "no session", prefix: "%m "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			verbosity := "default"
			if tt.verbose {
				verbosity = "verbose"
			}
			reloadUntil(ctx, t, admin, pg.DSN("postgres"), []string{
				"ALTER SYSTEM SET log_line_prefix = '" + strings.ReplaceAll(tt.prefix, "'", "''") + "'",
				"ALTER SYSTEM SET log_error_verbosity = " + verbosity, "SELECT pg_reload_conf()",
			}, "log_line_prefix", tt.prefix, "")
			// Log file names have seconds: a rotation needs a new one.
			time.Sleep(1100 * time.Millisecond)
			before, _ := filepath.Glob(filepath.Join(logDir, "*"))
			if err := rotate(ctx, admin, logDir); err != nil {
				t.Fatal(err)
			}
			runPgSessions(ctx, t, pg, admin, func(turn int) error {
				if turn == 8 {
					return rotate(ctx, admin, logDir)
				}
				return nil
			})
			csvs, logs := newFiles(t, logDir, before, ".csv"), newFiles(t, logDir, before, ".log")
			if len(csvs) != 2 || len(logs) != 2 {
				t.Fatalf("new logs %q, %q; want two of each (one rotation)", csvs, logs)
			}
			prefix, err := postgres.ParsePrefix(tt.prefix)
			if err != nil {
				t.Fatal(err)
			}
			filters := []capture.Filter{exclude, web}
			if !tt.sessions {
				// No session: no user or application to filter by.
				filters = []capture.Filter{{}}
			}
			for _, f := range filters {
				_, want, wantSt := parseLogs(t, func(w *capture.Writer) *capture.Parser {
					p, err := capture.NewParser("csvlog", f, w)
					if err != nil {
						t.Fatal(err)
					}
					return p
				}, csvs)
				_, got, st := parseLogs(t, func(w *capture.Writer) *capture.Parser { return capture.ReadWith(stderrReader(prefix), f, w) }, logs)
				if !tt.sessions {
					if st.Sessions != 1 || st.Connects != 0 || st.Statements != wantSt.Statements || !slices.Equal(statements(got), statements(want)) {
						t.Errorf("stats %+v; want the csvlog's %d statements as one session, in order:\n%q\n%q", st, wantSt.Statements, statements(got), statements(want))
					}
					continue
				}
				label := func(recs []capture.Record) func(capture.Record) string {
					users := map[string]string{}
					for _, r := range recs {
						if r.Kind == capture.Connect {
							users[r.Session] = r.User + "/" + r.Database
						}
					}
					return func(r capture.Record) string { return users[r.Session] }
				}
				diff(t, show(got, label(got)), show(want, label(want)))
				if st.Statements != wantSt.Statements || st.Sessions != wantSt.Sessions || st.Connects != wantSt.Connects || st.Disconnects != wantSt.Disconnects {
					t.Errorf("stats %+v; csvlog's %+v", st, wantSt)
				}
				for i := range min(len(got), len(want)) {
					if tt.times && got[i].Offset != want[i].Offset || i > 0 && got[i].Offset < got[i-1].Offset {
						t.Errorf("record %d at %d µs; csvlog's at %d µs", i, got[i].Offset, want[i].Offset)
						break
					}
				}
			}
		})
	}
}

// newFiles are the files of dir with extension ext not in before, sorted.
func newFiles(t *testing.T, dir string, before []string, ext string) []string {
	t.Helper()
	all, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
	var out []string
	for _, f := range all {
		if !slices.Contains(before, f) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// parseLogs captures files, in order, with one parser made by newParser,
// and reads the capture back; its trailer must agree with the parser's
// counts.
func parseLogs(t *testing.T, newParser func(*capture.Writer) *capture.Parser, files []string) (capture.Header, []capture.Record, capture.Stats) {
	t.Helper()
	var buf bytes.Buffer
	w := capture.NewWriter(&buf, capture.Header{Engine: "postgres"})
	p := newParser(w)
	for _, name := range files {
		r, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Parse(context.Background(), r, filepath.Base(name))
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h, recs, tr := readAll(t, buf.Bytes())
	st := p.Stats()
	if tr.Records != int64(len(recs)) || tr.Statements != st.Statements || tr.Sessions != st.Sessions {
		t.Errorf("trailer %+v; stats %+v, %d records", tr, st, len(recs))
	}
	return h, recs, st
}

// statements are the texts of recs' statements, in order.
func statements(recs []capture.Record) []string {
	var out []string
	for _, r := range recs {
		if r.Kind == capture.Statement {
			out = append(out, r.SQL+showParams(r.Params))
		}
	}
	return out
}

// stderrReader reads a stderr log whose lines begin with prefix.
func stderrReader(prefix *postgres.Prefix) *postgres.LogReader {
	r, err := postgres.NewLogReader("stderr", prefix)
	if err != nil {
		panic(err) // stderr is PostgreSQL's
	}
	return r
}
