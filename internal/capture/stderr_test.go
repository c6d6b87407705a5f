package capture_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/engine/postgres"
)

// parseStderr captures a stderr log read with prefix.
func parseStderr(t *testing.T, prefix string, f capture.Filter, log string) ([]capture.Record, capture.Stats, error) {
	t.Helper()
	p, err := postgres.ParsePrefix(prefix)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := capture.NewWriter(&buf, capture.Header{Engine: "postgres", Source: "stderr"})
	parser := capture.ReadWith(stderrReader(p), f, w)
	if err := parser.Parse(context.Background(), strings.NewReader(log), "pg.log"); err != nil {
		return nil, parser.Stats(), err
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, recs, _ := readAll(t, buf.Bytes())
	return recs, parser.Stats(), nil
}

// Lines as elog.c writes them: the prefix before each line of an entry,
// a tab after each newline in a text, %q ending the prefix of a process
// with no session, padding, log_error_verbosity = verbose's SQLSTATE and
// LOCATION, and lines of other programs, which are no entry's.
func TestParseStderrLog(t *testing.T) {
	const debian = "%m [%p] %q%u@%d "
	log := strings.Join([]string{
		"2026-11-22 10:00:00.000 UTC [10] LOG:  checkpoint starting: time",
		"2026-11-22 10:00:00.001 UTC [20] [unknown]@[unknown] LOG:  connection received: host=[local]",
		"2026-11-22 10:00:00.002 UTC [20] app@shop LOG:  connection authorized: user=app database=shop application_name=web",
		"2026-11-22 10:00:00.003 UTC [20] app@shop LOG:  statement: SELECT a,",
		"\t       b",
		"\t\tFROM t",
		"2026-11-22 10:00:00.004 UTC [20] app@shop LOG:  00000: execute S_1: INSERT INTO t VALUES ($1)",
		"2026-11-22 10:00:00.004 UTC [20] app@shop DETAIL:  parameters: $1 = 'two",
		"\tlines'",
		"2026-11-22 10:00:00.004 UTC [20] app@shop LOCATION:  exec_execute_message, postgres.c:2296",
		"some program's own output",
		"\tand its second line",
		"2026-11-22 10:00:00.005 UTC [20] app@shop ERROR:  relation \"x\" does not exist at character 15",
		"2026-11-22 10:00:00.005 UTC [20] app@shop STATEMENT:  SELECT * FROM x",
		"2026-11-22 10:00:00.006 UTC [20] app@shop LOG:  disconnection: session time: 0:00:00.010 user=app database=shop host=[local]",
		// The process id again, with no disconnection logged before it
		// begins another session.
		"2026-11-22 10:00:01.000 UTC [30] other@shop LOG:  statement: SELECT 3",
		"2026-11-22 10:00:01.001 UTC [30] other@shop LOG:  connection authorized: user=other database=shop",
		"2026-11-22 10:00:01.002 UTC [30] other@shop LOG:  statement: SELECT 4",
		"",
	}, "\n")
	recs, st, err := parseStderr(t, debian, capture.Filter{}, log)
	if err != nil {
		t.Fatal(err)
	}
	got := show(recs, func(r capture.Record) string { return r.Session })
	want := []string{
		`20 connect u=app d=shop`,
		`20 stmt "SELECT a,\n       b\n\tFROM t"`,
		`20 stmt "INSERT INTO t VALUES ($1)" ["two\nlines"]`,
		`20 disconnect`,
		`30 stmt "SELECT 3"`,
		`30#2 connect u=other d=shop`,
		`30#2 stmt "SELECT 4"`,
	}
	diff(t, got, want)
	if st.Skipped != 4 || st.Lines != 18 {
		t.Errorf("stats %+v; want 18 lines, 4 entries skipped (checkpoint, connection received, another program's, error)", st)
	}
	if recs[2].Offset != 2000 {
		t.Errorf("execute at %d µs; want 2000 (2 ms after the connection)", recs[2].Offset)
	}

	// The application comes from the connection line; the filter keeps
	// the session by it.
	recs, _, err = parseStderr(t, debian, capture.Filter{Applications: []string{"web"}}, log)
	if err != nil || len(recs) != 4 {
		t.Errorf("application web: %d records, %v; want the 4 of the web session", len(recs), err)
	}
}

// Each escape's value, padded or not, where PostgreSQL's manual says it
// is; what a prefix cannot tell; and a prefix no line matches.
func TestStderrPrefixes(t *testing.T) {
	for _, tt := range []struct {
		prefix, line string
		want         string // the record, as show writes it with its session
	}{
		{"%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
			"2026-11-22 10:00:00 UTC [42]: [3-1] user=u,db=d,app=my app,client=[local] LOG:  statement: SELECT 1",
			`42 stmt "SELECT 1"`},
		{"%n|%c|%-12u|%5p|%b|%x|%v|%e|%Q|%i|%r|%a|%s|%%|",
			"1795547675.003|6b05e219.4a8b|app_all     |19083|client backend|0|4/7|00000|0|idle|[local]|web|2026-11-24 19:14:33 UTC|%|LOG:  statement: SELECT 1",
			`6b05e219.4a8b stmt "SELECT 1"`},
		{"<%u%%%d> ", "<u%d> LOG:  statement: SELECT 2", `log stmt "SELECT 2"`},
		{"%m %z[%p] %", "2026-11-22 10:00:00.000 +0530 [7] LOG:  statement: SELECT 3", `7 stmt "SELECT 3"`},
		{"", "LOG:  statement: SELECT 4", `log stmt "SELECT 4"`},
		// A process with no session ends its prefix at %q; the values
		// of one that has no user yet are "[unknown]".
		{"%m [%p] %q%u@%d %a: ", "2026-11-22 10:00:00.000 UTC [7] LOG:  statement: SELECT 5", `7 stmt "SELECT 5"`},
		{"%m [%p] %q%u@%d %a: ", "2026-11-22 10:00:00.000 UTC [7] [unknown]@[unknown] [unknown]: LOG:  statement: SELECT 6", `7 stmt "SELECT 6"`},
		// %b: the statements of client backends only.
		{"%b %p ", "autovacuum worker 9 LOG:  statement: SELECT 7", ``},
	} {
		recs, _, err := parseStderr(t, tt.prefix, capture.Filter{}, tt.line+"\n")
		if err != nil {
			t.Errorf("%q: %v", tt.prefix, err)
			continue
		}
		if got := strings.Join(show(recs, func(r capture.Record) string { return r.Session }), "; "); got != tt.want {
			t.Errorf("%q on %q: %s; want %s", tt.prefix, tt.line, got, tt.want)
		}
	}

	if _, err := postgres.ParsePrefix("%m %u%d "); err == nil || !strings.Contains(err.Error(), "%u and %d with nothing between them cannot be told apart") {
		t.Errorf("%%u%%d: %v", err)
	}
	_, _, err := parseStderr(t, "%m [%p] ", capture.Filter{}, "2026-11-22 10:00:00 UTC [7] LOG:  x\n")
	if err == nil || !strings.Contains(err.Error(), `pg.log:1: no line begins with log_line_prefix "%m [%p] " and a severity`) {
		t.Errorf("a prefix no line matches: %v", err)
	}
	_, _, err = parseStderr(t, "%t ", capture.Filter{}, "2026-13-22 10:00:00 UTC LOG:  statement: SELECT 1\n")
	if err == nil || !strings.Contains(err.Error(), `pg.log:1: log_line_prefix's time "2026-13-22 10:00:00 UTC": want`) {
		t.Errorf("a bad time: %v", err)
	}

	for _, tt := range []struct {
		prefix string
		limits []string // a word of each limit, in order
	}{
		{"%m [%p] %q%u@%d ", []string{"process id", "application (%a)"}},
		{"%m %c %u %d %a ", nil},
		{"%t %c %u %d %a ", []string{"to the second"}},
		{"%u %d ", []string{"no session id", "no time", "application"}},
	} {
		p, err := postgres.ParsePrefix(tt.prefix)
		if err != nil {
			t.Fatal(err)
		}
		limits := p.Limits()
		ok := len(limits) == len(tt.limits)
		for i := 0; ok && i < len(limits); i++ {
			ok = strings.Contains(limits[i], tt.limits[i])
		}
		if !ok {
			t.Errorf("%q: limits %q; want %q", tt.prefix, limits, tt.limits)
		}
	}
}
