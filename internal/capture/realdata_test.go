package capture_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// The logs in testdata/ were written by real servers (PostgreSQL 15,
// MariaDB 10.11) running the sessions below; the tests read them back and
// compare with what the sessions ran. Regenerate them with
//
//	OBSBENCH_CAPTURE_TESTDATA=1 go test ./internal/capture -run TestGenerateTestdata
//
// (it starts both servers) and review the diff: a change in what the
// servers log is a change the parsers must follow.
const regenerate = "OBSBENCH_CAPTURE_TESTDATA"

// step is one statement a test session runs.
type step struct {
	sql string
	// args, if not nil, are the statement's parameters: the extended
	// protocol on PostgreSQL, a server-side prepared statement on MariaDB.
	args []any
	// prepare names the PostgreSQL prepared statement it runs as.
	prepare string
	// fails: the server refuses it after logging it.
	fails bool
	// logged is the text the log shows, if not sql: MariaDB logs an
	// execution with its values in place.
	logged string
}

// session is a test session: who connects, and what it runs.
type session struct {
	user, app string
	// mode is the pgx protocol of statements with parameters.
	mode  pgx.QueryExecMode
	steps []step
}

func (s session) label() string { return s.user + "/" + s.app }

// pgSessions run in turns (the first steps of each, then the second...):
// app_all logs with log_statement=all, app_dur with
// log_min_duration_statement=0 (the duration forms), app_both with both
// (each statement logged once as text, then a bare duration), and
// obsbench_system is what the sampler of a managed server looks like.
var pgSessions = []session{
	{user: "app_all", app: "web", mode: pgx.QueryExecModeCacheStatement, steps: []step{
		{sql: "SELECT 1"},
		{sql: "SELECT id,\n       name\nFROM items\nWHERE id < 3"},
		{sql: "INSERT INTO items (id, name, note) VALUES ($1, $2, $3)", args: []any{1, "it's, a\nb", nil}},
		{sql: "INSERT INTO items (id, name, note) VALUES ($1, $2, $3)", args: []any{2, "", "héllo ✓"}},
		{sql: "SELECT * FROM missing_table", fails: true},
		{sql: "SELECT 1; SELECT 2"},
	}},
	{user: "app_dur", app: "batch", mode: pgx.QueryExecModeExec, steps: []step{
		{sql: "SELECT count(*) FROM items"},
		{sql: "SELECT name FROM items WHERE id = $1 AND note IS NOT DISTINCT FROM $2", args: []any{1, nil}},
		{sql: "UPDATE items SET note = $1 WHERE id = $2", args: []any{`quote ' and "double", comma`, 2}},
		{sql: "SELECT\n  count(*)\nFROM items"},
	}},
	{user: "app_both", app: "web", mode: pgx.QueryExecModeCacheStatement, steps: []step{
		{sql: "SELECT 'x'"},
		{sql: "SELECT $1::text || $2::text", args: []any{"a,b", "c'd\ne"}, prepare: "concat"},
		{sql: "SELECT $1::text || $2::text", args: []any{"''", nil}, prepare: "concat"},
	}},
	{user: "obsbench_system", app: "obsbench", steps: []step{
		{sql: "SELECT count(*) FROM pg_stat_activity"},
	}},
}

// mariaSessions run in turns as pgSessions do; the last two connect after
// a restart of the server, when thread ids begin again.
var mariaSessions = []session{
	{user: "app", app: "m1", steps: []step{
		{sql: "SELECT 1"},
		{sql: "SELECT id,\n       name\nFROM items\n\t\tWHERE id < 3"},
		{sql: "INSERT INTO items (id, name, note) VALUES (?, ?, ?)", args: []any{1, "it's, a\nb", nil},
			logged: `INSERT INTO items (id, name, note) VALUES (1, 'it\'s, a\nb', NULL)`},
		{sql: "SELECT * FROM missing_table", fails: true},
		{sql: "INSERT INTO items (id, name, note) VALUES (?, ?, ?)", args: []any{2, "", "héllo ✓"},
			logged: `INSERT INTO items (id, name, note) VALUES (2, '', 'héllo ✓')`},
	}},
	{user: "app", app: "m2", steps: []step{
		{sql: "SELECT count(*) FROM items"},
		{sql: "UPDATE items SET note = ? WHERE id = ?", args: []any{`quote ' and "double", comma`, 2},
			logged: `UPDATE items SET note = 'quote \' and \"double\", comma' WHERE id = 2`},
	}},
	{user: "obsbench_system", app: "m3", steps: []step{
		{sql: "SHOW GLOBAL STATUS LIKE 'Questions'"},
	}},
}

