package capture

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
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

// pgTimeLayout is log_time's format ("2026-11-22 10:00:00.123 UTC").
const pgTimeLayout = "2006-01-02 15:04:05.000 MST"

func (p *Parser) parseCSV(ctx context.Context, r io.Reader, name string) error {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<20))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return fmt.Errorf("%s: %w (want PostgreSQL csvlog)", name, err)
		}
		if p.stats.Lines++; p.stats.Lines%checkEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if len(rec) < csvMinColumns {
			return fmt.Errorf("%s:%d: %d columns; PostgreSQL csvlog has %d or more", name, line, len(rec), csvMinColumns)
		}
		at, err := time.Parse(pgTimeLayout, rec[csvTime])
		if err != nil {
			return fmt.Errorf("%s:%d: log_time %q: want e.g. 2026-11-22 10:00:00.123 UTC", name, line, rec[csvTime])
		}
		e := pgEntry{time: at, user: rec[csvUser], db: rec[csvDB], session: rec[csvSession], app: rec[csvApp],
			severity: rec[csvSeverity], message: rec[csvMessage], detail: rec[csvDetail]}
		if len(rec) > csvBackendType {
			e.typ = rec[csvBackendType]
		}
		if err := p.pgEntry(e); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
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

func (p *Parser) parseJSON(ctx context.Context, r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 256<<20) // a statement may be long
	line := 0
	for sc.Scan() {
		line++
		if p.stats.Lines++; p.stats.Lines%checkEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		var j pgJSON
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			return fmt.Errorf("%s:%d: %v (want PostgreSQL jsonlog, one object per line)", name, line, err)
		}
		at, err := time.Parse(pgTimeLayout, j.Timestamp)
		if err != nil {
			return fmt.Errorf("%s:%d: timestamp %q: want e.g. 2026-11-22 10:00:00.123 UTC", name, line, j.Timestamp)
		}
		e := pgEntry{time: at, user: j.User, db: j.DB, session: j.Session, app: j.App,
			severity: j.Severity, message: j.Message, detail: j.Detail, typ: j.BackendType}
		if err := p.pgEntry(e); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return nil
}

// statementMessage is a logged statement: log_statement's "statement: " or
// "execute NAME: " (a prepared statement, NAME/PORTAL with a portal), with
// log_min_duration_statement's "duration: X ms  " before it. A bare
// "duration: X ms" follows a statement log_statement already logged, and
// parse and bind steps are not executions: neither is a statement here.
var statementMessage = regexp.MustCompile(`^(?:duration: [0-9.]+ ms  )?(statement|execute [^:]*): `)

// pgEntry turns one entry into a record, if it is one.
func (p *Parser) pgEntry(e pgEntry) error {
	if e.severity != "LOG" || (e.typ != "" && e.typ != "client backend") || e.session == "" {
		p.stats.Skipped++
		return nil
	}
	if !p.filter.keeps(e.user, e.db, e.app) {
		p.stats.Skipped++
		return nil
	}
	rec := Record{Session: e.session}
	switch {
	case strings.HasPrefix(e.message, "connection authorized: "):
		rec.Kind, rec.User, rec.Database = Connect, e.user, e.db
	case strings.HasPrefix(e.message, "disconnection: "):
		rec.Kind = Disconnect
	default:
		m := statementMessage.FindStringSubmatchIndex(e.message)
		if m == nil {
			p.stats.Skipped++
			return nil
		}
		rec.Kind, rec.SQL = Statement, e.message[m[1]:]
		if strings.HasPrefix(e.message[m[2]:m[3]], "execute") {
			if d, ok := strings.CutPrefix(e.detail, "parameters: "); ok {
				params, err := parseParams(d)
				if err != nil {
					return err
				}
				rec.Params = params
			}
		}
	}
	return p.emit(rec, e.time)
}

// parseParams reads PostgreSQL's "$1 = '42', $2 = NULL" (quotes doubled
// inside a value; values may hold commas and newlines).
func parseParams(s string) ([]*string, error) {
	var out []*string
	for i := 1; s != ""; i++ {
		prefix := fmt.Sprintf("$%d = ", i)
		rest, ok := strings.CutPrefix(s, prefix)
		if !ok {
			return nil, fmt.Errorf("parameters: want %q at %q", prefix, abbreviate(s))
		}
		if after, ok := strings.CutPrefix(rest, "NULL"); ok {
			out, s = append(out, nil), after
		} else {
			if !strings.HasPrefix(rest, "'") {
				return nil, fmt.Errorf("parameters: $%d: want NULL or a quoted value at %q", i, abbreviate(rest))
			}
			var b strings.Builder
			j := 1
			for {
				k := strings.IndexByte(rest[j:], '\'')
				if k < 0 {
					return nil, fmt.Errorf("parameters: $%d: unterminated quoted value", i)
				}
				b.WriteString(rest[j : j+k])
				j += k + 1
				if j < len(rest) && rest[j] == '\'' { // '' is one quote
					b.WriteByte('\'')
					j++
					continue
				}
				break
			}
			v := b.String()
			out, s = append(out, &v), rest[j:]
		}
		if s == "" {
			break
		}
		var ok2 bool
		if s, ok2 = strings.CutPrefix(s, ", "); !ok2 {
			return nil, fmt.Errorf("parameters: want \", \" after $%d at %q", i, abbreviate(s))
		}
	}
	return out, nil
}

func abbreviate(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
