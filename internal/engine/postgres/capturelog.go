package postgres

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
)

// pgEntry is what a capture needs of one PostgreSQL log entry.
type pgEntry struct {
	time                           time.Time
	user, db, session, app         string
	severity, message, detail, typ string // typ: backend_type, "" if the log has none
}

// PostgreSQL's csvlog columns (PostgreSQL 13: 23 columns; 14 and later add
// backend_type, leader_pid and query_id).
const (
	csvTime, csvUser, csvDB, csvSession = 0, 1, 2, 5
	csvSeverity, csvMessage, csvDetail  = 11, 13, 14
	csvApp, csvBackendType              = 22, 23
	csvMinColumns                       = 23
)

func (l *LogReader) readCSV(ctx context.Context, p *capture.Parser, r io.Reader, name string) error {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<20))
	cr.FieldsPerRecord = -1 // 23 or 26 columns, checked below
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("%s:%d:%d: %w (want PostgreSQL csvlog, log_destination=csvlog)", name, pe.Line, pe.Column, pe.Err)
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if err := p.Line(ctx); err != nil {
			return err
		}
		if len(rec) < csvMinColumns {
			return fmt.Errorf("%s:%d: %d columns; PostgreSQL csvlog has %d or more", name, line, len(rec), csvMinColumns)
		}
		at, err := l.clock.parse(rec[csvTime])
		if err != nil {
			return fmt.Errorf("%s:%d: log_time %w", name, line, err)
		}
		e := pgEntry{time: at, user: rec[csvUser], db: rec[csvDB], session: rec[csvSession], app: rec[csvApp],
			severity: rec[csvSeverity], message: rec[csvMessage], detail: rec[csvDetail]}
		if len(rec) > csvBackendType {
			e.typ = rec[csvBackendType]
		}
		e.severity, e.message, e.detail = l.msgs.English(e.severity, e.message, e.detail)
		if err := l.entryAt(p, e, name, line); err != nil {
			return err
		}
	}
}

// pgJSON is a jsonlog line's fields a capture reads.
type pgJSON struct {
	Timestamp   string `json:"timestamp"`
	User        string `json:"user"`
	DB          string `json:"dbname"`
	Session     string `json:"session_id"`
	Severity    string `json:"error_severity"`
	Message     string `json:"message"`
	Detail      string `json:"detail"`
	App         string `json:"application_name"`
	BackendType string `json:"backend_type"`
}

func (l *LogReader) readJSON(ctx context.Context, p *capture.Parser, r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), capture.MaxLine)
	line := 0
	for sc.Scan() {
		line++
		if err := p.Line(ctx); err != nil {
			return err
		}
		var j pgJSON
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			return fmt.Errorf("%s:%d: %v (want PostgreSQL jsonlog, one object per line)", name, line, err)
		}
		at, err := l.clock.parse(j.Timestamp)
		if err != nil {
			return fmt.Errorf("%s:%d: timestamp %w", name, line, err)
		}
		e := pgEntry{time: at, user: j.User, db: j.DB, session: j.Session, app: j.App,
			severity: j.Severity, message: j.Message, detail: j.Detail, typ: j.BackendType}
		e.severity, e.message, e.detail = l.msgs.English(e.severity, e.message, e.detail)
		if err := l.entryAt(p, e, name, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, capture.LineError(err))
	}
	return nil
}

// entry turns one entry into a record, if it is one.
func (l *LogReader) entry(p *capture.Parser, e pgEntry) error {
	if e.severity != "LOG" || (e.typ != "" && e.typ != "client backend") || e.session == "" {
		p.Skip()
		return nil
	}
	rec := capture.Record{Session: e.session}
	switch {
	case strings.HasPrefix(e.message, "connection authorized: "):
		rec.Kind, rec.User, rec.Database = capture.Connect, e.user, e.db
		// application_name is set after this line is logged: the
		// message has the one the client sent.
		if e.app == "" {
			e.app = connectApplication(e.message)
		}
	case strings.HasPrefix(e.message, "disconnection: "):
		rec.Kind = capture.Disconnect
	default:
		sql, execute, ok := statementOf(e.message)
		if !ok {
			p.Skip()
			if len(l.unknown) < maxUnknown && !strings.HasPrefix(e.message, "duration: ") {
				l.unknown = append(l.unknown, e.message)
			}
			return nil
		}
		rec.Kind, rec.SQL = capture.Statement, sql
		if execute {
			if d, ok := strings.CutPrefix(e.detail, "parameters: "); ok {
				params, err := parseParams(d)
				if err != nil {
					return err
				}
				rec.Params = params
			}
		}
	}
	if !p.Keeps(e.user, e.db, e.app) {
		p.Skip()
		return nil
	}
	return p.Emit(rec, e.time)
}

