package capture_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
)

func ptr(s string) *string { return &s }

// readAll reads every record of a capture.
func readAll(t *testing.T, b []byte) (capture.Header, []capture.Record, capture.Trailer) {
	t.Helper()
	r, err := capture.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var recs []capture.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Header(), recs, r.Trailer()
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
}

// parse runs a parser of source over the given log texts, in order.
func parse(t *testing.T, source string, f capture.Filter, logs ...string) ([]capture.Record, capture.Stats) {
	t.Helper()
	var buf bytes.Buffer
	eng := "postgres"
	if source == "general-log" {
		eng = "mariadb"
	}
	w := capture.NewWriter(&buf, capture.Header{Engine: eng, Source: source})
	p, err := capture.NewParser(source, f, w)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range logs {
		if err := p.Parse(context.Background(), strings.NewReader(l), fmt.Sprintf("log%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, recs, tr := readAll(t, buf.Bytes())
	if tr.Statements != p.Stats().Statements || tr.Records != int64(len(recs)) {
		t.Errorf("trailer %+v; stats %+v, %d records", tr, p.Stats(), len(recs))
	}
	return recs, p.Stats()
}

// generalLog parses a MariaDB general log, unfiltered, and shows each
// record with show.
func generalLog(t *testing.T, log string, show func(capture.Record) string) []string {
	t.Helper()
	recs, _ := parse(t, "general-log", capture.Filter{}, log)
	var out []string
	for _, r := range recs {
		out = append(out, show(r))
	}
	return out
}

// csvLine is one PostgreSQL 15 csvlog record.
func csvLine(at, user, db, session, severity, message, detail, app string) string {
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	return strings.Join([]string{at + " UTC", user, db, "123", "[local]", session, "1", "SELECT", "2026-11-22 10:00:00 UTC", "3/4", "0",
		severity, "00000", q(message), q(detail), "", "", "", "", "", "", "", q(app), "client backend", "", "0"}, ",") + "\n"
}

// The PostgreSQL csvlog forms of a statement all become one record: simple
// query, execute with parameters (NULL, quotes, commas, newlines), the
// duration forms; bare durations, parse and bind are not statements, and
// other processes' and filtered sessions' lines are skipped. A session may
// continue into the next (rotated) file.
func TestParseCSVLog(t *testing.T) {
	a := csvLine("2026-11-22 10:00:00.000", "app", "shop", "s1", "LOG", "connection authorized: user=app database=shop application_name=web", "", "web") +
		csvLine("2026-11-22 10:00:00.100", "app", "shop", "s1", "LOG", "statement: SELECT 1;\nSELECT 2", "", "web") +
		csvLine("2026-11-22 10:00:00.150", "app", "shop", "s1", "LOG", "duration: 0.050 ms", "", "web") +
		csvLine("2026-11-22 10:00:00.200", "app", "shop", "s1", "LOG", "execute stmt_1: SELECT $1, $2, $3", "parameters: $1 = 'it''s, a\nb', $2 = NULL, $3 = '42'", "web") +
		csvLine("2026-11-22 10:00:00.250", "app", "shop", "s1", "LOG", "duration: 0.010 ms  parse stmt_2: SELECT 3", "", "web") +
		csvLine("2026-11-22 10:00:00.300", "app", "shop", "s2", "LOG", "duration: 1.5 ms  statement: SELECT 'other'", "", "web") +
		csvLine("2026-11-22 10:00:00.350", "obsbench_system", "shop", "s3", "LOG", "statement: SELECT count(*) FROM pg_stat_activity", "", "obsbench") +
		csvLine("2026-11-22 10:00:00.400", "app", "shop", "s1", "ERROR", "relation \"x\" does not exist", "", "web")
	b := csvLine("2026-11-22 10:00:01.000", "app", "shop", "s1", "LOG", "duration: 2.0 ms  execute stmt_1/portal: SELECT $1, $2, $3", "parameters: $1 = '', $2 = '-1', $3 = NULL", "web") +
		csvLine("2026-11-22 10:00:01.100", "app", "shop", "s1", "LOG", "disconnection: session time: 0:00:01.100 user=app database=shop host=[local]", "", "web")
	recs, st := parse(t, "csvlog", capture.Filter{ExcludeUsers: []string{"obsbench_system"}}, a, b)
	want := []capture.Record{
		{Session: "s1", Offset: 0, Kind: capture.Connect, User: "app", Database: "shop"},
		{Session: "s1", Offset: 100_000, Kind: capture.Statement, SQL: "SELECT 1;\nSELECT 2"},
		{Session: "s1", Offset: 200_000, Kind: capture.Statement, SQL: "SELECT $1, $2, $3", Params: []*string{ptr("it's, a\nb"), nil, ptr("42")}},
		{Session: "s2", Offset: 300_000, Kind: capture.Statement, SQL: "SELECT 'other'"},
		{Session: "s1", Offset: 1_000_000, Kind: capture.Statement, SQL: "SELECT $1, $2, $3", Params: []*string{ptr(""), ptr("-1"), nil}},
		{Session: "s1", Offset: 1_100_000, Kind: capture.Disconnect},
	}
	if fmt.Sprint(noParams(recs)) != fmt.Sprint(noParams(want)) || !paramsEqual(recs, want) {
		t.Errorf("records:\n%+v\nwant:\n%+v", recs, want)
	}
	if st.Statements != 4 || st.Sessions != 2 || st.Skipped != 4 || st.Lines != 10 {
		t.Errorf("stats %+v; want 4 statements, 2 sessions, 4 skipped of 10 lines", st)
	}
}

// noParams is recs without their parameters (pointers, which print as
// addresses).
func noParams(recs []capture.Record) []capture.Record {
	out := append([]capture.Record(nil), recs...)
	for i := range out {
		out[i].Params = nil
	}
	return out
}

func paramsEqual(a, b []capture.Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i].Params) != len(b[i].Params) {
			return false
		}
		for k := range a[i].Params {
			x, y := a[i].Params[k], b[i].Params[k]
			if (x == nil) != (y == nil) || (x != nil && *x != *y) {
				return false
			}
		}
	}
	return true
}

