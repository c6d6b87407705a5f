package capture_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/engine/postgres"
)

// A real PostgreSQL writes the same sessions to csvlog, jsonlog and stderr
// in English (lc_messages = C), then in German (whose catalog keeps the
// severity LOG) and Russian (whose catalog translates it too). Read with
// the language's catalog (postgres.LoadMessages), each foreign log gives
// the English log's capture: the same sessions, statements, parameters,
// connects and disconnects. Read as English, the German stderr log gives
// no statement, and its messages are recognized as German.
func TestRealPostgresForeignLogs(t *testing.T) {
	ctx := context.Background()
	const prefix = "%m [%p] %q%u@%d "
	pg, admin, logDir := loggingShop(ctx, t, "csvlog,jsonlog,stderr", map[string]string{"log_line_prefix": "'" + prefix + "'"})
	filter := capture.Filter{ExcludeUsers: []string{"obsbench_system", "postgres"}}
	p, err := postgres.ParsePrefix(prefix)
	if err != nil {
		t.Fatal(err)
	}
	// read reads one run's logs of each format with msgs.
	read := func(t *testing.T, files map[string][]string, msgs *postgres.Messages) map[string][]string {
		out := map[string][]string{}
		for _, src := range []string{"csvlog", "jsonlog", "stderr"} {
			_, recs, st := parseLogs(t, func(w *capture.Writer) *capture.Parser {
				var prefix *postgres.Prefix
				if src == "stderr" {
					prefix = p
				}
				reader, err := postgres.NewLogReader(src, prefix)
				if err != nil {
					t.Fatal(err)
				}
				reader.SetMessages(msgs)
				return capture.ReadWith(reader, filter, w)
			}, files[src])
			if st.Statements == 0 || st.Disconnects == 0 || (st.Connects == 0) == msgs.ReadsConnections() {
				t.Errorf("%s: %+v; want statements, disconnects, and connects where the language's are read", src, st)
			}
			if !msgs.ReadsConnections() {
				recs = slices.DeleteFunc(recs, func(r capture.Record) bool { return r.Kind == capture.Connect })
			}
			out[src] = show(recs, func(capture.Record) string { return "" })
		}
		return out
	}
	var english map[string][]string
	for _, lc := range []string{"C", "de_DE.UTF-8", "ru_RU.UTF-8"} {
		t.Run(lc, func(t *testing.T) {
			files := runInLanguage(ctx, t, pg.DSN("postgres"), admin, logDir, lc, func() {
				runPgSessions(ctx, t, pg, admin, func(int) error { return nil })
			})
			var msgs *postgres.Messages
			if lc != "C" {
				if msgs, err = postgres.LoadMessages(lc, postgres.CatalogDirs); err != nil {
					t.Fatal(err)
				}
			}
			got := read(t, files, msgs)
			if english == nil {
				english = got
				return
			}
			for src, recs := range got {
				want := english[src]
				if !msgs.ReadsConnections() {
					// Russian connection lines are transliterated: the
					// sessions are the same, without their connect records.
					want = slices.DeleteFunc(slices.Clone(want), func(l string) bool { return strings.HasPrefix(l, " connect ") })
				}
				diff(t, recs, want)
			}
			if lc != "de_DE.UTF-8" {
				return
			}
			_, _, st := parseLogs(t, func(w *capture.Writer) *capture.Parser {
				reader := stderrReader(p)
				parser := capture.ReadWith(reader, filter, w)
				t.Cleanup(func() {
					if langs := postgres.GuessLanguages(reader.Unrecognized(), postgres.CatalogDirs); !slices.Contains(langs, "de") {
						t.Errorf("read as English: unrecognized %q guessed as %v; want de among them", reader.Unrecognized(), langs)
					}
				})
				return parser
			}, files["stderr"])
			if st.Statements != 0 {
				t.Errorf("the German log read as English: %d statements; want none", st.Statements)
			}
		})
	}
}

// runInLanguage sets lc_messages, runs f, and returns the log files of
// each format it wrote.
func runInLanguage(ctx context.Context, t *testing.T, dsn string, admin *pgx.Conn, logDir, lc string, f func()) map[string][]string {
	t.Helper()
	reloadUntil(ctx, t, admin, dsn, []string{"ALTER SYSTEM SET lc_messages = '" + lc + "'", "SELECT pg_reload_conf()"},
		"lc_messages", lc, " (scripts/install-deps.sh generates the locales)")
	time.Sleep(1100 * time.Millisecond) // log file names have seconds
	before, _ := filepath.Glob(filepath.Join(logDir, "*"))
	if err := rotate(ctx, admin, logDir); err != nil {
		t.Fatal(err)
	}
	f()
	return map[string][]string{
		"csvlog":  newFiles(t, logDir, before, ".csv"),
		"jsonlog": newFiles(t, logDir, before, ".json"),
		"stderr":  newFiles(t, logDir, before, ".log"),
	}
}
