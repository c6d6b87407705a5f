package capture_test

import (
	"bytes"
	"compress/gzip"
	"context"
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
	w := capture.NewWriter(&buf, capture.Header{Engine: capture.EngineOf(source), Source: source})
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
	for _, tt := range []struct{ source, log, want string }{
		{"csvlog", "a,b,c\n", "log0:1: 3 columns; PostgreSQL csvlog has 23 or more"},
		{"csvlog", csvLine("22/11/2026", "u", "d", "s", "LOG", "statement: SELECT 1", "", ""), `log0:1: log_time "22/11/2026 UTC"`},
		{"csvlog", csvLine("2026-11-22 10:00:00.000", "u", "d", "s", "LOG", "execute x: SELECT $1", "parameters: $1 = 7", ""), "want NULL or a quoted value"},
		{"jsonlog", "{\"timestamp\": 3}\n", "log0:1: json: cannot unmarshal number"},
		{"general-log", "251122 10:00:00\t     5 Query\tSELECT 1\n991399 99:99:99\t     5 Query\tSELECT 2\n", "log0:2: time"},
	} {
		var buf bytes.Buffer
		w := capture.NewWriter(&buf, capture.Header{})
		p, _ := capture.NewParser(tt.source, capture.Filter{}, w)
		err := p.Parse(context.Background(), strings.NewReader(tt.log), "log0")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %q: err = %v; want %q", tt.source, tt.log, err, tt.want)
		}
	}
	if _, err := capture.NewParser("stderr", capture.Filter{}, nil); err == nil || !strings.Contains(err.Error(), "want one of csvlog, jsonlog") {
		t.Errorf("NewParser(stderr) = %v", err)
	}
}

// A MariaDB general log: time only on the first line of a second,
// multi-line statements, prepared executions with their values, a thread
// id reused by a new connection, and the lines the server writes when it
// opens the log.
func TestParseGeneralLog(t *testing.T) {
	log := "/usr/sbin/mariadbd, Version: 10.11.14-MariaDB-0+deb12u2-log (Debian 12). started with:\n" +
		"Tcp port: 0  Unix socket: /tmp/x/mariadbd.sock\n" +
		"Time\t\t    Id Command\tArgument\n" +
		"251122  9:59:59\t     5 Connect\tapp@localhost on shop using Socket\n" +
		"\t\t     5 Query\tSELECT 1\n" +
		"251122 10:00:00\t     5 Prepare\tSELECT ? /* q */\n" +
		"\t\t     5 Execute\tSELECT 42 /* q */\n" +
		"\t\t     6 Connect\tobsbench_system@localhost on shop using Socket\n" +
		"\t\t     6 Query\tSHOW GLOBAL STATUS\n" +
		"\t\t     5 Query\tSELECT a,\n  b\nFROM t\n" +
		"\t\t     5 Close stmt\t\n" +
		"\t\t     5 Quit\t\n" +
		"251122 10:00:02\t     5 Connect\tapp@localhost on  using TCP/IP\n" +
		"\t\t     5 Init DB\tshop\n"
	recs, st := parse(t, "general-log", capture.Filter{ExcludeUsers: []string{"obsbench_system"}}, log)
	want := []capture.Record{
		{Session: "5", Offset: 0, Kind: capture.Connect, User: "app", Database: "shop"},
		{Session: "5", Offset: 0, Kind: capture.Statement, SQL: "SELECT 1"},
		{Session: "5", Offset: 1_000_000, Kind: capture.Statement, SQL: "SELECT 42 /* q */"},
		{Session: "5", Offset: 1_000_000, Kind: capture.Statement, SQL: "SELECT a,\n  b\nFROM t"},
		{Session: "5", Offset: 1_000_000, Kind: capture.Disconnect},
		{Session: "5#2", Offset: 3_000_000, Kind: capture.Connect, User: "app"},
		{Session: "5#2", Offset: 3_000_000, Kind: capture.Statement, SQL: "USE `shop`"},
	}
	if fmt.Sprint(recs) != fmt.Sprint(want) {
		t.Errorf("records:\n%+v\nwant:\n%+v", recs, want)
	}
	if st.Sessions != 2 || st.Statements != 4 {
		t.Errorf("stats %+v; want 2 sessions, 4 statements", st)
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