// jsonlog carries the same entries as JSON objects.
func TestParseJSONLog(t *testing.T) {
	log := `{"timestamp":"2026-11-22 10:00:00.000 UTC","user":"app","dbname":"shop","session_id":"s1","error_severity":"LOG","message":"statement: SELECT 1","application_name":"web","backend_type":"client backend"}
{"timestamp":"2026-11-22 10:00:00.500 UTC","user":"app","dbname":"shop","session_id":"s1","error_severity":"LOG","message":"execute <unnamed>: SELECT $1","detail":"parameters: $1 = '7'","application_name":"web","backend_type":"client backend"}
{"timestamp":"2026-11-22 10:00:00.600 UTC","dbname":"","session_id":"s9","error_severity":"LOG","message":"automatic vacuum of table","backend_type":"autovacuum worker"}
`
	recs, _ := parse(t, "jsonlog", capture.Filter{Applications: []string{"web"}}, log)
	if len(recs) != 2 || recs[1].SQL != "SELECT $1" || len(recs[1].Params) != 1 || *recs[1].Params[0] != "7" || recs[1].Offset != 500_000 {
		t.Errorf("records %+v; want the two statements of s1", recs)
	}
}

// Bad input names the file and line and what would be valid.
func TestParseErrors(t *testing.T) {
	ok := csvLine("2026-11-22 10:00:00.000", "u", "d", "s", "LOG", "statement: SELECT 1", "", "")
	for _, tt := range []struct{ source, log, want string }{
		{"csvlog", "a,b,c\n", "log0:1: 3 columns; PostgreSQL csvlog has 23 or more"},
		{"csvlog", ok + ok + "x,\"y\"z\n", `log0:3:5: extraneous or missing " in quoted-field (want PostgreSQL csvlog, log_destination=csvlog)`},
		{"csvlog", ok + `2026-11-22 10:00:00.000 UTC,"unterminated` + "\n", "log0:2:"},
		{"csvlog", csvLine("22/11/2026", "u", "d", "s", "LOG", "statement: SELECT 1", "", ""), `log0:1: log_time "22/11/2026 UTC": want e.g. 2026-11-22 10:00:00.123 UTC`},
		{"csvlog", csvLine("2026-11-22 10:00:00.000", "u", "d", "s", "LOG", "execute x: SELECT $1", "parameters: $1 = 7", ""), "log0:1: parameters: $1: want NULL or a quoted value at \"7\""},
		{"csvlog", csvLine("2026-11-22 10:00:00.000", "u", "d", "s", "LOG", "execute x: SELECT $1", "parameters: $1 = 'x", ""), "log0:1: parameters: $1: unterminated quoted value"},
		{"csvlog", csvLine("2026-11-22 10:00:00.000", "u", "d", "s", "LOG", "execute x: SELECT $1", "parameters: $2 = '1'", ""), `log0:1: parameters: want "$1 = " at "$2 = '1'"`},
		{"jsonlog", "{\"timestamp\": 3}\n", "log0:1: json: cannot unmarshal number"},
		{"jsonlog", "{\"timestamp\":\"2026-11-22 10:00:00.000 UTC\"}\nnot json\n", "log0:2: invalid character 'o' in literal null (expecting 'u') (want PostgreSQL jsonlog, one object per line)"},
		{"jsonlog", "{\"timestamp\":\"yesterday\"}\n", `log0:1: timestamp "yesterday": want e.g. 2026-11-22 10:00:00.123 UTC`},
		{"general-log", "261122 10:00:00\t     5 Query\tSELECT 1\n991399 99:99:99\t     5 Query\tSELECT 2\n", `log0:2: time "991399 99:99:99": want YYMMDD HH:MM:SS`},
		{"general-log", "2026-11-22 10:00:00 UTC [123] LOG:  statement: SELECT 1\n", `log0:1: no MariaDB general log entry in 1 lines: want lines like "261122 10:00:00\t     5 Query\tSELECT 1"`},
	} {
		w := capture.NewWriter(io.Discard, capture.Header{})
		_, err := capture.Parse(context.Background(), strings.NewReader(tt.log), "log0", tt.source, capture.Filter{}, w)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %q:\nerr  %v\nwant %s", tt.source, tt.log, err, tt.want)
		}
	}
	if _, err := capture.NewParser("syslog", capture.Filter{}, nil); err == nil || !strings.Contains(err.Error(), "want one of csvlog, jsonlog, stderr") {
		t.Errorf("NewParser(syslog) = %v", err)
	}
	// The context ends a long parse.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := capture.Parse(ctx, strings.NewReader(strings.Repeat(ok, 5000)), "log0", "csvlog", capture.Filter{}, capture.NewWriter(io.Discard, capture.Header{}))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("canceled parse: %v", err)
	}
}

