package postgres

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
)

// A PostgreSQL stderr-format log entry is
//
//	PREFIX SEVERITY:  message
//	PREFIX DETAIL:  detail
//
// with log_line_prefix before every line of the entry (the message, then
// DETAIL, HINT, QUERY, CONTEXT, LOCATION, STATEMENT lines), and a tab
// after each newline inside a text (elog.c's append_with_tabs): a line
// that begins with a tab continues the line before it. The logging
// collector writes each entry whole; lines of other programs writing to
// the server's stderr have no prefix.

// stderrLog is the state of a stderr log's parse across files.
type stderrLog struct {
	prefix *Prefix
	vals   map[byte]string
	// pending is the entry whose lines may continue; field is the text
	// a continuation line adds to (nil: one the capture does not keep).
	pending *stderrEntry
	field   *strings.Builder
	// pids are each process id's current session, for a prefix with %p
	// and no %c; generation numbers a process id's sessions.
	pids       map[string]string
	generation map[string]int
	// who is each open session's user, database and application, from
	// its connection line, for a prefix without them.
	who map[string]stderrWho
}

type stderrEntry struct {
	e               pgEntry
	pid             string
	message, detail strings.Builder
	line            int
}

type stderrWho struct{ user, db, app string }

// newStderrLog is the state of a stderr log read with prefix.
func newStderrLog(prefix *Prefix) *stderrLog {
	return &stderrLog{prefix: prefix, vals: map[byte]string{}, pids: map[string]string{},
		generation: map[string]int{}, who: map[string]stderrWho{}}
}

func (l *LogReader) readStderr(ctx context.Context, p *capture.Parser, r io.Reader, name string) error {
	s := l.stderr
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), capture.MaxLine)
	line, matched, first := 0, 0, ""
	for sc.Scan() {
		line++
		if err := p.Line(ctx); err != nil {
			return err
		}
		text := sc.Text()
		if line == 1 {
			first = text
		}
		if strings.HasPrefix(text, "\t") {
			if s.pending != nil && s.field != nil {
				s.field.WriteByte('\n')
				s.field.WriteString(text[1:])
			}
			continue
		}
		sev, rest, ok := s.prefix.match(text, s.vals)
		if !ok {
			// Another program's output on the server's stderr: it ends
			// the entry before it.
			if err := l.flushStderr(p, name); err != nil {
				return err
			}
			p.Skip()
			continue
		}
		matched++
		sev = l.msgs.Severity(sev)
		if s.pending != nil && isDetailLine(sev) {
			s.field = nil
			if sev == "DETAIL" {
				s.pending.detail.WriteString(rest)
				s.field = &s.pending.detail
			}
			continue
		}
		if err := l.flushStderr(p, name); err != nil {
			return err
		}
		e, err := s.entry(sev, rest, l, name, line)
		if err != nil {
			return err
		}
		s.pending, s.field = e, &e.message
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, capture.LineError(err))
	}
	if err := l.flushStderr(p, name); err != nil {
		return err
	}
	if matched == 0 && line > 0 {
		return fmt.Errorf("%s:1: no line begins with log_line_prefix %q and a severity (\"LOG:  \"); the first is %q: give the server's log_line_prefix (%s, or %s to read it from the server)",
			name, s.prefix, abbreviate(first), capture.Flag(capture.LinePrefixOption), capture.Flag(capture.ServerOption))
	}
	return nil
}

// isDetailLine says whether a severity is a further line of the entry
// before it rather than an entry.
func isDetailLine(sev string) bool {
	switch sev {
	case "DETAIL", "HINT", "QUERY", "CONTEXT", "LOCATION", "STATEMENT":
		return true
	}
	return false
}