// statementOf reads a message that logs a statement: log_statement's
// "statement: SQL" or "execute NAME: SQL" (a prepared statement,
// NAME/PORTAL with a portal), with log_min_duration_statement's
// "duration: X ms  " before them. It refuses what is no execution of a
// statement: a bare "duration: X ms" (it follows a statement
// log_statement already logged), the parse and bind steps, and "execute
// fetch from", a further fetch from a portal whose execution was logged.
func statementOf(msg string) (sql string, execute, ok bool) {
	rest := msg
	if r, ok := strings.CutPrefix(rest, "duration: "); ok {
		i := strings.Index(r, " ms  ")
		if i < 0 {
			return "", false, false
		}
		rest = r[i+len(" ms  "):]
	}
	if sql, ok := strings.CutPrefix(rest, "statement: "); ok {
		return sql, false, true
	}
	r, ok := strings.CutPrefix(rest, "execute ")
	if !ok || strings.HasPrefix(r, "fetch from ") {
		return "", false, false
	}
	i := strings.Index(r, ": ")
	if i < 0 {
		return "", false, false
	}
	return r[i+2:], true, true
}

// connectApplication is the application_name in a "connection authorized:
// user=U database=D application_name=A" message, before what PostgreSQL
// may add after it (SSL, GSS).
func connectApplication(msg string) string {
	_, app, ok := strings.Cut(msg, " application_name=")
	if !ok {
		return ""
	}
	for _, more := range []string{" SSL enabled (", " GSS (", " SSL enabled"} {
		if i := strings.Index(app, more); i >= 0 {
			app = app[:i]
		}
	}
	return app
}

// parseParams reads PostgreSQL's "$1 = '42', $2 = NULL" (quotes doubled
// inside a value; values may hold commas, quotes and newlines).
func parseParams(s string) ([]*string, error) {
	var out []*string
	for i := 1; ; i++ {
		n := strconv.Itoa(i)
		rest, ok := strings.CutPrefix(s, "$"+n+" = ")
		if !ok {
			return nil, fmt.Errorf("parameters: want \"$%s = \" at %q", n, abbreviate(s))
		}
		if after, ok := strings.CutPrefix(rest, "NULL"); ok {
			out, s = append(out, nil), after
		} else {
			if !strings.HasPrefix(rest, "'") {
				return nil, fmt.Errorf("parameters: $%s: want NULL or a quoted value at %q", n, abbreviate(rest))
			}
			v, after, err := unquote(rest)
			if err != nil {
				return nil, fmt.Errorf("parameters: $%s: %w", n, err)
			}
			out, s = append(out, &v), after
		}
		if s == "" {
			return out, nil
		}
		if s, ok = strings.CutPrefix(s, ", "); !ok {
			return nil, fmt.Errorf("parameters: want \", \" after $%s at %q", n, abbreviate(s))
		}
	}
}

// unquote reads the quoted value at the start of s (a doubled quote is one) and
// returns it and what follows.
func unquote(s string) (v, rest string, err error) {
	var b strings.Builder
	j := 1
	for {
		k := strings.IndexByte(s[j:], '\'')
		if k < 0 {
			return "", "", errors.New("unterminated quoted value")
		}
		if j+k+1 < len(s) && s[j+k+1] == '\'' { // '' is one quote
			b.WriteString(s[j : j+k+1])
			j += k + 2
			continue
		}
		if b.Len() == 0 {
			return s[j : j+k], s[j+k+1:], nil
		}
		b.WriteString(s[j : j+k])
		return b.String(), s[j+k+1:], nil
	}
}