// Every form of a PostgreSQL message: which are a statement's execution,
// and the statement's text.
func TestPostgresMessages(t *testing.T) {
	for _, tt := range []struct{ message, want string }{
		{"statement: SELECT 1", "SELECT 1"},
		{"statement: ", ""},
		{"execute <unnamed>: SELECT $1", "SELECT $1"},
		{"execute S_1/C_2: SELECT $1", "SELECT $1"},
		{"execute stmtcache_ce866b3d: INSERT INTO t VALUES ($1)", "INSERT INTO t VALUES ($1)"},
		{"duration: 0.774 ms  statement: SELECT count(*) FROM items", "SELECT count(*) FROM items"},
		{"duration: 12345.678 ms  execute <unnamed>: SELECT 'a: b'", "SELECT 'a: b'"},
		{"duration: 0.221 ms", "-"},
		{"duration: 0.268 ms  parse <unnamed>: SELECT $1", "-"},
		{"duration: 0.104 ms  bind <unnamed>: SELECT $1", "-"},
		{"execute fetch from S_1/C_2: SELECT $1", "-"},
		{"duration: 0.1 ms  execute fetch from S_1/C_2: SELECT $1", "-"},
		{"connection received: host=[local]", "-"},
		{"checkpoint starting: time", "-"},
		{"statement:SELECT 1", "-"},
	} {
		log := csvLine("2026-11-22 10:00:00.000", "u", "d", "s", "LOG", tt.message, "", "")
		recs, _ := parse(t, "csvlog", capture.Filter{}, log)
		got := "-"
		if len(recs) == 1 {
			got = recs[0].SQL
		}
		if got != tt.want {
			t.Errorf("%q: statement %q; want %q", tt.message, got, tt.want)
		}
	}
}

