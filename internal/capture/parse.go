package capture

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Sources are the logs a Parser reads.
var Sources = []string{"csvlog", "jsonlog", "general-log"}

// EngineOf is the engine whose log source is.
func EngineOf(source string) string {
	if source == "general-log" {
		return "mariadb"
	}
	return "postgres"
}

// Filter says which sessions' records a capture keeps; an empty list
// keeps all.
type Filter struct {
	Databases, Users, Applications []string
	ExcludeUsers, ExcludeApps      []string
	// Contains, if set, keeps only statements whose text holds it (a
	// workload's tag, where the log cannot tell its sessions apart).
	Contains string
}

func (f Filter) keeps(user, db, app string) bool {
	in := func(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }
	return in(f.Databases, db) && in(f.Users, user) && in(f.Applications, app) &&
		!slices.Contains(f.ExcludeUsers, user) && !slices.Contains(f.ExcludeApps, app)
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
// logs).
type Parser struct {
	source string
	filter Filter
	w      *Writer
	stats  Stats
	seen   map[string]bool // sessions with a record written
	// mariadb is the general log's state: each thread's session, and the
	// time of the latest line that had one.
	mariadb *generalLog
}

// NewParser makes a parser of source (csvlog, jsonlog, general-log)
// writing to w.
func NewParser(source string, f Filter, w *Writer) (*Parser, error) {
	if !slices.Contains(Sources, source) {
		return nil, fmt.Errorf("log source %q: want one of csvlog, jsonlog (PostgreSQL), general-log (MariaDB)", source)
	}
	return &Parser{source: source, filter: f, w: w, seen: map[string]bool{}, mariadb: newGeneralLog()}, nil
}

// Parse reads one log file; name is used in errors (name:line).
func (p *Parser) Parse(ctx context.Context, r io.Reader, name string) error {
	switch p.source {
	case "csvlog":
		return p.parseCSV(ctx, r, name)
	case "jsonlog":
		return p.parseJSON(ctx, r, name)
	default:
		return p.parseGeneral(ctx, r, name)
	}
}

// Stats are the counts so far.
func (p *Parser) Stats() Stats { return p.stats }

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
	if !p.seen[rec.Session] {
		p.seen[rec.Session] = true
		p.stats.Sessions++
	}
	return p.w.Write(rec, at)
}

// checkEvery is how many lines pass between checks of ctx.
const checkEvery = 4096