func abbreviate(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// pgClock reads PostgreSQL's log times ("2026-11-22 10:00:00.123 UTC").
// The second changes far less often than the line, so the time of the
// latest second is kept and only its milliseconds are read.
type pgClock struct {
	second, zone string
	base         time.Time
}

// parse reads s. A numeric zone ("+0530", "-03") is applied; a named one
// other than UTC or GMT cannot be told apart from others of the same
// name, and counts as UTC: times are right relative to each other,
// except across a daylight-saving change (log_timezone=UTC avoids that).
func (c *pgClock) parse(s string) (time.Time, error) {
	if len(s) > 24 && s[19] == '.' && s[23] == ' ' && digits(s[20:23]) {
		ms := int(s[20]-'0')*100 + int(s[21]-'0')*10 + int(s[22]-'0')
		if base, ok := c.at(s[:19], s[24:]); ok {
			return base.Add(time.Duration(ms) * time.Millisecond), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want e.g. 2026-11-22 10:00:00.123 UTC", s)
}

// parseSeconds reads a time to the second ("2026-11-22 10:00:00 UTC",
// log_line_prefix's %t).
func (c *pgClock) parseSeconds(s string) (time.Time, error) {
	if len(s) > 20 && s[19] == ' ' {
		if base, ok := c.at(s[:19], s[20:]); ok {
			return base, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want e.g. 2026-11-22 10:00:00 UTC", s)
}

// at is the time of second ("2026-11-22 10:00:00") in zone.
func (c *pgClock) at(second, zone string) (time.Time, bool) {
	if second == c.second && zone == c.zone {
		return c.base, true
	}
	t, err := time.Parse("2006-01-02 15:04:05", second)
	if err != nil {
		return time.Time{}, false
	}
	off, ok := zoneOffset(zone)
	if !ok {
		return time.Time{}, false
	}
	c.second, c.zone = strings.Clone(second), strings.Clone(zone)
	c.base = t.Add(-off)
	return c.base, true
}

// zoneOffset is the offset from UTC of a zone as PostgreSQL prints it.
func zoneOffset(z string) (time.Duration, bool) {
	if z == "" {
		return 0, false
	}
	if z[0] != '+' && z[0] != '-' {
		for i := 0; i < len(z); i++ {
			if c := z[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
				return 0, false
			}
		}
		return 0, true
	}
	d := z[1:]
	if !digits(d) || (len(d) != 2 && len(d) != 4) {
		return 0, false
	}
	h, _ := strconv.Atoi(d[:2])
	m := 0
	if len(d) == 4 {
		m, _ = strconv.Atoi(d[2:])
	}
	off := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if z[0] == '-' {
		off = -off
	}
	return off, true
}

// csvZone says whether s begins with a zone and the comma that ends
// csvlog's first column.
func csvZone(s string) bool {
	k := strings.IndexByte(s, ',')
	return k > 0 && !strings.ContainsAny(s[:k], " \"")
}

// hasSeverity says whether a line holds a PostgreSQL severity as a stderr
// log writes it after log_line_prefix ("LOG:  ").
func hasSeverity(s string) bool {
	for i := 0; ; {
		k := strings.Index(s[i:], ":  ")
		if k < 0 {
			return false
		}
		end := i + k
		start := end
		for start > 0 && s[start-1] >= 'A' && s[start-1] <= 'Z' {
			start--
		}
		if (start == 0 || s[start-1] == ' ') && severities[s[start:end]] {
			return true
		}
		i = end + 1
	}
}

// severities are PostgreSQL's message severities and the names of an
// entry's further lines, in English (lc_messages = C).
var severities = map[string]bool{
	"DEBUG": true, "LOG": true, "INFO": true, "NOTICE": true, "WARNING": true, "ERROR": true, "FATAL": true, "PANIC": true,
	"DETAIL": true, "HINT": true, "QUERY": true, "CONTEXT": true, "LOCATION": true, "STATEMENT": true,
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