// Parameters as PostgreSQL logs them: quotes doubled, NULL, commas,
// newlines and "$2 = " inside values.
func TestPostgresParameters(t *testing.T) {
	for _, tt := range []struct {
		detail string
		want   []*string
	}{
		{"parameters: $1 = '42'", []*string{ptr("42")}},
		{"parameters: $1 = NULL", []*string{nil}},
		{"parameters: $1 = '', $2 = ''''", []*string{ptr(""), ptr("'")}},
		{"parameters: $1 = 'it''s, a\nb', $2 = NULL, $3 = 'x, $4 = ''y'''", []*string{ptr("it's, a\nb"), nil, ptr("x, $4 = 'y'")}},
		{"parameters: $1 = 'héllo ✓', $2 = '2026-01-01 00:00:00+00'", []*string{ptr("héllo ✓"), ptr("2026-01-01 00:00:00+00")}},
		{"prepare: PREPARE p AS SELECT 1", nil}, // a detail of another kind
	} {
		log := csvLine("2026-11-22 10:00:00.000", "u", "d", "s", "LOG", "execute p: SELECT 1", tt.detail, "")
		recs, _ := parse(t, "csvlog", capture.Filter{}, log)
		if len(recs) != 1 || !paramsEqual(recs, []capture.Record{{Params: tt.want}}) {
			t.Errorf("%q: %+v; want %s", tt.detail, recs, showParams(tt.want))
		}
	}
}

// Log times: the milliseconds, zones with a number applied, named ones as
// UTC, and a second's change.
func TestPostgresTimes(t *testing.T) {
	times := []string{
		"2026-11-22 10:00:00.000 UTC",
		"2026-11-22 10:00:00.250 UTC",
		"2026-11-22 10:00:01.005 UTC",
		"2026-11-22 15:30:01.005 +0530", // 10:00:01.005 UTC
		"2026-11-22 07:00:02.000 -03",   // 10:00:02 UTC
		"2026-11-22 10:00:03.000 CET",   // named: as UTC
		"2026-11-22 10:00:03.999 CET",
	}
	var log string
	for i, at := range times {
		msg := fmt.Sprintf("statement: SELECT %d", i)
		log += strings.Replace(csvLine("X", "u", "d", "s", "LOG", msg, "", ""), "X UTC", at, 1)
	}
	recs, _ := parse(t, "csvlog", capture.Filter{}, log)
	var got []int64
	for _, r := range recs {
		got = append(got, r.Offset/1000)
	}
	if want := "[0 250 1005 1005 2000 3000 3999]"; fmt.Sprint(got) != want {
		t.Errorf("offsets (ms) %v; want %s", got, want)
	}
}