// entry starts an entry from a line's prefix values.
func (s *stderrLog) entry(sev, message string, l *LogReader, name string, line int) (*stderrEntry, error) {
	v := s.vals
	e := &stderrEntry{line: line, pid: v['p']}
	e.e.severity, e.e.typ = sev, v['b']
	e.e.user, e.e.db, e.e.app = known(v['u']), known(v['d']), known(v['a'])
	e.e.session = v['c']
	var err error
	switch {
	case v['m'] != "":
		e.e.time, err = l.clock.parse(v['m'])
	case v['n'] != "":
		e.e.time, err = parseEpoch(v['n'])
	case v['t'] != "":
		e.e.time, err = l.clock.parseSeconds(v['t'])
	}
	if err != nil {
		return nil, fmt.Errorf("%s:%d: log_line_prefix's time %w", name, line, err)
	}
	e.message.WriteString(message)
	return e, nil
}

// known is a prefix's value, "" for PostgreSQL's "[unknown]".
func known(v string) string {
	if v == "[unknown]" {
		return ""
	}
	return v
}

// flushStderr turns the pending entry into a record, if it is one.
func (l *LogReader) flushStderr(p *capture.Parser, name string) error {
	s := l.stderr
	pe := s.pending
	if pe == nil {
		return nil
	}
	s.pending, s.field = nil, nil
	e := pe.e
	e.message, e.detail = pe.message.String(), pe.detail.String()
	_, e.message, e.detail = l.msgs.English("", e.message, e.detail)
	connect := strings.HasPrefix(e.message, "connection authorized: ")
	switch {
	case e.session != "":
	case !s.prefix.has['p']:
		// No way to tell sessions apart: the statements are one
		// session's, and connects and disconnects are no one's.
		if connect || strings.HasPrefix(e.message, "disconnection: ") {
			p.Skip()
			return nil
		}
		e.session = "log"
		return l.entryAt(p, e, name, pe.line)
	default:
		key, ok := s.pids[pe.pid]
		begun := p.Began(key)
		_, known := s.who[key]
		// A connection line begins a session, unless it is the first
		// line of the process's session that has one.
		if !ok || connect && (begun || known) {
			s.generation[pe.pid]++
			key = pe.pid
			if n := s.generation[pe.pid]; n > 1 {
				key += "#" + strconv.Itoa(n)
			}
			s.pids[pe.pid] = key
		}
		e.session = key
	}
	if connect {
		w := stderrWho{user: e.user, db: e.db, app: e.app}
		if w.user == "" {
			w.user = connectField(e.message, "user")
		}
		if w.db == "" {
			w.db = connectField(e.message, "database")
		}
		if w.app == "" {
			w.app = connectApplication(e.message)
		}
		s.who[e.session] = w
		e.user, e.db, e.app = w.user, w.db, w.app
	} else if w, ok := s.who[e.session]; ok {
		e.user = cmp.Or(e.user, w.user)
		e.db = cmp.Or(e.db, w.db)
		e.app = cmp.Or(e.app, w.app)
	}
	if strings.HasPrefix(e.message, "disconnection: ") {
		delete(s.who, e.session)
		if s.pids[pe.pid] == e.session {
			delete(s.pids, pe.pid)
		}
	}
	return l.entryAt(p, e, name, pe.line)
}

// entryAt is entry for the entry at name:line, which its error names.
func (l *LogReader) entryAt(p *capture.Parser, e pgEntry, name string, line int) error {
	if err := l.entry(p, e); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line, err)
	}
	return nil
}

// connectField is a value in "connection authorized: user=U database=D
// application_name=A": up to the next space.
func connectField(msg, key string) string {
	_, v, ok := strings.Cut(msg, " "+key+"=")
	if !ok {
		return ""
	}
	if i := strings.IndexByte(v, ' '); i >= 0 {
		v = v[:i]
	}
	return v
}

// parseEpoch reads %n, "1732269600.123".
func parseEpoch(s string) (time.Time, error) {
	sec, ms, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if !ok || err != nil || len(ms) != 3 || !digits(ms) {
		return time.Time{}, fmt.Errorf("%q: want seconds since 1970 with milliseconds, e.g. 1732269600.123", s)
	}
	m, _ := strconv.Atoi(ms)
	return time.Unix(n, int64(m)*int64(time.Millisecond)).UTC(), nil
}