var mariaAfterRestart = []session{
	{user: "app", app: "m4", steps: []step{
		{sql: "SELECT name FROM items WHERE id = 1"},
		{sql: "SELECT 4"},
	}},
	{user: "app", app: "m5", steps: []step{
		{sql: "SELECT 5"},
	}},
}

// inTurns calls run for each session's first step, then each one's
// second, and so on.
func inTurns(sessions []session, run func(i int, st step) error) error {
	for k := 0; ; k++ {
		any := false
		for i, s := range sessions {
			if k < len(s.steps) {
				any = true
				if err := run(i, s.steps[k]); err != nil {
					return fmt.Errorf("%s step %d: %w", s.label(), k, err)
				}
			}
		}
		if !any {
			return nil
		}
	}
}

func TestGenerateTestdata(t *testing.T) {
	if os.Getenv(regenerate) == "" {
		t.Skipf("the logs in testdata/ are regenerated only with %s=1 (it starts real servers)", regenerate)
	}
	t.Run("postgres", generatePostgres)
	t.Run("mariadb", generateMariaDB)
}

func generatePostgres(t *testing.T) {
	ctx := context.Background()
	pg, admin, logDir := loggingShop(ctx, t, "csvlog,jsonlog", nil)
	// A new log file at the middle: sessions go on in the next file, as
	// they do across PostgreSQL's rotation.
	runPgSessions(ctx, t, pg, admin, func(turn int) error {
		if turn == 8 {
			return rotate(ctx, admin, logDir)
		}
		return nil
	})
	for _, ext := range []string{"csv", "json"} {
		files, _ := filepath.Glob(filepath.Join(logDir, "*."+ext))
		sort.Strings(files)
		if len(files) != 2 {
			t.Fatalf("%d %s files in %s; want 2 (one rotation)", len(files), ext, logDir)
		}
		for k, f := range files {
			copyFile(t, f, filepath.Join("testdata", fmt.Sprintf("postgresql-%d.%s", k+1, ext)))
		}
	}
}

// loggingShop starts a managed PostgreSQL whose logging collector writes
// its log to destinations, connections and disconnections too, with the
// extra settings, and makes setupShop's shop in it; it returns the
// server, setupShop's connection and the log directory.
func loggingShop(ctx context.Context, t *testing.T, destinations string, extra map[string]string) (*postgres.Instance, *pgx.Conn, string) {
	t.Helper()
	settings := map[string]string{
		"logging_collector": "on", "log_destination": "'" + destinations + "'",
		"log_connections": "on", "log_disconnections": "on",
	}
	maps.Copy(settings, extra)
	pg := servertest.PostgresWith(t, settings)
	return pg, setupShop(ctx, t, pg), filepath.Join(pg.DataDir(), "log")
}

// reloadUntil runs stmts (ALTER SYSTEM, then pg_reload_conf()) as admin,
// then waits until a new session at dsn shows setting at want. why is
// added to the error of a statement.
func reloadUntil(ctx context.Context, t *testing.T, admin *pgx.Conn, dsn string, stmts []string, setting, want, why string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v%s", q, err, why)
		}
	}
	if err := waitGone(ctx, func() (bool, error) {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return false, err
		}
		defer c.Close(ctx)
		var now string
		err = c.QueryRow(ctx, "SHOW "+setting).Scan(&now)
		return now == want, err
	}); err != nil {
		t.Fatal(err)
	}
}