// A MariaDB general log: time only on the first line of a second,
// multi-line statements (a line that begins like a header is part of
// them), prepared executions with their values, commands skipped (one
// this parser does not know among them), a refused login, a FLUSH LOGS
// header, and thread ids reused after restarts.
func TestParseGeneralLog(t *testing.T) {
	header := "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:\n" +
		"Tcp port: 0  Unix socket: /tmp/x/mariadbd.sock\n" +
		"Time\t\t    Id Command\tArgument\n"
	log := header +
		"251122  9:59:59\t     5 Connect\tapp@localhost on shop using Socket\n" +
		"\t\t     5 Query\tSELECT 1\n" +
		"251122 10:00:00\t     5 Prepare\tSELECT ? /* q */\n" +
		"\t\t     5 Execute\tSELECT 42 /* q */\n" +
		"\t\t     6 Connect\tobsbench_system@localhost on shop using Socket\n" +
		"\t\t     6 Query\tSHOW GLOBAL STATUS\n" +
		"\t\t     5 Query\tSELECT a,\n  b\nTime FROM t\n" +
		"\t\t     5 Bulk_execute\tINSERT INTO t VALUES (?)\n" +
		"\t\t     5 Some Future_command\t\n" +
		"\t\t     5 Close stmt\t\n" +
		"\t\t     7 Connect\tapp@localhost on shop using Socket\n" +
		"\t\t     5 Query\tSELECT 2\n" +
		"\t\t     7 Connect\tAccess denied for user 'app'@'localhost' (using password: YES)\n" +
		"\t\t     5 Quit\t\n" +
		header + // FLUSH LOGS
		"251122 10:00:02\t1234567 Connect\tproxy@10.0.0.1 as app on  using TCP/IP\n" +
		"\t\t1234567 Init DB\tshop`s\n" +
		header + // a restart: thread ids begin again
		"251122 10:00:03\t     5 Connect\tapp@localhost on shop using Socket\n" +
		"\t\t     6 Query\tSELECT 'open before the log began'\n" +
		"\t\t     5 Quit\t\n" +
		header + // and again
		"251122 10:00:04\t     5 Connect\tapp@localhost on shop using Socket\n"
	recs, st := parse(t, "general-log", capture.Filter{ExcludeUsers: []string{"obsbench_system"}}, log)
	want := []capture.Record{
		{Session: "5", Offset: 0, Kind: capture.Connect, User: "app", Database: "shop"},
		{Session: "5", Offset: 0, Kind: capture.Statement, SQL: "SELECT 1"},
		{Session: "5", Offset: 1_000_000, Kind: capture.Statement, SQL: "SELECT 42 /* q */"},
		{Session: "5", Offset: 1_000_000, Kind: capture.Statement, SQL: "SELECT a,\n  b\nTime FROM t"},
		{Session: "5", Offset: 1_000_000, Kind: capture.Statement, SQL: "SELECT 2"},
		{Session: "5", Offset: 1_000_000, Kind: capture.Disconnect},
		{Session: "1234567", Offset: 3_000_000, Kind: capture.Connect, User: "proxy"},
		{Session: "1234567", Offset: 3_000_000, Kind: capture.Statement, SQL: "USE `shop``s`"},
		{Session: "5#2", Offset: 4_000_000, Kind: capture.Connect, User: "app", Database: "shop"},
		// Thread 6 was the sampler's in the first lifetime: this is another.
		{Session: "6#2", Offset: 4_000_000, Kind: capture.Statement, SQL: "SELECT 'open before the log began'"},
		{Session: "5#2", Offset: 4_000_000, Kind: capture.Disconnect},
		{Session: "5#3", Offset: 5_000_000, Kind: capture.Connect, User: "app", Database: "shop"},
	}
	if fmt.Sprint(recs) != fmt.Sprint(want) {
		t.Errorf("records:\n%+v\nwant:\n%+v", recs, want)
	}
	if st.Sessions != 5 || st.Statements != 6 || st.Connects != 4 || st.Disconnects != 2 {
		t.Errorf("stats %+v; want 5 sessions, 6 statements, 4 connects, 2 disconnects", st)
	}
}

// A login attempt holds back what follows it until its thread logs again
// or a refusal comes, and no longer than two seconds of log time.
// A log that begins within a second (opened again mid-second) has
// entries without a time before its first dated line: they take that
// time, in order, rather than the zero time (which made every later
// offset some 2,000 years).
func TestGeneralLogUndatedStart(t *testing.T) {
	log := "\t\t     7 Query\tSELECT 'undated 1'\n" +
		"\t\t     7 Query\tSELECT 'undated 2'\n" +
		"261122 10:00:05\t     7 Query\tSELECT 'dated'\n" +
		"261122 10:00:07\t     7 Query\tSELECT 'two seconds on'\n"
	got := generalLog(t, log, func(r capture.Record) string { return fmt.Sprintf("%s@%d", r.SQL, r.Offset) })
	want := []string{"SELECT 'undated 1'@0", "SELECT 'undated 2'@0", "SELECT 'dated'@0", "SELECT 'two seconds on'@2000000"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("records = %v; want %v", got, want)
	}
}

