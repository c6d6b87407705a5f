package capture

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// generalLog is the state of a MariaDB general log across files: each
// thread's current session, and the latest time written (the log prints
// the time only on the first line of each second).
type generalLog struct {
	now      time.Time
	sessions map[string]*mariaSession // by thread id
	started  map[string]int           // sessions started per thread id
	pending  *mariaEntry              // the entry whose argument may continue
}

type mariaSession struct {
	key, user, db string
	keep          bool
}

type mariaEntry struct {
	at      time.Time
	thread  string
	command string
	arg     strings.Builder
	line    int
}

func newGeneralLog() *generalLog {
	return &generalLog{sessions: map[string]*mariaSession{}, started: map[string]int{}}
}

// generalEntry is an entry's first line: "YYMMDD H:MM:SS" (only when the
// second changed), then the thread id, the command and its argument after
// a tab. A line that is none is the continuation of a multi-line
// argument, or one of the header lines the server writes when it opens
// the log.
var generalEntry = regexp.MustCompile(`^(\d{6}\s+\d{1,2}:\d{2}:\d{2})?\s+(\d+) ([A-Z][A-Za-z ]*?)\t(.*)$`)

// connectArg is a Connect's argument: "user@host on db using Socket".
var connectArg = regexp.MustCompile(`^(\S*)@\S* on (\S*)`)

func (p *Parser) parseGeneral(ctx context.Context, r io.Reader, name string) error {
	g := p.mariadb
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		if p.stats.Lines++; p.stats.Lines%checkEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		text := sc.Text()
		m := generalEntry.FindStringSubmatch(text)
		if m == nil {
			if g.pending != nil && !isGeneralHeader(text) {
				g.pending.arg.WriteString("\n")
				g.pending.arg.WriteString(text)
			}
			continue
		}
		if err := p.flushGeneral(name); err != nil {
			return err
		}
		if m[1] != "" {
			at, err := parseGeneralTime(m[1])
			if err != nil {
				return fmt.Errorf("%s:%d: %v", name, line, err)
			}
			g.now = at
		}
		e := &mariaEntry{at: g.now, thread: m[2], command: m[3], line: line}
		e.arg.WriteString(m[4])
		g.pending = e
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return p.flushGeneral(name)
}

// isGeneralHeader says whether line is one the server writes when it
// (re)opens the log.
func isGeneralHeader(line string) bool {
	return strings.HasSuffix(line, "started with:") || strings.HasPrefix(line, "Tcp port:") ||
		strings.HasPrefix(line, "Time\t") || strings.HasPrefix(line, "Time ")
}

// parseGeneralTime reads "251122 10:00:00" or "251122  9:00:00".
func parseGeneralTime(s string) (time.Time, error) {
	f := strings.Fields(s)
	hms := f[1]
	if len(hms) == 7 {
		hms = "0" + hms
	}
	t, err := time.Parse("060102 15:04:05", f[0]+" "+hms)
	if err != nil {
		return t, fmt.Errorf("time %q: want YYMMDD HH:MM:SS", s)
	}
	return t, nil
}

// flushGeneral turns the pending entry, now complete, into a record.
func (p *Parser) flushGeneral(name string) error {
	g := p.mariadb
	e := g.pending
	if e == nil {
		return nil
	}
	g.pending = nil
	arg := e.arg.String()
	sess := g.sessions[e.thread]
	if e.command == "Connect" || sess == nil {
		// A new session; a thread id the server reuses starts another.
		n := g.started[e.thread] + 1
		g.started[e.thread] = n
		key := e.thread
		if n > 1 {
			key += "#" + strconv.Itoa(n)
		}
		sess = &mariaSession{key: key}
		if m := connectArg.FindStringSubmatch(arg); e.command == "Connect" && m != nil {
			sess.user, sess.db = m[1], m[2]
		}
		sess.keep = p.filter.keeps(sess.user, sess.db, "")
		g.sessions[e.thread] = sess
	}
	if !sess.keep {
		p.stats.Skipped++
		if e.command == "Quit" {
			delete(g.sessions, e.thread)
		}
		return nil
	}
	rec := Record{Session: sess.key}
	switch e.command {
	case "Connect":
		rec.Kind, rec.User, rec.Database = Connect, sess.user, sess.db
	case "Quit":
		rec.Kind = Disconnect
		delete(g.sessions, e.thread)
	case "Query", "Execute":
		rec.Kind, rec.SQL = Statement, arg
	case "Init DB":
		rec.Kind, rec.SQL = Statement, "USE `"+strings.ReplaceAll(arg, "`", "``")+"`"
	default: // Prepare, Close stmt, Field List, Ping, ...
		p.stats.Skipped++
		return nil
	}
	if err := p.emit(rec, e.at); err != nil {
		return fmt.Errorf("%s:%d: %w", name, e.line, err)
	}
	return nil
}