// setupShop makes pgSessions' roles, each logging its statements its
// way, and their database; it returns the superuser's connection, whose
// own statements are not logged.
func setupShop(ctx context.Context, t *testing.T, pg *postgres.Instance) *pgx.Conn {
	t.Helper()
	admin := servertest.Connect(ctx, t, pg.DSN("postgres"))
	t.Cleanup(func() { admin.Close(ctx) })
	for _, q := range []string{
		"CREATE ROLE app_all LOGIN PASSWORD 'pw'", "ALTER ROLE app_all SET log_statement = 'all'",
		"CREATE ROLE app_dur LOGIN PASSWORD 'pw'", "ALTER ROLE app_dur SET log_min_duration_statement = 0",
		"CREATE ROLE app_both LOGIN PASSWORD 'pw'", "ALTER ROLE app_both SET log_statement = 'all'", "ALTER ROLE app_both SET log_min_duration_statement = 0",
		"CREATE ROLE obsbench_system LOGIN PASSWORD 'pw'", "ALTER ROLE obsbench_system SET log_statement = 'all'",
		"CREATE DATABASE shop",
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	shop := servertest.Connect(ctx, t, pg.DSN("shop"))
	defer shop.Close(ctx)
	if _, err := shop.Exec(ctx, "CREATE TABLE items (id int, name text, note text); GRANT ALL ON items TO app_all, app_dur, app_both"); err != nil {
		t.Fatal(err)
	}
	return admin
}

// runPgSessions connects pgSessions, runs them in turns (calling before
// ahead of each turn, counted from 1), and disconnects them one at a
// time, each logged before the next; it returns when the logging
// collector has had time to write it all.
func runPgSessions(ctx context.Context, t *testing.T, pg *postgres.Instance, admin *pgx.Conn, before func(turn int) error) {
	t.Helper()
	conns := make([]*pgx.Conn, len(pgSessions))
	for i, s := range pgSessions {
		cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s password=pw dbname=shop sslmode=disable application_name=%s",
			pg.SocketDir(), pg.Port(), s.user, s.app))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = s.mode
		if conns[i], err = pgx.ConnectConfig(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	// File names have seconds: a rotation needs a new one.
	time.Sleep(1100 * time.Millisecond)
	turns := 0
	err := inTurns(pgSessions, func(i int, st step) error {
		turns++
		if err := before(turns); err != nil {
			return err
		}
		c := conns[i]
		name := st.sql
		if st.prepare != "" {
			if _, err := c.Prepare(ctx, st.prepare, st.sql); err != nil {
				return err
			}
			name = st.prepare
		}
		_, err := c.Exec(ctx, name, st.args...)
		if (err != nil) != st.fails {
			return fmt.Errorf("%s: err = %v; want failure %v", st.sql, err, st.fails)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		pid := c.PgConn().PID()
		c.Close(ctx)
		if err := waitGone(ctx, func() (bool, error) {
			var n int
			err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n)
			// The backend leaves pg_stat_activity before it logs its
			// disconnection; only once its process is gone has it
			// written that to every log destination, so that the next
			// one's cannot come between (each destination is a write of
			// its own to the collector's pipe).
			_, statErr := os.Stat(fmt.Sprintf("/proc/%d", pid))
			return n == 0 && errors.Is(statErr, fs.ErrNotExist), err
		}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second) // the collector writes asynchronously
}

// rotate makes PostgreSQL start a new log file and waits until it has.
func rotate(ctx context.Context, admin *pgx.Conn, dir string) error {
	before, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	if _, err := admin.Exec(ctx, "SELECT pg_rotate_logfile()"); err != nil {
		return err
	}
	return waitGone(ctx, func() (bool, error) {
		now, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
		return len(now) > len(before), nil
	})
}

// waitGone polls done for up to 10 s.
func waitGone(ctx context.Context, done func() (bool, error)) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ok, err := done()
		if err != nil || ok {
			return err
		}
	}
	return errors.New("timed out after 10s")
}

func generateMariaDB(t *testing.T) {
	ctx := context.Background()
	m := servertest.MariaDB(t, map[string]string{"general_log": "ON", "log_output": "FILE", "general_log_file": "general.log"})
	root := openMaria(t, "root:"+m.Password()+"@unix("+m.Socket()+")/")
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.items (id int, name text, note text)",
		"CREATE USER app@localhost IDENTIFIED BY 'pw'", "GRANT ALL ON shop.* TO app@localhost",
		"CREATE USER obsbench_system@localhost IDENTIFIED BY 'pw'", "GRANT SELECT ON shop.* TO obsbench_system@localhost",
	} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	root.Close()
	runMaria(t, m, mariaSessions)
	// A refused connection: the log shows a Connect that is no session.
	bad := openMaria(t, mariaDSN(m, "app:wrong"))
	if err := bad.PingContext(ctx); err == nil {
		t.Fatal("a wrong password was accepted")
	}
	bad.Close()
	if err := m.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	runMaria(t, m, mariaAfterRestart)
	copyFile(t, filepath.Join(m.DataDir(), "general.log"), filepath.Join("testdata", "mariadb-general.log"))
}

func mariaDSN(m *mariadb.Instance, userPassword string) string {
	return fmt.Sprintf("%s@unix(%s)/shop", userPassword, m.Socket())
}

func openMaria(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := servertest.Open(t, cfg)
	db.SetMaxOpenConns(1) // one session
	return db
}