func TestGeneralLogHoldsLoginAttempts(t *testing.T) {
	log := "261122 10:00:00\t     8 Connect\tapp@localhost on shop using Socket\n" +
		"\t\t     9 Query\tSELECT 'other thread'\n" +
		"261122 10:00:01\t     9 Query\tSELECT 'still within the hold'\n" +
		"261122 10:00:03\t     9 Query\tSELECT 'after it: the attempt counts as a login'\n" +
		"\t\t     8 Connect\tAccess denied for user 'app'@'localhost' (using password: YES)\n" +
		"\t\t    10 Connect\tapp@localhost on shop using Socket\n"
	got := generalLog(t, log, func(r capture.Record) string { return r.Session + " " + string(r.Kind) })
	// Thread 10's attempt ends the file: a login, since a refusal would
	// have been on the next line.
	if want := "[8 connect 9 stmt 9 stmt 9 stmt 10 connect]"; fmt.Sprint(got) != want {
		t.Errorf("records %v; want %s", got, want)
	}
}

// Sniff tells the three logs apart by their first line.
func TestSniff(t *testing.T) {
	for _, tt := range []struct{ line, want string }{
		{csvLine("2026-11-22 10:00:00.000", "u", "d", "s", "LOG", "statement: SELECT 1", "", ""), "csvlog"},
		{`{"timestamp":"2026-11-22 11:44:14.413 UTC","pid":30429}`, "jsonlog"},
		{"/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:\n", "general-log"},
		{"261122 11:44:25\t     5 Connect\troot@localhost on  using Socket", "general-log"},
		{"\t\t     5 Query\tSELECT 1", "general-log"},
		{"2026-11-22 10:00:00.000 UTC [123] LOG:  statement: SELECT 1", "stderr"},
		{"2026-11-22 10:00:00.000 UTC [123] LOG:  statement: SELECT 1, 2", "stderr"},
		{"2026-11-22 10:00:00.000 UTC [123] app@shop ERROR:  relation \"x\" does not exist", "stderr"},
		{"LOG:  database system is ready to accept connections", "stderr"}, // log_line_prefix = ''
		{"2026-11-22 10:00:00.000 UTC [123] LOGGED:  x", ""},
		{"just some text: with a colon", ""},
		{"", ""},
	} {
		if got := capture.Sniff([]byte(tt.line)); got != tt.want {
			t.Errorf("Sniff(%q) = %q; want %q", tt.line, got, tt.want)
		}
	}
}

// A reader refuses what is not a capture, a newer version, and a file cut
// short before its trailer.
func TestReaderRefuses(t *testing.T) {
	var buf bytes.Buffer
	w := capture.NewWriter(&buf, capture.Header{Engine: "postgres", Source: "csvlog"})
	for i := range 1000 {
		w.Write(capture.Record{Session: "s", Kind: capture.Statement, SQL: fmt.Sprintf("SELECT %d", i)}, time.Unix(0, 0))
	}
	w.Close()
	h, recs, tr := readAll(t, buf.Bytes())
	if h.Format != capture.Format || h.Version != capture.Version || len(recs) != 1000 || tr.Statements != 1000 || tr.Sessions != 1 {
		t.Fatalf("header %+v, %d records, trailer %+v", h, len(recs), tr)
	}

	// Cut short: decompress, drop the trailer line, compress again.
	zr, _ := gzip.NewReader(bytes.NewReader(buf.Bytes()))
	plain, _ := io.ReadAll(zr)
	lines := strings.SplitAfter(strings.TrimSuffix(string(plain), "\n"), "\n")
	var cut bytes.Buffer
	zw := gzip.NewWriter(&cut)
	zw.Write([]byte(strings.Join(lines[:len(lines)-1], "")))
	zw.Close()
	r, err := capture.NewReader(bytes.NewReader(cut.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = r.Next()
	}
	if !errors.Is(err, capture.ErrTruncated) {
		t.Errorf("a capture without trailer: %v; want ErrTruncated", err)
	}

	// Cut short in the compressed stream.
	r, err = capture.NewReader(bytes.NewReader(buf.Bytes()[:buf.Len()/2]))
	for err == nil {
		_, err = r.Next()
	}
	if !errors.Is(err, capture.ErrTruncated) {
		t.Errorf("a capture cut in half: %v; want ErrTruncated", err)
	}

	// A trailer that does not count the records is damage.
	var bad bytes.Buffer
	zw = gzip.NewWriter(&bad)
	zw.Write([]byte(lines[0] + lines[1] + `{"end":true,"records":2,"statements":2,"sessions":1}` + "\n"))
	zw.Close()
	r, err = capture.NewReader(&bad)
	for err == nil {
		_, err = r.Next()
	}
	if err == io.EOF || !strings.Contains(err.Error(), "capture line 3: the trailer counts 2 records, the file holds 1") {
		t.Errorf("a trailer counting 2 of 1 records: %v", err)
	}

	for _, tt := range []struct{ first, want string }{
		{`{"format":"other","version":1}`, `format "other"`},
		{`{"format":"obsbench-capture","version":99}`, "capture version 99: this obsbench reads versions 1 to 1"},
	} {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(tt.first + "\n"))
		zw.Close()
		if _, err := capture.NewReader(&b); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("header %s: %v; want %q", tt.first, err, tt.want)
		}
	}
	if _, err := capture.NewReader(strings.NewReader("plain text")); err == nil || !strings.Contains(err.Error(), "not gzip") {
		t.Errorf("plain text: %v", err)
	}
}

