package capture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

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
// them, into one capture: its LogReader reads the entries (sessions may
// continue across rotated files), the Parser keeps the records the filter
// keeps, counts them and writes them. Its memory is its buffers and one
// entry per open session, never the log.
type Parser struct {
	reader LogReader
	filter Filter
	w      *Writer
	stats  Stats
	open   map[string]struct{} // sessions with a record written and no disconnect
}

// NewParser makes a parser of source (Sources) writing to w, which reads
// the log as its source does without options (Source.Open).
func NewParser(source string, f Filter, w *Writer) (*Parser, error) {
	s, ok := SourceNamed(source)
	if !ok {
		return nil, fmt.Errorf("log source %q: want one of %s", source, sourceList())
	}
	o, err := s.Open(context.Background(), ReadOptions{})
	if err != nil {
		return nil, err
	}
	return ReadWith(o.Reader, f, w), nil
}

// ReadWith makes a parser whose reader is r, writing to w.
func ReadWith(r LogReader, f Filter, w *Writer) *Parser {
	return &Parser{reader: r, filter: f, w: w, open: map[string]struct{}{}}
}

// Parse reads one log file; name is used in errors (name:line). Call it
// for each file of a log in the order the server wrote them.
func (p *Parser) Parse(ctx context.Context, r io.Reader, name string) error {
	return p.reader.Read(ctx, p, r, name)
}

// Reader is the parser's LogReader.
func (p *Parser) Reader() LogReader { return p.reader }

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

// MaxLine is the longest line a line-oriented log may have: a statement
// of 256 MiB is one nobody replays.
const MaxLine = 256 << 20

// LineError is a line scanner's err, said in a log's terms.
func LineError(err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("a line longer than %d MiB: %w", MaxLine>>20, err)
	}
	return err
}

// checkEvery is how many lines pass between checks of ctx.
const checkEvery = 4096

// Line counts a line (or record) a reader read, and every checkEvery
// lines says whether ctx is done.
func (p *Parser) Line(ctx context.Context) error {
	if p.stats.Lines++; p.stats.Lines%checkEvery == 0 {
		return ctx.Err()
	}
	return nil
}

// Skip counts a log entry that is no record the capture keeps.
func (p *Parser) Skip() { p.stats.Skipped++ }

// Keeps says whether the filter keeps a session of user on database db
// with application app.
func (p *Parser) Keeps(user, db, app string) bool { return p.filter.keeps(user, db, app) }

// Began says whether session has a record in the capture and no
// disconnect yet.
func (p *Parser) Began(session string) bool {
	_, ok := p.open[session]
	return ok
}

// Emit writes rec at time at, unless it is a statement the filter's
// Contains drops.
func (p *Parser) Emit(rec Record, at time.Time) error {
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
