package capture

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Sources are the logs a Parser reads.
var Sources = []string{"csvlog", "jsonlog", "stderr", "general-log"}

// PostgreSQLLog says source is one of PostgreSQL's log formats, whose
// lines are read with the server's log_line_prefix and lc_messages.
func PostgreSQLLog(source string) bool { return source != "general-log" }

// Filter says which sessions' records a capture keeps; an empty list
// keeps all.
type Filter struct {
	Databases, Users, Applications []string
	// ExcludeUsers drops users' sessions: obsbench's managed server runs
	// its samplers as obsbench_system, which a capture of a run excludes.
	ExcludeUsers, ExcludeApplications []string
	// Contains, if set, keeps only statements whose text holds it (a
	// workload's tag, where the log cannot tell its sessions apart).
	Contains string
}

func (f Filter) keeps(user, db, app string) bool {
	in := func(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }
	return in(f.Databases, db) && in(f.Users, user) && in(f.Applications, app) &&
		!slices.Contains(f.ExcludeUsers, user) && !slices.Contains(f.ExcludeApplications, app)
}

// Stats count what a Parser read and wrote.
type Stats struct {
	Lines       int64 // log lines (records, for csvlog) read
	Statements  int64
	Connects    int64
	Disconnects int64
	Sessions    int64 // sessions with a record in the capture
	Skipped     int64 // log entries that are not a client's statement, connect or disconnect, or that the filter drops
}

// Parser turns log files of one source, in the order the server wrote
// them, into one capture. Sessions may continue across files (rotated
// logs). Its memory is its buffers and one entry per open session, never
// the log.
type Parser struct {
	source string
	filter Filter
	w      *Writer
	stats  Stats
	open   map[string]struct{} // sessions with a record written and no disconnect
	clock  pgClock
	// mariadb is the general log's state: each thread's session, and the
	// time of the latest line that had one.
	mariadb *generalLog
	stderr  *stderrLog
	// msgs reads a PostgreSQL log written in another language than
	// English; nil for English.
	msgs *Messages
	// unknown are the first messages of client sessions the parser did
	// not recognize, for GuessLanguages.
	unknown []string
}

// maxUnknown is how many unrecognized messages a parser keeps.
const maxUnknown = 32

// Unrecognized are (up to 32 of) the LOG messages of client sessions
// that were not a statement, connection or disconnection. A log with no
// statement and such messages may be in another language than English.
func (p *Parser) Unrecognized() []string { return p.unknown }

// SetMessages makes the parser read a PostgreSQL log whose messages are
// in m's language (the server's lc_messages).
func (p *Parser) SetMessages(m *Messages) {
	p.msgs = m
	if p.stderr != nil {
		p.stderr.prefix.msgs = m
	}
}

// NewParser makes a parser of source (csvlog, jsonlog, stderr,
// general-log) writing to w. A stderr log's lines are read with
// DefaultPrefix: NewStderrParser reads them with another.
func NewParser(source string, f Filter, w *Writer) (*Parser, error) {
	if !slices.Contains(Sources, source) {
		return nil, fmt.Errorf("log source %q: want one of csvlog, jsonlog, stderr (PostgreSQL), general-log (MariaDB)", source)
	}
	if source == "stderr" {
		prefix, _ := ParsePrefix(DefaultPrefix)
		return NewStderrParser(prefix, f, w), nil
	}
	return &Parser{source: source, filter: f, w: w, open: map[string]struct{}{}, mariadb: newGeneralLog()}, nil
}

// Parse reads one log file; name is used in errors (name:line). Call it
// for each file of a log in the order the server wrote them.
func (p *Parser) Parse(ctx context.Context, r io.Reader, name string) error {
	switch p.source {
	case "csvlog":
		return p.parseCSV(ctx, r, name)
	case "jsonlog":
		return p.parseJSON(ctx, r, name)
	case "stderr":
		return p.parseStderr(ctx, r, name)
	default:
		return p.parseGeneral(ctx, r, name)
	}
}

// Stats are the counts so far.
func (p *Parser) Stats() Stats { return p.stats }

// Parse reads the log of source on src into w, keeping what f keeps;
// name is used in errors (name:line). It is NewParser and Parser.Parse
// for a log of one file: use a Parser for rotated files, whose sessions
// continue from one file into the next. Close w afterwards.
func Parse(ctx context.Context, src io.Reader, name, source string, f Filter, w *Writer) (Stats, error) {
	p, err := NewParser(source, f, w)
	if err != nil {
		return Stats{}, err
	}
	err = p.Parse(ctx, src, name)
	return p.Stats(), err
}

// emit writes rec at time at.
func (p *Parser) emit(rec Record, at time.Time) error {
	if rec.Kind == Statement && p.filter.Contains != "" && !strings.Contains(rec.SQL, p.filter.Contains) {
		p.stats.Skipped++
		return nil
	}
	switch rec.Kind {
	case Statement:
		p.stats.Statements++
	case Connect:
		p.stats.Connects++
	case Disconnect:
		p.stats.Disconnects++
	}
	if _, ok := p.open[rec.Session]; !ok {
		p.open[rec.Session] = struct{}{}
		p.stats.Sessions++
	}
	if rec.Kind == Disconnect {
		delete(p.open, rec.Session)
	}
	return p.w.Write(rec, at)
}

// checkEvery is how many lines pass between checks of ctx.
const checkEvery = 4096

// Sniff names the log source whose first line is line: csvlog, jsonlog,
// general-log, stderr (a line with a PostgreSQL severity, "LOG:  "), or
// "" if it is none of them.
func Sniff(line []byte) string {
	line = bytes.TrimRight(line, "\r\n")
	s := string(line)
	switch {
	case strings.HasPrefix(s, "{") && strings.Contains(s, `"timestamp":`):
		return "jsonlog"
	case len(s) > 24 && isDateTime(s[:19]) && s[19] == '.' && s[23] == ' ' && csvZone(s[24:]):
		// log_time first: "2026-11-22 10:00:00.123 UTC,"
		return "csvlog"
	case isGeneralHeader(s):
		return "general-log"
	}
	if _, ok := splitGeneralEntry(s); ok {
		return "general-log"
	}
	if hasSeverity(s) {
		return "stderr"
	}
	return ""
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