// Records come back as they were written, whatever their text holds; the
// writer's JSON is what encoding/json reads, and makes of invalid UTF-8
// what encoding/json makes of it.
func TestRecordsRoundTrip(t *testing.T) {
	texts := []string{
		"", "SELECT 1", `"quoted" \ back\slash`, "tab\tnewline\nreturn\r", "\x00\x01\x1f\x7f",
		"héllo ✓ 日本", "line\u2028separator\u2029", "invalid \xff\xfe utf-8 \xc3", "</script>&",
	}
	var buf bytes.Buffer
	w := capture.NewWriter(&buf, capture.Header{Engine: "postgres", Source: "csvlog", Dataset: "credit"})
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var want []capture.Record
	for i, s := range texts {
		rec := capture.Record{Session: s + "#1", Kind: capture.Statement, SQL: s, Params: []*string{ptr(s), nil}, User: s, Database: s}
		if err := w.Write(rec, start.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		var valid string
		b, _ := json.Marshal(s)
		json.Unmarshal(b, &valid)
		want = append(want, capture.Record{Session: valid + "#1", Offset: int64(i) * 1000, Kind: capture.Statement, SQL: valid,
			Params: []*string{ptr(valid), nil}, User: valid, Database: valid})
	}
	w.Write(capture.Record{Session: "x", Kind: capture.Disconnect}, start.Add(-time.Second))
	want = append(want, capture.Record{Session: "x", Offset: -1_000_000, Kind: capture.Disconnect})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(capture.Record{Session: "late"}, start); err == nil {
		t.Error("Write after Close succeeded")
	}
	h, recs, tr := readAll(t, buf.Bytes())
	if fmt.Sprint(noParams(recs)) != fmt.Sprint(noParams(want)) || !paramsEqual(recs, want) {
		t.Errorf("records:\n%+v\nwant:\n%+v", recs, want)
	}
	if !h.Start.Equal(start) || h.Dataset != "credit" || h.Created.IsZero() || h.Created.Nanosecond() != 0 {
		t.Errorf("header %+v; want start %v, dataset credit, created in whole seconds", h, start)
	}
	if tr != (capture.Trailer{End: true, Records: int64(len(want)), Statements: int64(len(texts)), Sessions: int64(len(want))}) {
		t.Errorf("trailer %+v", tr)
	}

	// No records: a header and a trailer still.
	buf.Reset()
	w = capture.NewWriter(&buf, capture.Header{Engine: "mariadb", Source: "general-log"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if h, recs, tr := readAll(t, buf.Bytes()); h.Engine != "mariadb" || len(recs) != 0 || !tr.End {
		t.Errorf("empty capture: header %+v, %d records, trailer %+v", h, len(recs), tr)
	}
}