// runMaria runs sessions in turns, each on its own connection, and closes
// them one at a time, each Quit logged before the next.
func runMaria(t *testing.T, m *mariadb.Instance, sessions []session) {
	ctx := context.Background()
	dbs := make([]*sql.DB, len(sessions))
	for i, s := range sessions {
		dbs[i] = openMaria(t, mariaDSN(m, s.user+":pw"))
		c, err := dbs[i].Conn(ctx) // connects now, in this order
		if err != nil {
			t.Fatal(err)
		}
		c.Close() // back to the pool of one, still connected
	}
	err := inTurns(sessions, func(i int, st step) error {
		_, err := dbs[i].ExecContext(ctx, st.sql, st.args...)
		if (err != nil) != st.fails {
			return fmt.Errorf("%s: err = %v; want failure %v", st.sql, err, st.fails)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	root := openMaria(t, "root:"+m.Password()+"@unix("+m.Socket()+")/")
	defer root.Close()
	for i, db := range dbs {
		db.Close()
		user, left := sessions[i].user, 0
		for _, s := range sessions[i+1:] {
			if s.user == user {
				left++
			}
		}
		if err := waitGone(ctx, func() (bool, error) {
			var n int
			err := root.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.PROCESSLIST WHERE USER = ?", user).Scan(&n)
			return n == left, err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes from %s", to, len(b), from)
}

// parseFiles captures the log files of source in testdata/, in order,
// with one Parser, and reads the capture back.
func parseFiles(t *testing.T, source string, f capture.Filter, files ...string) (capture.Header, []capture.Record, capture.Stats) {
	t.Helper()
	paths := make([]string, len(files))
	for i, name := range files {
		paths[i] = filepath.Join("testdata", name)
	}
	return parseLogs(t, func(w *capture.Writer) *capture.Parser {
		p, err := capture.NewParser(source, f, w)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}, paths)
}

// expect is what a capture of sessions, run in turns between their
// connects and their disconnects, must hold: one line per record.
func expect(sessions []session, keep func(session) bool, text func(step) (string, []*string)) []string {
	var out []string
	for _, s := range sessions {
		if keep(s) {
			out = append(out, s.label()+" connect u="+s.user+" d=shop")
		}
	}
	inTurns(sessions, func(i int, st step) error {
		if keep(sessions[i]) {
			sql, params := text(st)
			out = append(out, sessions[i].label()+" stmt "+strconv.Quote(sql)+showParams(params))
		}
		return nil
	})
	for _, s := range sessions {
		if keep(s) {
			out = append(out, s.label()+" disconnect")
		}
	}
	return out
}

// show is recs as expect writes them, each session named by label.
func show(recs []capture.Record, label func(capture.Record) string) []string {
	var out []string
	for _, r := range recs {
		l := label(r) + " " + string(r.Kind)
		switch r.Kind {
		case capture.Connect:
			l += " u=" + r.User + " d=" + r.Database
		case capture.Statement:
			l += " " + strconv.Quote(r.SQL) + showParams(r.Params)
		}
		out = append(out, l)
	}
	return out
}

func showParams(params []*string) string {
	if params == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(" [")
	for i, p := range params {
		if i > 0 {
			b.WriteString(", ")
		}
		if p == nil {
			b.WriteString("NULL")
		} else {
			b.WriteString(strconv.Quote(*p))
		}
	}
	b.WriteString("]")
	return b.String()
}

// diff fails t if got is not want, showing both.
func diff(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("capture:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// pgText is a step as PostgreSQL logs it: its text, and its parameters as
// text.
func pgText(st step) (string, []*string) {
	if st.args == nil {
		return st.sql, nil
	}
	params := make([]*string, len(st.args))
	for i, a := range st.args {
		switch a := a.(type) {
		case nil:
		case string:
			params[i] = &a
		case int:
			v := strconv.Itoa(a)
			params[i] = &v
		default:
			panic(fmt.Sprintf("argument %T", a))
		}
	}
	return st.sql, params
}

// Real PostgreSQL 15 logs, csvlog and jsonlog of the same sessions in two
// files (a rotation in the middle): every statement once, in order, with
// its parameters, whether log_statement, log_min_duration_statement or
// both logged it; failed statements too; the sampler's session excluded.
// The two formats give the same capture.
func TestRealPostgresLogs(t *testing.T) {
	web := func(s session) bool { return s.app == "web" }
	for _, tt := range []struct {
		name   string
		filter capture.Filter
		keep   func(session) bool
	}{
		{"exclude obsbench_system", capture.Filter{ExcludeUsers: []string{"obsbench_system", "postgres"}},
			func(s session) bool { return s.user != "obsbench_system" }},
		{"all", capture.Filter{Users: []string{"app_all", "app_dur", "app_both", "obsbench_system"}},
			func(session) bool { return true }},
		// A connect is kept by the application_name the client sent,
		// which the log's column does not show yet.
		{"application web", capture.Filter{Applications: []string{"web"}}, web},
		{"exclude application batch", capture.Filter{ExcludeApplications: []string{"batch", ""}, ExcludeUsers: []string{"obsbench_system"}},
			func(s session) bool { return s.app != "batch" && s.user != "obsbench_system" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := expect(pgSessions, tt.keep, pgText)
			var captures [][]capture.Record
			for _, source := range []string{"csvlog", "jsonlog"} {
				ext := map[string]string{"csvlog": "csv", "jsonlog": "json"}[source]
				h, recs, st := parseFiles(t, source, tt.filter, "postgresql-1."+ext, "postgresql-2."+ext)
				users := map[string]string{}
				for _, r := range recs {
					if r.Kind == capture.Connect {
						users[r.Session] = r.User
					}
				}
				byUser := map[string]session{}
				for _, s := range pgSessions {
					byUser[s.user] = s
				}
				got := show(recs, func(r capture.Record) string { return byUser[users[r.Session]].label() })
				diff(t, got, want)
				var stmts int64
				for _, l := range want {
					if strings.Contains(l, " stmt ") {
						stmts++
					}
				}
				if st.Statements != stmts || st.Sessions != int64(len(users)) || st.Connects != st.Sessions || st.Disconnects != st.Sessions {
					t.Errorf("%s: stats %+v; want %d statements of %d sessions, each connected and disconnected", source, st, stmts, len(users))
				}
				if len(recs) > 0 && (recs[0].Offset != 0 || !h.Start.Equal(time.Date(2026, 11, 22, 11, 44, 14, 685e6, time.UTC)) && tt.name != "application web") {
					t.Errorf("%s: start %v, first offset %d; want the first record's time, 0", source, h.Start, recs[0].Offset)
				}
				for i := 1; i < len(recs); i++ {
					if recs[i].Offset < recs[i-1].Offset {
						t.Errorf("%s: record %d at %d µs, before the one before it (%d µs)", source, i, recs[i].Offset, recs[i-1].Offset)
					}
				}
				captures = append(captures, recs)
			}
			if fmt.Sprint(noParams(captures[0])) != fmt.Sprint(noParams(captures[1])) || !paramsEqual(captures[0], captures[1]) {
				t.Errorf("csvlog and jsonlog captures differ:\n%+v\n%+v", captures[0], captures[1])
			}
		})
	}
}

// A real MariaDB 10.11 general log: statements (multi-line ones joined,
// prepared executions with the values the server put in), sessions by
// thread id, a refused login that is no session, and a restart after
// which thread ids begin again.
func TestRealMariaDBLog(t *testing.T) {
	_, recs, st := parseFiles(t, "general-log", capture.Filter{ExcludeUsers: []string{"root", "obsbench_system"}}, "mariadb-general.log")
	var keys []string
	label := map[string]string{}
	all := append(append([]session(nil), mariaSessions...), mariaAfterRestart...)
	apps := []session{}
	for _, s := range all {
		if s.user == "app" {
			apps = append(apps, s)
		}
	}
	for _, r := range recs {
		if _, ok := label[r.Session]; !ok && len(keys) < len(apps) {
			label[r.Session] = apps[len(keys)].label()
			keys = append(keys, r.Session)
		}
	}
	// Threads 6 and 7 before the restart; 4 and 5 after it, 5 having
	// been root's thread before. Thread 10's login was refused.
	if fmt.Sprint(keys) != "[6 7 4 5#2]" {
		t.Errorf("sessions %v; want [6 7 4 5#2]", keys)
	}
	mariaText := func(st step) (string, []*string) {
		if st.logged != "" {
			return st.logged, nil
		}
		return st.sql, nil
	}
	app := func(s session) bool { return s.user == "app" }
	want := append(expect(mariaSessions, app, mariaText), expect(mariaAfterRestart, app, mariaText)...)
	diff(t, show(recs, func(r capture.Record) string { return label[r.Session] }), want)
	if st.Sessions != 4 || st.Connects != 4 || st.Disconnects != 4 {
		t.Errorf("stats %+v; want 4 sessions, each connected and disconnected", st)
	}

	// Without a filter, the sampler's statement is there, and root's
	// sessions are.
	_, recs, _ = parseFiles(t, "general-log", capture.Filter{}, "mariadb-general.log")
	var found bool
	sessions := map[string]bool{}
	for _, r := range recs {
		found = found || r.SQL == "SHOW GLOBAL STATUS LIKE 'Questions'"
		sessions[r.Session] = true
	}
	if !found || len(sessions) != 8 {
		t.Errorf("unfiltered: sampler statement found %v, %d sessions; want true, 8 (root's 3, the sampler's, app's 4)", found, len(sessions))
	}
}
